/**
 * The options of a host registry, of a scoped client, of `openAll` and of the life-cycle calls, as plain types every
 * face shares: each face says what a duration, a secret, a log level, a handler and an OAuth client are in its own
 * runtime. A config's own `timeoutMs` and `maxResultBytes`, and a call's `timeout`, win over these defaults.
 *
 * @since 0.1.0
 */
import type * as ResultFile from "./ResultFile.js"

/**
 * The defaults a host registry and a scoped client both take.
 *
 * @since 0.1.0
 * @category models
 */
export interface Defaults<Duration, Handlers> {
  /** The budget of a request whose config names no `timeoutMs` (default 30 s). */
  readonly requestTimeout?: Duration | undefined
  /** The budget of a `close`, a scoped client's when its scope ends (default 5 s). */
  readonly closeTimeout?: Duration | undefined
  /** The largest answer of a server whose config names no `maxResultBytes` (default 64 MiB). */
  readonly maxResultBytes?: number | undefined
  /**
   * Answers to the requests a server may send its client (elicitation, sampling, roots), run in the host's (or the
   * client's) thread. A worker's client declares a capability only when its handler is here; without one, servers
   * are not told it exists. A handler's failure, defect or timeout (the request budget) answers the server with a
   * JSON-RPC error; it never fails the worker.
   */
  readonly handlers?: Handlers | undefined
}

/**
 * The options of a host registry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Host<Duration, LogLevel, Handlers, OAuth> extends Defaults<Duration, Handlers> {
  /** The budget of an `open` whose config names no `timeoutMs` (default 30 s). */
  readonly openTimeout?: Duration | undefined
  /**
   * The level of the registry's routine log lines (a worker opened or closed, a remote thread went silent). Default
   * `Debug`: a library keeps out of the application's log. Failures are logged as warnings or errors regardless.
   */
  readonly logLevel?: LogLevel | undefined
  /**
   * The interactive OAuth client of the host (C34): for an HTTP server that asks for authorization and whose config
   * has no `auth`, the owner discovers, registers and exchanges codes for tokens itself, and asks this client only to
   * take the user through the authorization URL. Tokens and codes never leave the owner but as that one answer.
   */
  readonly oauth?: OAuth | undefined
  /**
   * Whether the host records its workers' metrics (C80): Effect `Metric`s of the implementation's runtime, which any
   * exporter of `@effect/opentelemetry` carries. Default `true`.
   */
  readonly metrics?: boolean | undefined
  /**
   * How often the host samples each server tree's memory and CPU time from `/proc` (C81; Linux only, elsewhere the
   * metrics are absent). Default 10 s; at least 1 s.
   */
  readonly treeSampleInterval?: Duration | undefined
}

/**
 * The options of a scoped client (`McpClient.make` and `withClient`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Client<Duration, Handlers, ToolFilter> extends Defaults<Duration, Handlers> {
  /** Budget for the server to start and complete `initialize`. Default: the config's `timeoutMs`, else 30 s. */
  readonly timeout?: Duration | undefined
  /**
   * Which of the server's tools the client offers, as `open`'s `tools` (C59): glob patterns to `allow` and to `deny`.
   * `listTools` shows only those; a `callTool` of any other is `InvalidInput`, never sent.
   */
  readonly tools?: ToolFilter | undefined
}

/**
 * What the references of a config document (`${env:NAME}`, `${input:ID}`, `${workspaceFolder}`…) are filled in from.
 *
 * @since 0.1.0
 * @category models
 */
export interface References<Secret> {
  /**
   * The caller's environment, only read. `openAll` defaults it to this thread's `process.env`; without one, every
   * `${env:…}` without a default is missing.
   */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined
  /** Values of VS Code inputs, by id; a declared input's `default` is used when it is not given. */
  readonly inputs?: Readonly<Record<string, Secret>> | undefined
  /** The editor's variables. `pathSeparator` defaults to `/`. */
  readonly variables?:
    | {
        readonly workspaceFolder?: string
        readonly workspaceFolderBasename?: string
        readonly userHome?: string
        readonly pathSeparator?: string
      }
    | undefined
}

/**
 * Options of `openAll` beyond its `References`: the options of each `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAll<OpenOptions> {
  /** The options of every entry's `open`. */
  readonly open?: OpenOptions | undefined
  /** Options of one entry's `open`, by its name in the document, merged over `open`. */
  readonly entries?: Readonly<Record<string, OpenOptions>> | undefined
  /** How many entries open at a time. Default: all at once. */
  readonly concurrency?: number | undefined
}

/**
 * The plain-data settings of a host's interactive OAuth client (C34), which the owner reads; each face adds the
 * functions that take the user through the authorization URL and keep tokens, in its own runtime.
 *
 * @since 0.1.0
 * @category models
 */
export interface OAuthSettings {
  /** Where the authorization server sends the user back; the client's registered redirect URI. */
  readonly redirectUrl: string
  /** The client's metadata for dynamic registration (RFC 7591), JSON plain data; `redirect_uris` defaults to `[redirectUrl]`. */
  readonly clientMetadata?: Readonly<Record<string, unknown>> | undefined
  /** An `https:` URL of a client ID metadata document, used as the client id where the authorization server supports it. */
  readonly clientMetadataUrl?: string | undefined
  /** A client registered beforehand: its id (and secret); nothing is registered then. */
  readonly clientInformation?:
    | { readonly client_id: string; readonly client_secret?: string | undefined; readonly [key: string]: unknown }
    | undefined
}

/**
 * Where a worker's owner runs: a thread of the host, or a child process of its own.
 *
 * @since 0.1.0
 * @category models
 */
export type Isolation = "thread" | "process"

/**
 * The `tools` option of `open`: glob patterns of the tool names the worker offers (`allow`, every tool when absent)
 * and of those it withholds (`deny`, applied after `allow`). Plain data: it travels with the open to the owner.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolFilter {
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
}

/**
 * Options of `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Open<Duration> {
  /** Budget for the thread to start and the server to complete `initialize`. Default as for requests. */
  readonly timeout?: Duration | undefined
  /**
   * Where the owner runs: a worker thread of the host (`"thread"`, the default), or a child process of its own
   * (`"process"`), whose crash or exhausted memory cannot take the host down.
   */
  readonly isolation?: Isolation | undefined
  /**
   * The owner's V8 heap limit in MB (`resourceLimits.maxOldGenerationSizeMb` of a thread, `--max-old-space-size` of
   * a process): an owner past it dies, and the worker becomes `failed`. A whole number from 16 to 65,536.
   */
  readonly maxOldGenerationSizeMb?: number | undefined
  /**
   * The worker's result policy for a `callTool` result over `maxResultBytes`: `{ spill: directory }` writes each such
   * result to a new file there and answers a `SpilledResult`; `"fail"` (the default) is `ResultTooLarge`. A call's
   * own `onTooLarge` comes first. Stdio workers only; the directory is checked here, before anything starts.
   */
  readonly onTooLarge?: ResultFile.TooLargePolicy | undefined
  /**
   * Which of the server's tools the worker offers: glob patterns (`*`, `?`) to `allow` (default: every tool) and to
   * `deny` (applied after `allow`). `listTools` shows only those, and a `callTool` of any other is `InvalidInput`,
   * never sent. Checked before anything starts (`ToolFilter.check`).
   */
  readonly tools?: ToolFilter | undefined
  /**
   * The worker's name in its host's metrics and view (1 to 64 characters); `openAll` gives each entry its own. Without
   * one, the name the server reports is used. Carried by an open in the host's process, a remote thread's and a cluster
   * runner's; a socket peer's open does not carry it yet.
   */
  readonly name?: string | undefined
}

/**
 * Options of `close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Close<Duration> {
  /** Budget for ending the connection and confirming cleanup. Default: 5 s. */
  readonly timeout?: Duration | undefined
}

/**
 * Options of `events`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Events {
  /**
   * How many notifications wait for this subscriber at most; past it the oldest is dropped (and counted in the
   * worker's `status().notifications.dropped`). A whole number from 1 to 65,536. Default: 256.
   */
  readonly capacity?: number | undefined
}

/**
 * The options of rendering a worker's tools as TypeScript declarations (`describe`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Rendering {
  /** The interface whose methods are the tools. Default: `Tools`. */
  readonly name?: string | undefined
  /** Wrap every declaration in `export declare namespace <namespace> { … }` (several servers in one file). */
  readonly namespace?: string | undefined
  /** A line for the header comment, such as the server's name. */
  readonly title?: string | undefined
}

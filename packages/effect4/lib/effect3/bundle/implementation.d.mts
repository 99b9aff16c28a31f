// The types of implementation.mjs, the Effect 3 implementation bundled by scripts/bundle.mjs: @mcp-worker/node's
// Promise host and Promise client, stated here without Effect so that this package compiles against Effect 4 alone.
// Results, statuses and errors are plain data; the face gives them their types.
import type * as Operations from "../../caller/Operations.js"

/** A budget: milliseconds, or a duration string such as "5 seconds". */
export type Timeout = number | string

/** The options every request takes at the boundary. */
export interface RequestOptions {
  readonly timeout?: Timeout | undefined
  readonly signal?: AbortSignal | undefined
  readonly onProgress?: ((progress: unknown) => void) | undefined
  readonly [option: string]: unknown
}

/** Every request of the operation table, by name: the worker id, its positional arguments, then its options. */
export type RequestName = keyof Operations.Requests

/** The options of `open`: a budget, and the rest as `McpWorkers.OpenOptions` has them. */
export interface OpenOptions {
  readonly timeout?: Timeout | undefined
  readonly [option: string]: unknown
}

/** One entry of an `openAll` or `closeAll` answer: `Opened`, `Closed`, or `Failed` with its tagged error. */
export interface EntryResult {
  readonly _tag: "Opened" | "Closed" | "Failed"
  readonly error?: unknown
  readonly [field: string]: unknown
}

/** What the Promise host and the Promise client both offer; they reject with tagged error objects. */
export type Surface = {
  readonly [K in RequestName]: (id: string, ...rest: ReadonlyArray<unknown>) => Promise<unknown>
} & {
  readonly open: (config: unknown, options?: OpenOptions) => Promise<string>
  readonly openAll: (
    document: unknown,
    options?: { readonly open?: OpenOptions | undefined; readonly [option: string]: unknown }
  ) => Promise<Readonly<Record<string, EntryResult>>>
  readonly closeAll: (
    workers: unknown,
    options?: { readonly timeout?: Timeout | undefined }
  ) => Promise<Readonly<Record<string, EntryResult>>>
  readonly describe: (id: string, options?: RequestOptions) => Promise<string>
  readonly tools: (
    id: string,
    options?: RequestOptions
  ) => Promise<{ readonly [method: string]: (args?: unknown, options?: RequestOptions) => Promise<unknown> }>
  readonly status: (id: string) => Promise<unknown>
  readonly cancel: (id: string, requestId: string) => Promise<void>
  readonly close: (id: string, options?: { readonly timeout?: Timeout | undefined }) => Promise<unknown>
  readonly events: (
    id: string,
    options?: { readonly capacity?: unknown }
  ) => AsyncIterableIterator<unknown> & AsyncDisposable
  readonly dispose: () => Promise<void>
}

/** A server request as a host handler gets it. */
export interface ServerRequest {
  readonly workerId: string
  readonly method: "elicitation/create" | "sampling/createMessage" | "roots/list"
  readonly params: unknown
}

export type Handler = (request: ServerRequest, options: { readonly signal: AbortSignal }) => Promise<unknown>

/** One log line of the host registry. */
export interface LogEntry {
  readonly level: "Trace" | "Debug" | "Info" | "Warning" | "Error" | "Fatal"
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
  readonly spans: Readonly<Record<string, number>>
  readonly date: Date
  readonly cause: string | undefined
}

export interface HostOptions {
  readonly requestTimeout?: Timeout | undefined
  readonly openTimeout?: Timeout | undefined
  readonly closeTimeout?: Timeout | undefined
  readonly maxResultBytes?: number | undefined
  readonly metrics?: boolean | undefined
  readonly treeSampleInterval?: Timeout | undefined
  readonly logLevel?: "All" | "Trace" | "Debug" | "Info" | "Warning" | "Error" | "Fatal" | "None" | undefined
  readonly handlers?:
    | {
        readonly elicitation?: Handler | undefined
        readonly sampling?: Handler | undefined
        readonly roots?: Handler | undefined
      }
    | undefined
  readonly oauth?:
    | {
        readonly redirectUrl: string
        readonly clientMetadata?: Readonly<Record<string, unknown>> | undefined
        readonly clientMetadataUrl?: string | undefined
        readonly clientInformation?: { readonly client_id: string; readonly [key: string]: unknown } | undefined
        readonly authorize: (
          request: { readonly workerId: string; readonly authorizationUrl: string },
          options: { readonly signal: AbortSignal }
        ) => Promise<string>
        readonly tokens?:
          ((serverUrl: string, options: { readonly signal: AbortSignal }) => Promise<unknown>) | undefined
        readonly saveTokens?:
          ((serverUrl: string, tokens: unknown, options: { readonly signal: AbortSignal }) => Promise<void>) | undefined
      }
    | undefined
  readonly log?: ((entry: LogEntry) => void) | undefined
}

/** @mcp-worker/node/PromiseHost makePromiseHost: the host registry in this thread. */
export declare const makePromiseHost: (options?: HostOptions) => Promise<Surface>

/** @mcp-worker/node/PromiseClient makePromiseClient: every operation from any thread of a process with a host. */
export declare const makePromiseClient: () => Surface

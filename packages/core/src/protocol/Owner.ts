/**
 * The owner side of one worker: it creates, uses and finally closes one MCP SDK `Client`, serves one request at a
 * time, and reports failures to its host. Platform independent: the transport (stdio process job, HTTP) is built by
 * the platform package and handed in (`TransportFactory`), and the host is whatever reads the owner's port.
 *
 * @since 0.1.0
 */
import type { Transport } from "@modelcontextprotocol/client"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as errors from "../internal/owner/errors.js"
import * as internal from "../internal/owner/owner.js"
import type { CleanupSummary, FailureKind, OpenFailed } from "../McpWorkerError.js"
import type { SavedResult } from "../Operations.js"
import type * as OwnerProtocol from "./OwnerProtocol.js"
import type * as ServerConfig from "../ServerConfig.js"

/**
 * A started connection's transport, as the platform built it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerTransport {
  readonly transport: Transport
  /** The server's root process id, or `null` (HTTP). */
  readonly pid: number | null
  /** Ends everything the connection started and counts what is left. Called after the client closed. */
  readonly stop: (budgetMs: number) => Effect.Effect<CleanupSummary>
  /**
   * Why the transport went away, when it did: exit code, signal, redacted stderr tail. Waits up to `waitMs` for a
   * server that is going away to finish exiting and writing, so that its last words are not lost.
   */
  readonly exitInfo: (waitMs: number) => Effect.Effect<ExitInfo>
  /**
   * The raw JSON-RPC response of the request that was just answered, when the transport kept it: its line and the
   * `result` member parsed from it (before any schema read it). Handed on as is, it spares serializing the parsed
   * result again, and it is the server's result unchanged.
   */
  readonly takeResponse?: () => { readonly line: string; readonly result: unknown } | undefined
  /**
   * Starts a `saveTo`: the response to the next request sent goes to `path` as it arrives (its result, raw), never
   * whole into memory; the request then answers with the save's summary. `Left` is why the file cannot be made.
   * Transports without it refuse `saveTo`.
   */
  readonly saveResponse?: (path: string) => Either.Either<ResponseSave, string>
  /**
   * Arms a spill (`onTooLarge`) for the response to the request in flight: a response past `maxResultBytes` is not
   * skipped but written, as `saveResponse` writes, to the new file `name` of `directory`, made only then. Transports
   * without it refuse a spill.
   */
  readonly spillResponse?: (directory: string, name: string) => ResponseSpill
  /** Classifies a transport-level error (e.g. an expired HTTP session), when the platform knows better. */
  readonly classify?: (error: unknown) => FailureKind | undefined
  /**
   * Every secret the transport holds, the config's and those it obtained since (access tokens): what never appears
   * in a message. Without it, the config's secrets.
   */
  readonly secrets?: () => ReadonlyArray<string>
  /** An authorization is waiting for the user (C34): an open that runs out of time then failed at `authorization`. */
  readonly waitingForUser?: () => boolean
  /**
   * The owner's own request `request` goes out next and is in flight until the returned release: until then the
   * server's messages are bounded by `ServerConfig.ownRequestBytesOf`, not `maxResultBytes`, and one past that bound
   * is reported naming `request` (C95). Without it, they are bounded as any answer.
   */
  readonly ownRequest?: (request: OwnRequest) => () => void
}

/**
 * A request the owner sends of its own accord (C95): the era probe, or the tool listing it reads for tasks.
 *
 * @since 0.1.0
 * @category models
 */
export type OwnRequest = errors.OwnRequest

/**
 * A pending `saveTo` of a transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResponseSave {
  /** The summary, once the result was written whole and moved into place. */
  readonly summary: () => SavedResult | undefined
  /** Gives the save up: nothing of it is left. Harmless once done. */
  readonly discard: () => void
}

/**
 * An armed spill of a transport: its summary once a response past the limit was written whole, else `undefined`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResponseSpill extends ResponseSave {
  /** The transport's `maxResultBytes`. */
  readonly limit: number
}

/**
 * Reported by a transport through `onerror` when a message from the server passed the config's `maxResultBytes`:
 * the transport skips the rest of it unread, and the owner fails the request in flight with `ResultTooLarge`.
 *
 * @since 0.1.0
 * @category models
 */
export const OversizedMessage: typeof errors.OversizedMessage = errors.OversizedMessage

/**
 * Reported by a transport through `onerror` when a request's response stream ended before its response (C54).
 *
 * @since 0.1.0
 * @category models
 */
export const StreamBroken: typeof errors.StreamBroken = errors.StreamBroken

/**
 * @since 0.1.0
 * @category models
 */
export type StreamBroken = errors.StreamBroken

/**
 * Reported by a transport through `onerror` when a message from the server passed the config's `maxResultBytes`.
 *
 * @since 0.1.0
 * @category models
 */
export type OversizedMessage = errors.OversizedMessage

/**
 * How a server process ended, as far as the transport knows.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitInfo {
  readonly exitCode?: number
  readonly signal?: string
  readonly stderrTail?: string
}

/**
 * Builds the transport for a config. Called once per owner.
 *
 * @since 0.1.0
 * @category models
 */
export type TransportFactory = (
  config: ServerConfig.ServerConfig,
  context: {
    readonly workerId: string
    readonly marker: string
    readonly onSpawned: (pid: number) => void
    /** The host's interactive OAuth client, when it has one (C34). */
    readonly oauth?: InteractiveOAuth | undefined
  }
) => Effect.Effect<OwnerTransport, OpenFailed>

/**
 * The host's interactive OAuth client as the owner sees it: its plain-data settings, and the one thing only the host
 * can do, taking the user through an authorization URL to the code its redirect brings back.
 *
 * @since 0.1.0
 * @category models
 */
export interface InteractiveOAuth {
  /** JSON text: `redirectUrl`, `clientMetadata`, `clientMetadataUrl?`, `clientInformation?`. */
  readonly settings: string
  /**
   * The authorization code and the redirect's `iss` if the host's client read it (RFC 9207), or a rejection when the
   * user's authorization did not come.
   */
  readonly authorize: (authorizationUrl: string) => Promise<{ readonly code: string; readonly iss: string | undefined }>
  /** The tokens the host's client keeps for this server (JSON plain data), if it keeps any. */
  readonly loadTokens: (serverUrl: string) => Promise<unknown>
  /** Hands newly obtained tokens to the host's client to keep; a failure to keep them is not the owner's. */
  readonly saveTokens: (serverUrl: string, tokens: unknown) => Promise<void>
}

/**
 * How the owner talks to its host on the data plane.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerPort {
  readonly post: (message: OwnerProtocol.OwnerMessageEncoded) => void
  /**
   * A host in the owner's own thread (`McpClient`) takes a request's raw result as a value: nothing crosses a
   * thread, so the result is neither written as text nor parsed again. Without it, a `Success` message is posted.
   */
  readonly postResult?: ((requestId: string, result: unknown) => void) | undefined
}

/**
 * The owner of one connection: the control-plane handlers and the data-plane message handler.
 *
 * @since 0.1.0
 * @category models
 */
export interface Owner {
  readonly open: (request: OwnerProtocol.Open) => Effect.Effect<OwnerProtocol.OpenInfo, OpenFailed>
  readonly close: (budgetMs: number) => Effect.Effect<CleanupSummary>
  /** Handles one raw data-plane message from the host. Never throws. */
  readonly onMessage: (raw: unknown) => void
}

/**
 * Creates the owner of one connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: { readonly port: OwnerPort; readonly factory: TransportFactory }) => Owner = internal.make

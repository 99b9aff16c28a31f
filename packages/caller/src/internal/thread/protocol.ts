/**
 * The thread plane's side of the protocol between a process's callers and its host (v1, over `BroadcastChannel`s
 * addressed by name): the channel names, the timings, and every message as a plain TypeScript type. The host reads
 * and writes the same messages through its Schemas; a type-level test proves each type here equal to the Schema's
 * encoded type, so the two sides cannot drift.
 *
 * @internal
 */
import type { Envelope, Spill, TraceContext } from "../envelope.js"
import type * as Operations from "../../Operations.js"

export type { Envelope, Spill, TraceContext }

const version = "v1"

/** Where callers send requests. @internal */
export const hostChannel = `mcp-worker/${version}/host`

/** Where hosts announce that they started or closed. @internal */
export const announceChannel = `mcp-worker/${version}/announce`

/** The reply channel of one caller. @internal */
export const replyChannel = (remoteId: string): string => `mcp-worker/${version}/reply/${remoteId}`

/** Where callers send requests straight to the owner thread of `workerId`. @internal */
export const ownerChannel = (workerId: string): string => `mcp-worker/${version}/owner/${workerId}`

/** A caller asks for an `Ack` with a request when it has not heard from a host for this long. @internal */
export const staleAfterMs = 1_500

/** How long a caller waits for an `Ack` before it reports `HostUnavailable` (C22: within 1 s). @internal */
export const ackWithinMs = 750

/**
 * A caller with calls in flight posts a `Ping` whenever it has posted nothing to the host for this long: the host goes
 * by what it receives from the caller, so what the caller hears from the host does not count.
 *
 * @internal
 */
export const pingEveryMs = 1_000

/** How long a caller with calls in flight waits for the `Ack` of a keep-alive `Ping` (a briefly blocked host). @internal */
export const pingAckWithinMs = 2_000

/** A host that hears nothing from a caller with calls in flight this long takes it for gone (C22). @internal */
export const remoteGoneAfterMs = 3 * pingEveryMs

/** A caller stops waiting on its own this long after a request's deadline, should no answer have come. @internal */
export const graceMs = 250

/** The MCP methods of the operation table. @internal */
export type Method = Operations.Method

/** One `notifications/progress` of a request. @internal */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/** `open`: the config normalized in the calling thread (C18), in its wire form. @internal */
export interface RemoteOpen {
  readonly _tag: "RemoteOpen"
  readonly config: string
  readonly deadline?: number | undefined
  readonly isolation?: "thread" | "process" | undefined
  readonly maxOldGenerationSizeMb?: number | undefined
  readonly spill?: string | undefined
  readonly tools?:
    | { readonly allow?: ReadonlyArray<string> | undefined; readonly deny?: ReadonlyArray<string> | undefined }
    | undefined
  readonly name?: string | undefined
}

/**
 * Any request of the operation table, its `Envelope` (`params` checked in the calling thread, C16) but for the trace,
 * which `RemoteRequest` carries for every operation; no `deadline`: the worker's default budget.
 *
 * @internal
 */
export interface RemoteCall extends Omit<Envelope, "deadline" | "trace"> {
  readonly _tag: "RemoteCall"
  readonly workerId: string
  readonly deadline?: number | undefined
  /** The caller reads `Result` replies: the owner thread may answer it itself. */
  readonly direct?: boolean | undefined
}

/** @internal */
export interface RemoteStatus {
  readonly _tag: "RemoteStatus"
  readonly workerId: string
}

/** @internal */
export interface RemoteCancel {
  readonly _tag: "RemoteCancel"
  readonly workerId: string
  readonly requestId: string
}

/** @internal */
export interface RemoteClose {
  readonly _tag: "RemoteClose"
  readonly workerId: string
  readonly deadline?: number | undefined
}

/** One pull of an `events` subscription; the first subscribes, `end` unsubscribes. @internal */
export interface RemoteEvents {
  readonly _tag: "RemoteEvents"
  readonly workerId: string
  readonly subscription: string
  readonly capacity: number
  readonly end?: boolean | undefined
}

/** @internal */
export type Operation = RemoteOpen | RemoteCall | RemoteStatus | RemoteCancel | RemoteClose | RemoteEvents

/** Caller → host: run `operation`; `ackBy` asks the host to confirm receipt by then, or refuse it unsent (C22a). @internal */
export interface RemoteRequest {
  readonly _tag: "RemoteRequest"
  readonly from: string
  readonly callId: number
  readonly ackBy?: number | undefined
  readonly operation: Operation
  readonly trace?: TraceContext | undefined
  /** The caller's thread id, when it takes its replies on a port (`ReplyPort`). */
  readonly thread?: number | undefined
}

/** Caller → host or owner: the caller of `callId` stopped waiting; with `reply`, it waits for the answer. @internal */
export interface Interrupt {
  readonly _tag: "Interrupt"
  readonly from: string
  readonly callId: number
  readonly reply: boolean
}

/** Caller → host (and the owners of its direct calls): "are you there?", and "I am still here". @internal */
export interface Ping {
  readonly _tag: "Ping"
  readonly from: string
}

/** @internal */
export type RemoteMessage = RemoteRequest | Interrupt | Ping

/**
 * Caller → owner thread: a request of the operation table, its `Envelope` but for `progress` (a call that reads progress
 * goes through the host, C29).
 *
 * @internal
 */
export interface Direct extends Omit<Envelope, "progress"> {
  readonly _tag: "Direct"
  readonly from: string
  readonly callId: number
  /** The caller's thread id, when it takes its replies on a port (`ReplyPort`). */
  readonly thread?: number | undefined
}

/** @internal */
export type OwnerChannelMessage = Direct | Interrupt | Ping

/** Host → caller: a host received the message that asked for it. @internal */
export interface Ack {
  readonly _tag: "Ack"
  readonly hostId: string
  readonly callId?: number | undefined
}

/** Host → caller: the operation's value. @internal */
export interface RemoteSuccess {
  readonly _tag: "RemoteSuccess"
  readonly callId: number
  readonly value: unknown
}

/** Owner thread → caller: a request's success as JSON text (with `envelope`, the server's whole response line). @internal */
export interface Result {
  readonly _tag: "Result"
  readonly callId: number
  readonly result: string
  readonly envelope: boolean
}

/** Host or owner → caller: a typed failure in its encoded form (`McpWorkerError.fromEncoded` reads it). @internal */
export interface RemoteFailure<E = unknown> {
  readonly _tag: "RemoteFailure"
  readonly callId: number
  readonly error: E
}

/** Host → caller: the host hit a defect while running the call. @internal */
export interface Defect {
  readonly _tag: "Defect"
  readonly callId: number
  readonly message: string
}

/** Host → caller: the server's progress on the request of `callId`. @internal */
export interface RemoteProgress {
  readonly _tag: "RemoteProgress"
  readonly callId: number
  readonly progress: Progress
}

/**
 * Host → caller: requests to `workerId` may go straight to its owner on `channel` (default budget `timeoutMs`);
 * `traced`: the host traces, so a request made outside any span still goes through it (C83).
 *
 * @internal
 */
export interface Route {
  readonly _tag: "Route"
  readonly workerId: string
  readonly channel: string
  readonly timeoutMs: number
  readonly traced?: boolean | undefined
}

/** Host → caller: the worker's owner thread has ended, and its channel with it (C22a). @internal */
export interface WorkerEnded<E = unknown> {
  readonly _tag: "WorkerEnded"
  readonly workerId: string
  readonly error: E
}

/** Host → caller: the route to `workerId` was dropped; relay requests again. @internal */
export interface Unrouted {
  readonly _tag: "Unrouted"
  readonly workerId: string
}

/**
 * Host or owner thread → the caller's thread (Node's `postMessageToThread`, as a `workerMessage`): the port on which
 * that party posts its replies to the caller `to` from now on, in place of the caller's reply channel. A message read
 * on a `BroadcastChannel` makes a thread load the `MessageEvent` class, which costs a fresh thread more than the rest
 * of its call; a port read with a listener of its own hands over the data alone.
 *
 * @internal
 */
export interface ReplyPort<Port = unknown> {
  readonly _tag: "ReplyPort"
  readonly to: string
  readonly port: Port
}

/** @internal */
export type Reply<E = unknown> =
  Ack | RemoteSuccess | Result | RemoteFailure<E> | Defect | RemoteProgress | Route | WorkerEnded<E> | Unrouted

/** Host → everyone: a host is serving (again); the newest `startedAt` serves. @internal */
export interface Up {
  readonly _tag: "Up"
  readonly hostId: string
  readonly startedAt: number
}

/** Host → everyone: a host closed; its workers are closed and their ids forgotten. @internal */
export interface Gone {
  readonly _tag: "Gone"
  readonly hostId: string
}

/** @internal */
export type Announcement = Up | Gone

/** What one pull of an `events` subscription is answered with. @internal */
export interface EventsBatch<A = unknown> {
  readonly items: ReadonlyArray<A>
  readonly done: boolean
}

/** A fresh random id for a caller or a subscription (base64url, 96 bits). @internal */
export const randomId = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(12))
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_")
}

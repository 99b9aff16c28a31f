// The thread plane's names, timings and messages as plain types; a test proves the host's Schemas equal.
import type { Envelope, Spill, TraceContext } from "../envelope.js"
import type * as Operations from "../../Operations.js"

export type { Envelope, Spill, TraceContext }

const version = "v1"

/** @internal */
export const hostChannel = `mcp-worker/${version}/host`

/** @internal */
export const announceChannel = `mcp-worker/${version}/announce`

/** @internal */
export const replyChannel = (remoteId: string): string => `mcp-worker/${version}/reply/${remoteId}`

/** @internal */
export const ownerChannel = (workerId: string): string => `mcp-worker/${version}/owner/${workerId}`

/** C22a: silence after which a request asks for an `Ack`. @internal */
export const staleAfterMs = 1_500

/** C22 @internal */
export const ackWithinMs = 750

/** The host judges a busy caller by what it hears, so the caller pings. @internal */
export const pingEveryMs = 1_000

/** A keep-alive's `Ack` may wait on a briefly blocked host. @internal */
export const pingAckWithinMs = 2_000

/** C22: three pings, so a short block of the caller's loop costs no calls. @internal */
export const remoteGoneAfterMs = 3 * pingEveryMs

/** After a deadline no one answered by. @internal */
export const graceMs = 250

/** @internal */
export type Method = Operations.Method

/** @internal */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/** @internal */
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

/** @internal */
export interface RemoteCall extends Omit<Envelope, "deadline" | "trace"> {
  readonly _tag: "RemoteCall"
  readonly workerId: string
  readonly deadline?: number | undefined
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

/** @internal */
export interface RemoteEvents {
  readonly _tag: "RemoteEvents"
  readonly workerId: string
  readonly subscription: string
  readonly capacity: number
  readonly end?: boolean | undefined
}

/** @internal */
export type Operation = RemoteOpen | RemoteCall | RemoteStatus | RemoteCancel | RemoteClose | RemoteEvents

/** @internal */
export interface RemoteRequest {
  readonly _tag: "RemoteRequest"
  readonly from: string
  readonly callId: number
  readonly ackBy?: number | undefined
  readonly operation: Operation
  readonly trace?: TraceContext | undefined
  readonly thread?: number | undefined
}

/** @internal */
export interface Interrupt {
  readonly _tag: "Interrupt"
  readonly from: string
  readonly callId: number
  readonly reply: boolean
}

/** @internal */
export interface Ping {
  readonly _tag: "Ping"
  readonly from: string
}

/** @internal */
export type RemoteMessage = RemoteRequest | Interrupt | Ping

/** @internal */
export interface Direct extends Omit<Envelope, "progress"> {
  readonly _tag: "Direct"
  readonly from: string
  readonly callId: number
  readonly thread?: number | undefined
}

/** @internal */
export type OwnerChannelMessage = Direct | Interrupt | Ping

/** @internal */
export interface Ack {
  readonly _tag: "Ack"
  readonly hostId: string
  readonly callId?: number | undefined
}

/** @internal */
export interface RemoteSuccess {
  readonly _tag: "RemoteSuccess"
  readonly callId: number
  readonly value: unknown
}

/** @internal */
export interface Result {
  readonly _tag: "Result"
  readonly callId: number
  readonly result: string
  readonly envelope: boolean
}

/** @internal */
export interface RemoteFailure<E = unknown> {
  readonly _tag: "RemoteFailure"
  readonly callId: number
  readonly error: E
}

/** @internal */
export interface Defect {
  readonly _tag: "Defect"
  readonly callId: number
  readonly message: string
}

/** @internal */
export interface RemoteProgress {
  readonly _tag: "RemoteProgress"
  readonly callId: number
  readonly progress: Progress
}

/** @internal */
export interface Route {
  readonly _tag: "Route"
  readonly workerId: string
  readonly channel: string
  readonly timeoutMs: number
  readonly traced?: boolean | undefined
}

/** @internal */
export interface WorkerEnded<E = unknown> {
  readonly _tag: "WorkerEnded"
  readonly workerId: string
  readonly error: E
}

/** @internal */
export interface Unrouted {
  readonly _tag: "Unrouted"
  readonly workerId: string
}

/** @internal */
export interface ReplyPort<Port = unknown> {
  readonly _tag: "ReplyPort"
  readonly to: string
  readonly port: Port
}

/** @internal */
export type Reply<E = unknown> =
  Ack | RemoteSuccess | Result | RemoteFailure<E> | Defect | RemoteProgress | Route | WorkerEnded<E> | Unrouted

/** @internal */
export interface Up {
  readonly _tag: "Up"
  readonly hostId: string
  readonly startedAt: number
}

/** @internal */
export interface Gone {
  readonly _tag: "Gone"
  readonly hostId: string
}

/** @internal */
export type Announcement = Up | Gone

/** @internal */
export interface EventsBatch<A = unknown> {
  readonly items: ReadonlyArray<A>
  readonly done: boolean
}

/** @internal */
export const randomId = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(12))
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_")
}

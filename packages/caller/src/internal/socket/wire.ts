/** The socket protocol's frames, caller side. @internal */
import type { Envelope } from "../envelope.js"

/** C110 @internal */
export const protocol = "mcp-worker"
/** @internal */
export const version = 1

/** @internal */
export const hello = JSON.stringify({ _tag: "Hello", protocol, version }) + "\n"
/** @internal */
export const ping = '{"_tag":"Ping"}\n'

/** C46: heard from within this, a request needs no `Ping` first. @internal */
export const staleAfterMs = 1_500
/** Past it, the request waiting on a `Ping` or `Hello` is not sent. @internal */
export const ackWithinMs = 750
/** @internal */
export const pingEveryMs = 1_000
/** C46 @internal */
export const silentAfterMs = 3_000
/** Below a listener's idle bound (≥ 2 s), so the caller closes first. @internal */
export const idleAfterMs = 1_000
/** As the listener's. @internal */
export const defaultMaxFrameBytes = 16 * 1024 * 1024

/** C84: the trace only when it carries more than ids. @internal */
export interface RequestPayload extends Omit<Envelope, "method" | "progress" | "deadline" | "spill"> {
  readonly id: string
  readonly deadline?: number | undefined
  readonly spill?: false | undefined
}

/** @internal */
export type FromHost =
  | { readonly _tag: "Welcome"; readonly protocol: string; readonly version: number }
  | {
      readonly _tag: "Rejected"
      readonly protocol: string
      readonly versions: ReadonlyArray<number>
      readonly reason: string
    }
  | { readonly _tag: "Pong" }
  | { readonly _tag: "Chunk"; readonly requestId: string; readonly values: ReadonlyArray<unknown> }
  | { readonly _tag: "Exit"; readonly requestId: string; readonly exit: ExitEncoded }
  | { readonly _tag: "Defect"; readonly defect: unknown }
  | { readonly _tag: "ClientEnd" }

/** As `effect/Schema`'s `Exit` encodes it. @internal */
export type ExitEncoded =
  { readonly _tag: "Success"; readonly value?: unknown } | { readonly _tag: "Failure"; readonly cause: CauseEncoded }

/** As `effect/Schema`'s `Cause` encodes it. @internal */
export type CauseEncoded =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Fail"; readonly error: unknown }
  | { readonly _tag: "Die"; readonly defect: unknown }
  | { readonly _tag: "Interrupt"; readonly fiberId: unknown }
  | { readonly _tag: "Sequential" | "Parallel"; readonly left: CauseEncoded; readonly right: CauseEncoded }

/** @internal */
export type Ending =
  | { readonly _tag: "Fail"; readonly error: unknown }
  | { readonly _tag: "Die"; readonly defect: unknown }
  | { readonly _tag: "Interrupt" }

const causes = (cause: CauseEncoded): Array<CauseEncoded> =>
  cause._tag === "Sequential" || cause._tag === "Parallel" ? [...causes(cause.left), ...causes(cause.right)] : [cause]

/** A failure wins, as `Cause.failureOption` reads it. @internal */
export const endingOf = (cause: CauseEncoded): Ending => {
  const all = causes(cause)
  const fail = all.find((one) => one._tag === "Fail")
  if (fail !== undefined) return { _tag: "Fail", error: (fail as { error: unknown }).error }
  const die = all.find((one) => one._tag === "Die")
  if (die !== undefined) return { _tag: "Die", defect: (die as { defect: unknown }).defect }
  return { _tag: "Interrupt" }
}

/** Without encoding it. @internal */
export const utf8Length = (text: string): number => {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 2
      i++
    } else bytes += 2
  }
  return bytes
}

/** `undefined`: over `maxBytes`; the host answers `ResultTooLarge` instead. @internal */
export const lines = (maxBytes: number) => {
  const decoder = new TextDecoder()
  let held: Array<Uint8Array> = []
  let heldBytes = 0
  return (bytes: Uint8Array): Array<string> | undefined => {
    const out: Array<string> = []
    let from = 0
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, from)) {
      held.push(bytes.subarray(from, at))
      out.push(held.length === 1 ? decoder.decode(held[0]) : decoder.decode(concat(held, heldBytes + at - from)))
      held = []
      heldBytes = 0
      from = at + 1
    }
    if (from < bytes.length) {
      held.push(bytes.subarray(from))
      heldBytes += bytes.length - from
      if (heldBytes > maxBytes) return undefined
    }
    return out
  }
}

const concat = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
  const all = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    all.set(part, at)
    at += part.length
  }
  return all
}

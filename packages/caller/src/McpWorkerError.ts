/**
 * The typed failures of mcp-worker as plain classes, for callers that do not load Effect. Each tag, field, `delivery`
 * and message equals `@mcp-worker/core/McpWorkerError`'s (C103), and the two classes of one tag accept each other's
 * instances with `instanceof`.
 *
 * @since 0.1.0
 */

import { headerOf } from "./ErrorStack.js"

/**
 * The brand both packages' error classes carry on their prototypes.
 *
 * @since 0.1.0
 * @category symbols
 */
export const TypeId: unique symbol = Symbol.for("@mcp-worker/McpWorkerError") as never

/**
 * The shape of one field: a primitive, the cleanup summary, or a set of literals.
 *
 * @since 0.1.0
 * @category models
 */
export type FieldSpec = "string" | "number" | "unknown" | "cleanup" | ReadonlyArray<string>

/**
 * The fields of one tag, which of them may be absent, and which the constructor fills in.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorSpec {
  readonly fields: { readonly [name: string]: FieldSpec }
  readonly optional?: ReadonlyArray<string>
  readonly defaults?: { readonly [name: string]: string }
}

/**
 * What `close` found when it ended the connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface CleanupSummary {
  readonly activeProcesses: number
  readonly signalled: { readonly term: number; readonly kill: number }
  readonly escaped: number
  readonly durationMs: number
  readonly sessionTerminated: boolean | null
}

const notSent = ["not_sent"] as const
const unknown = ["unknown"] as const

/**
 * Every tag's fields: the one record the classes, their types and `fromEncoded`'s checks are made from.
 *
 * @since 0.1.0
 * @category models
 */
export const specs = {
  UnknownWorker: { fields: { workerId: "string", delivery: notSent }, defaults: { delivery: "not_sent" } },
  WorkerBusy: { fields: { workerId: "string", requestId: "string", delivery: notSent } },
  WorkerFailed: {
    fields: {
      workerId: "string",
      kind: ["transport", "protocol", "thread", "closing", "session_expired", "unauthorized"],
      message: "string",
      delivery: ["not_sent", "unknown"]
    }
  },
  DeliveryUnknown: {
    fields: {
      workerId: "string",
      requestId: "string",
      reason: ["timeout", "interrupted", "cancelled", "host_unresponsive", "connection_lost", "stream_broken"],
      delivery: unknown
    }
  },
  ServerError: {
    fields: {
      workerId: "string",
      requestId: "string",
      code: "number",
      message: "string",
      data: "unknown",
      delivery: ["delivered", "unknown"]
    },
    optional: ["data"],
    defaults: { delivery: "delivered" }
  },
  InvalidInput: { fields: { where: ["config", "arguments"], path: "string", message: "string", delivery: notSent } },
  OpenFailed: {
    fields: {
      stage: ["thread", "spawn", "connect", "authorization", "initialize", "timeout"],
      message: "string",
      exitCode: "number",
      signal: "string",
      stderrTail: "string",
      delivery: ["not_sent", "unknown"]
    },
    optional: ["exitCode", "signal", "stderrTail"],
    defaults: { delivery: "unknown" }
  },
  CloseFailed: {
    fields: { workerId: "string", message: "string", cleanup: "cleanup", delivery: unknown },
    defaults: { delivery: "unknown" }
  },
  RequestNotPending: {
    fields: { workerId: "string", requestId: "string", delivery: notSent },
    defaults: { delivery: "not_sent" }
  },
  HostUnavailable: { fields: { message: "string", delivery: notSent }, defaults: { delivery: "not_sent" } },
  ResultTooLarge: {
    fields: {
      workerId: "string",
      requestId: "string",
      bytes: "number",
      limit: "number",
      delivery: unknown,
      bound: ["frame"],
      spillFailed: "string"
    },
    optional: ["bound", "spillFailed"]
  },
  DeadlineExceeded: { fields: { workerId: "string", delivery: notSent } },
  InputRoundsExceeded: { fields: { workerId: "string", requestId: "string", rounds: "number", delivery: unknown } },
  UnusableResult: {
    fields: {
      workerId: "string",
      requestId: "string",
      reason: ["unknown_result_type", "malformed_input_required", "invalid_result", "no_handler"],
      detail: "string",
      delivery: unknown
    }
  },
  PreflightFailed: {
    fields: { workerId: "string", requestId: "string", method: ["tools/list"], detail: "string", delivery: notSent },
    defaults: { delivery: "not_sent" }
  },
  TaskEnded: {
    fields: {
      workerId: "string",
      requestId: "string",
      state: ["cancelled", "failed"],
      statusMessage: "string",
      code: "number",
      delivery: ["delivered"]
    },
    optional: ["statusMessage", "code"],
    defaults: { delivery: "delivered" }
  }
} as const satisfies { readonly [tag: string]: ErrorSpec }

/**
 * A tag of mcp-worker's errors.
 *
 * @since 0.1.0
 * @category models
 */
export type Tag = keyof typeof specs

/**
 * Every tag, in the record's order.
 *
 * @since 0.1.0
 * @category constants
 */
export const tags = Object.keys(specs) as ReadonlyArray<Tag>

/**
 * The tags only `open`, `close` and `cancel` fail with: every other tag is a request's failure.
 *
 * @since 0.1.0
 * @category constants
 */
export const lifecycleTags = ["OpenFailed", "CloseFailed", "RequestNotPending"] as const satisfies ReadonlyArray<Tag>

/**
 * A tag a request can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestTag = Exclude<Tag, (typeof lifecycleTags)[number]>

/**
 * The tags a request can fail with, in the record's order.
 *
 * @since 0.1.0
 * @category constants
 */
export const requestTags = tags.filter((tag): tag is RequestTag => !(lifecycleTags as ReadonlyArray<Tag>).includes(tag))

type TypeOf<F> = F extends "string"
  ? string
  : F extends "number"
    ? number
    : F extends "unknown"
      ? unknown
      : F extends "cleanup"
        ? CleanupSummary
        : F extends ReadonlyArray<infer L>
          ? L
          : never

type OptionalOf<S> = S extends { readonly optional: ReadonlyArray<infer K> } ? K : never
type DefaultedOf<S> = S extends { readonly defaults: infer D } ? keyof D : never
type Simplify<A> = { [K in keyof A]: A[K] } & {}

/**
 * The names of the tag `T`'s fields that may be absent.
 *
 * @since 0.1.0
 * @category models
 */
export type OptionalName<T extends Tag> = OptionalOf<(typeof specs)[T]>

/**
 * The names of the tag `T`'s fields that its constructor fills in when not given.
 *
 * @since 0.1.0
 * @category models
 */
export type DefaultedName<T extends Tag> = DefaultedOf<(typeof specs)[T]>

/**
 * The fields of the tag `T`, as its instances hold them (without `_tag`).
 *
 * @since 0.1.0
 * @category models
 */
export type Fields<T extends Tag> = Simplify<
  {
    readonly [K in Exclude<keyof (typeof specs)[T]["fields"], OptionalOf<(typeof specs)[T]>>]: TypeOf<
      (typeof specs)[T]["fields"][K]
    >
  } & {
    readonly [K in OptionalOf<(typeof specs)[T]> & keyof (typeof specs)[T]["fields"]]?:
      TypeOf<(typeof specs)[T]["fields"][K]> | undefined
  }
>

/**
 * What the constructor of the tag `T` takes: its fields, those it defaults optional.
 *
 * @since 0.1.0
 * @category models
 */
export type Input<T extends Tag> = Simplify<
  Omit<Fields<T>, DefaultedOf<(typeof specs)[T]>> & Partial<Pick<Fields<T>, DefaultedOf<(typeof specs)[T]>>>
>

// Messages are built from ids, stages and kinds only: never from configs, arguments or results (C24).

/**
 * The message of each tag whose message is not a field; `@mcp-worker/core`'s getters call these.
 *
 * @since 0.1.0
 * @category messages
 */
export const messages = {
  WorkerBusy: (e: Fields<"WorkerBusy">): string =>
    `worker ${e.workerId} is busy with request ${e.requestId}; nothing was sent`,
  DeliveryUnknown: (e: Fields<"DeliveryUnknown">): string => {
    const request = e.requestId === "" ? "a request" : `request ${e.requestId}`
    const why =
      e.reason === "host_unresponsive"
        ? "the mcp-worker host stopped answering"
        : e.reason === "connection_lost"
          ? "the connection to the mcp-worker host was lost"
          : e.reason === "stream_broken"
            ? "its response stream broke before the result; it was not sent again"
            : e.reason
    return `${request} on worker ${e.workerId} ended (${why}); it may have reached the server, and its outcome is unknown`
  },
  ResultTooLarge: (e: Fields<"ResultTooLarge">): string => {
    const answer = `the answer to request ${e.requestId} on worker ${e.workerId}`
    if (e.bound === "frame") {
      return (
        `${answer} passed the listener's frame limit (${e.bytes} > ${e.limit} bytes); the request ran and its ` +
        "outcome is unknown (saveTo writes any size)"
      )
    }
    if (e.spillFailed !== undefined) {
      return (
        `${answer} passed maxResultBytes (${e.bytes} > ${e.limit} bytes) and could not be spilled ` +
        `(${e.spillFailed}); nothing of it is left, the request ran and its outcome is unknown`
      )
    }
    return (
      `${answer} passed maxResultBytes (${e.bytes} > ${e.limit} bytes); it was skipped unread, the request ran and ` +
      "its outcome is unknown"
    )
  },
  PreflightFailed: (e: Fields<"PreflightFailed">): string =>
    `request ${e.requestId} on worker ${e.workerId} was not sent: the ${e.method} the owner sends first, ` +
    `to learn which tools run only as tasks, failed (${e.detail})`,
  InputRoundsExceeded: (e: Fields<"InputRoundsExceeded">): string =>
    `request ${e.requestId} on worker ${e.workerId} still asked for input after ${e.rounds} rounds ` +
    "(maxInputRounds); it was stopped and not sent again, its outcome is unknown",
  UnusableResult: (e: Fields<"UnusableResult">): string =>
    `the answer to request ${e.requestId} on worker ${e.workerId} cannot be used (${e.reason}): ${e.detail}`,
  UnknownWorker: (e: Fields<"UnknownWorker">): string =>
    `no open worker has the id ${JSON.stringify(e.workerId.slice(0, 64))}`,
  RequestNotPending: (e: Fields<"RequestNotPending">): string =>
    `request ${JSON.stringify(e.requestId.slice(0, 64))} is not in flight on worker ${e.workerId}`,
  DeadlineExceeded: (e: Fields<"DeadlineExceeded">): string =>
    `the deadline of a request on worker ${e.workerId} passed before it could be sent; nothing was sent`,
  TaskEnded: (e: Fields<"TaskEnded">): string =>
    `the task awaited by request ${e.requestId} on worker ${e.workerId} ended ${e.state}` +
    `${e.code === undefined ? "" : ` (error ${e.code})`}: it has no result`
} satisfies { readonly [T in Tag]?: (e: Fields<T>) => string }

const isBranded = (u: unknown): u is { readonly _tag: string } =>
  typeof u === "object" && u !== null && (u as { readonly [TypeId]?: unknown })[TypeId] === true

const ordinaryInstanceOf = Function.prototype[Symbol.hasInstance]

/**
 * `Base` (a class of the tag `tag`) branded, and its direct subclass accepting any branded error of that tag,
 * whichever package made it; a further subclass keeps the ordinary `instanceof`. `@mcp-worker/core`'s classes are
 * made with it too.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withSharedInstances = <C>(Base: C, tag: string): C => {
  abstract class Shared extends (Base as abstract new (...args: ReadonlyArray<any>) => object) {
    get [TypeId](): true {
      return true
    }
    static override [Symbol.hasInstance](this: Function, u: unknown): boolean {
      return (
        ordinaryInstanceOf.call(this, u) || (Object.getPrototypeOf(this) === Shared && isBranded(u) && u._tag === tag)
      )
    }
  }
  return Shared as unknown as C
}

/**
 * `Base`, a class of the tag `tag`, whose `message` is the tag's message function when the tag has one (a tag
 * without one holds its message as a field). Every face's classes are made with it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withMessage = <C>(Base: C, tag: Tag): C => {
  const message = (messages as { readonly [tag: string]: ((e: never) => string) | undefined })[tag]
  if (message !== undefined) {
    Object.defineProperty((Base as unknown as Function).prototype, "message", {
      get(this: never) {
        return message(this)
      },
      configurable: true
    })
  }
  return Base
}

/**
 * What kind of field a field spec describes: a primitive, the cleanup summary, or a set of literals.
 *
 * @since 0.1.0
 * @category models
 */
export type KindOf<F> = F extends ReadonlyArray<string> ? "literals" : F

/**
 * How the record gives the field `K` of the tag `T`: may be absent, filled in by the constructor, or plain.
 *
 * @since 0.1.0
 * @category models
 */
export type RoleOf<T extends Tag, K> =
  K extends OptionalName<T> ? "optional" : K extends DefaultedName<T> ? "defaulted" : "plain"

/**
 * A face's schema constructors, for `fieldsWith`: one for each kind of field, and the two roles that wrap one.
 *
 * @since 0.1.0
 * @category models
 */
export interface SchemaMaker<S> {
  readonly string: S
  readonly number: S
  readonly unknown: S
  readonly cleanup: S
  readonly literals: (literals: readonly [string, ...Array<string>]) => S
  readonly optional: (schema: S) => S
  readonly defaulted: (schema: S, value: string) => S
}

/**
 * The fields of the tag `tag` made with a face's schema constructors: each one optional, or given its constructor
 * default (C116), as the record says.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fieldsWith = <S>(tag: Tag, make: SchemaMaker<S>): { readonly [name: string]: S } => {
  const spec: ErrorSpec = specs[tag]
  const fieldOf = (name: string, field: FieldSpec): S => {
    const schema = typeof field === "string" ? make[field] : make.literals(field as readonly [string, ...Array<string>])
    const value = spec.defaults?.[name]
    if (spec.optional?.includes(name)) return make.optional(schema)
    return value === undefined ? schema : make.defaulted(schema, value)
  }
  return Object.fromEntries(Object.entries(spec.fields).map(([name, field]) => [name, fieldOf(name, field)]))
}

/**
 * The class of the tag `T`: built from its fields, its `message` a field or the tag's message function.
 *
 * @since 0.1.0
 * @category models
 */
export type TaggedErrorClass<T extends Tag> = (abstract new (
  fields: Input<T>
) => Error & { readonly _tag: T } & Fields<T>) & { readonly _tag: T }

const TaggedError = <T extends Tag>(tag: T): TaggedErrorClass<T> => {
  const spec: ErrorSpec = specs[tag]
  class Base extends Error {
    static readonly _tag = tag
    declare readonly _tag: T
    constructor(fields: Input<T>) {
      super((fields as { readonly message?: string }).message)
      Object.assign(this, spec.defaults, fields)
      Object.defineProperty(this, "_tag", { value: tag, enumerable: true })
      // C97: the first line of the stack names the tag, the delivery and the message.
      this.stack = [headerOf(this), ...(this.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line))].join("\n")
    }
    override get name(): string {
      return tag
    }
    override toString(): string {
      return headerOf(this)
    }
  }
  return withSharedInstances(withMessage(Base, tag), tag) as unknown as TaggedErrorClass<T>
}

/**
 * The id never existed, was closed, or is malformed. These cases are indistinguishable on purpose.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownWorker extends TaggedError("UnknownWorker") {}

/**
 * A request is already in flight on that worker. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerBusy extends TaggedError("WorkerBusy") {}

/**
 * The connection is dead (transport or protocol failure, or its owner thread died).
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerFailed extends TaggedError("WorkerFailed") {}

/**
 * The request was sent, but its outcome is unknown; it is never replayed.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeliveryUnknown extends TaggedError("DeliveryUnknown") {}

/**
 * The server answered with a JSON-RPC error (or a result the protocol rejects).
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends TaggedError("ServerError") {}

/**
 * A config or arguments are not JSON plain data, or not a valid config. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInput extends TaggedError("InvalidInput") {}

/**
 * The worker could not be started; no thread and no process of the attempt is left.
 *
 * @since 0.1.0
 * @category errors
 */
export class OpenFailed extends TaggedError("OpenFailed") {}

/**
 * Cleanup could not be confirmed. The id and its owner are kept so `close` can be called again.
 *
 * @since 0.1.0
 * @category errors
 */
export class CloseFailed extends TaggedError("CloseFailed") {}

/**
 * `cancel` named a request that is not the one in flight on that worker.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestNotPending extends TaggedError("RequestNotPending") {}

/**
 * No host took the request. It was not sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class HostUnavailable extends TaggedError("HostUnavailable") {}

/**
 * The server's answer passed `maxResultBytes` or a listener's frame limit; the outcome is unknown.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultTooLarge extends TaggedError("ResultTooLarge") {}

/**
 * The request's deadline had passed before it could be sent: it was not sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeadlineExceeded extends TaggedError("DeadlineExceeded") {}

/**
 * A server kept answering `input_required` past `maxInputRounds`; the outcome is unknown.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputRoundsExceeded extends TaggedError("InputRoundsExceeded") {}

/**
 * The server answered with nothing the client can use; the outcome is unknown.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnusableResult extends TaggedError("UnusableResult") {}

/**
 * The tool listing the owner reads before a call failed; the call was not sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class PreflightFailed extends TaggedError("PreflightFailed") {}

/**
 * The task whose result was awaited ended `cancelled` or `failed`: the server answered, and there is no result.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskEnded extends TaggedError("TaskEnded") {}

/**
 * Every class, by tag.
 *
 * @since 0.1.0
 * @category constructors
 */
export const classes = {
  UnknownWorker,
  WorkerBusy,
  WorkerFailed,
  DeliveryUnknown,
  ServerError,
  InvalidInput,
  OpenFailed,
  CloseFailed,
  RequestNotPending,
  HostUnavailable,
  ResultTooLarge,
  DeadlineExceeded,
  InputRoundsExceeded,
  UnusableResult,
  PreflightFailed,
  TaskEnded
} as const satisfies { readonly [T in Tag]: TaggedErrorClass<T> }

/**
 * Any tagged error of mcp-worker.
 *
 * @since 0.1.0
 * @category models
 */
export type McpWorkerError = InstanceType<(typeof classes)[Tag]>

/**
 * Whether `u` is a tagged error of mcp-worker, made by this package or by `@mcp-worker/core`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isMcpWorkerError = (u: unknown): u is McpWorkerError =>
  isBranded(u) && Object.prototype.hasOwnProperty.call(specs, u._tag)

const fieldProblem = (spec: FieldSpec, value: unknown): boolean => {
  if (spec === "unknown") return false
  if (spec === "string" || spec === "number") return typeof value !== spec
  if (spec === "cleanup") return !isCleanup(value)
  return !spec.includes(value as string)
}

const isCleanup = (u: unknown): boolean => {
  const c = u as CleanupSummary
  return (
    typeof u === "object" &&
    u !== null &&
    [c.activeProcesses, c.escaped, c.durationMs, c.signalled?.term, c.signalled?.kill].every(
      (n) => typeof n === "number"
    ) &&
    (c.sessionTerminated === null || typeof c.sessionTerminated === "boolean")
  )
}

/**
 * The error an encoded error (a plain object with `_tag` and fields, as `@mcp-worker/core`'s Schema encodes it)
 * stands for. Throws a `TypeError` naming what is wrong when `u` is no such object.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromEncoded = (u: unknown): McpWorkerError => {
  const tag = typeof u === "object" && u !== null ? (u as { readonly _tag?: unknown })._tag : undefined
  if (typeof tag !== "string" || !Object.prototype.hasOwnProperty.call(specs, tag)) {
    throw new TypeError(`not an encoded mcp-worker error: _tag ${JSON.stringify(tag) ?? "undefined"}`)
  }
  const spec: ErrorSpec = specs[tag as Tag]
  const record = u as { readonly [name: string]: unknown }
  const fields: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(spec.fields)) {
    const value = record[name]
    if (value === undefined && spec.optional?.includes(name)) continue
    if (fieldProblem(field, value)) throw new TypeError(`not an encoded ${tag}: field ${name}`)
    fields[name] = value
  }
  const Class = classes[tag as Tag] as unknown as new (fields: unknown) => McpWorkerError
  return new Class(fields)
}

/**
 * A check's answer: the value, or the `InvalidInput` that says what was wrong (nothing was sent).
 *
 * @since 0.1.0
 * @category models
 */
export type Checked<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: InvalidInput }

/**
 * A check that passed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ok = <A>(value: A): Checked<A> => ({ ok: true, value })

/**
 * A check that failed: an `InvalidInput` naming `path`; `not_sent`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalid = (where: "config" | "arguments", path: string, message: string): Checked<never> => ({
  ok: false,
  error: new InvalidInput({ where, path, message, delivery: "not_sent" })
})

/**
 * The table of request operations without Effect: every MCP request a caller can make on a worker, its method, how
 * its arguments become the request's params (checked as JSON plain data in the calling thread), where its result
 * goes, and the checks of a caller's budget and ids. `@mcp-worker/core/Operations` is this table with a span, span
 * attributes and the protocol's result schema added to each entry, so every surface checks the same way (C16, C104).
 *
 * @since 0.1.0
 */
import * as JsonValue from "./JsonValue.js"
import type * as McpWorkerError from "./McpWorkerError.js"
import { invalid, InvalidInput, ok } from "./McpWorkerError.js"
import type { Progress } from "./Plane.js"
import * as ResultFile from "./ResultFile.js"

/**
 * A check's answer: the value, or the `InvalidInput` that says what was wrong.
 *
 * @since 0.1.0
 * @category models
 */
export type Checked<A> = McpWorkerError.Checked<A>

/**
 * A duration as Effect's `Duration.decode` reads it: milliseconds, nanoseconds as a `bigint`, `[seconds, nanos]`,
 * `"<n> <unit>"`, or an Effect `Duration`.
 *
 * @since 0.1.0
 * @category models
 */
export type DurationInput =
  | number
  | bigint
  | readonly [seconds: number, nanos: number]
  | `${number} ${"nano" | "nanos" | "micro" | "micros" | "milli" | "millis" | "second" | "seconds" | "minute" | "minutes" | "hour" | "hours" | "day" | "days" | "week" | "weeks"}`
  | { readonly value: unknown }

/**
 * The options every request takes, over what a duration is in the face's runtime.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions<Duration = DurationInput> {
  /** The whole wait budget of the request as the caller sees it. Default: the config's `timeoutMs`, else 30 s. */
  readonly timeout?: Duration | undefined
  /**
   * How long the request may go without a `notifications/progress` from the server before it ends as
   * `DeliveryUnknown{timeout}` (the request then asks for progress); the `timeout` stays the whole cap. Positive,
   * finite, at most the `timeout` (C121).
   */
  readonly idleTimeout?: Duration | undefined
  /**
   * Called with each `notifications/progress` the server sends for this request, in the caller's own thread (the
   * function is never serialized). Only with it are progress notifications handed on. They do not extend the
   * `timeout`.
   */
  readonly onProgress?: ((progress: Progress) => void) | undefined
}

/**
 * The options of `callTool`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolOptions<Duration = DurationInput> extends RequestOptions<Duration> {
  /**
   * An absolute file path: the owner thread writes the server's raw result there (the JSON text of the response's
   * `result`, byte for byte) and the call answers a `SavedResult` instead. Not subject to `maxResultBytes`; stdio
   * workers only.
   */
  readonly saveTo?: string | undefined
  /**
   * A result over `maxResultBytes`: `{ spill: directory }` writes it to a new file there, as `saveTo` would, and answers
   * a `SpilledResult` (`ResultFile.isSpilled`); `"fail"` is `ResultTooLarge`. Default: the worker's `open` option.
   */
  readonly onTooLarge?: ResultFile.TooLargePolicy | undefined
}

/**
 * The options of a paginated list.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions<Duration = DurationInput> extends RequestOptions<Duration> {
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string | undefined
}

/**
 * The options of `startTask`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartTaskOptions<Duration = DurationInput> extends RequestOptions<Duration> {
  /** How long the server should keep the task and its result after it was created; the server may keep it less. */
  readonly ttl?: Duration | undefined
}

/**
 * What the params builder of an operation gets besides its arguments.
 *
 * @since 0.1.0
 * @category models
 */
export interface ParamsContext {
  /** Rejects proxies before any trap runs (Node: `util.types.isProxy`). */
  readonly isProxy?: ((u: unknown) => boolean) | undefined
  /** Why a `saveTo` path cannot be written, or `undefined`; a surface without it refuses `saveTo`. */
  readonly checkSavePath?: ResultFile.Check | undefined
  /** Why a directory cannot take spilled results, or `undefined`; a surface without it refuses `onTooLarge.spill`. */
  readonly checkSpillDirectory?: ResultFile.Check | undefined
}

/**
 * One request operation. `Args` are its positional arguments after the worker id, `Options` its last argument.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operation<Args extends ReadonlyArray<unknown>, Options> {
  /** The MCP method sent. */
  readonly method: Method
  /** How many positional arguments come before the options. */
  readonly arity: Args["length"]
  /** The request's params as JSON text, or why the arguments cannot be sent. */
  readonly params: (args: Args, options: Options | undefined, context: ParamsContext) => Checked<string>
  /** The file the result goes to (`saveTo`), checked; only operations that offer it have this. */
  readonly saveTo?: ((options: Options | undefined, context: ParamsContext) => Checked<string | undefined>) | undefined
  /** Where a result over `maxResultBytes` spills (`onTooLarge`, `false`: nowhere), checked; with `saveTo` only. */
  readonly spill?:
    ((options: Options | undefined, context: ParamsContext) => Checked<string | false | undefined>) | undefined
  /** What the caller's surface answers for the owner's value (a spill's wire form becomes a `SpilledResult`). */
  readonly answer?: ((value: unknown) => unknown) | undefined
}

/**
 * Any operation of the table.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Operation<any, any>

/**
 * The MCP methods a request operation sends.
 *
 * @since 0.1.0
 * @category models
 */
export type Method =
  | "tools/list"
  | "tools/call"
  | "resources/list"
  | "resources/templates/list"
  | "resources/read"
  | "resources/subscribe"
  | "resources/unsubscribe"
  | "prompts/list"
  | "prompts/get"
  | "completion/complete"
  | "ping"
  | "tasks/get"
  | "tasks/result"
  | "tasks/cancel"
  | "tasks/list"

// The checks every params builder shares: each names the argument that is wrong (C16).

const flatMap = <A, B>(checked: Checked<A>, f: (a: A) => Checked<B>): Checked<B> =>
  checked.ok ? f(checked.value) : checked

/**
 * Refuses an argument, naming it; `not_sent`.
 *
 * @since 0.1.0
 * @category checks
 */
export const invalidArgument = (path: string, message: string): Checked<never> => invalid("arguments", path, message)

/**
 * A non-empty string argument.
 *
 * @since 0.1.0
 * @category checks
 */
export const string = (value: unknown, path: string, what: string): Checked<string> =>
  typeof value === "string" && value.length > 0
    ? ok(value)
    : invalidArgument(path, `${what} must be a non-empty string`)

/**
 * The params of a paginated list: its `cursor`, when given.
 *
 * @since 0.1.0
 * @category checks
 */
export const cursorParams = (options: { readonly cursor?: unknown } | undefined): Checked<string> => {
  const cursor = options?.cursor
  if (cursor === undefined) return ok("{}")
  return typeof cursor === "string"
    ? ok(JSON.stringify({ cursor }))
    : invalidArgument("cursor", "the cursor must be a string")
}

/**
 * An object argument, checked as JSON plain data (C16) and encoded once.
 *
 * @since 0.1.0
 * @category checks
 */
export const object = (
  value: unknown,
  path: string,
  what: string,
  isProxy: ((u: unknown) => boolean) | undefined
): Checked<string> =>
  JsonValue.isJsonObject(value)
    ? JsonValue.encode(value, { where: "arguments", root: path, isProxy })
    : invalidArgument(path, `${what} must be a plain object`)

/**
 * A tool call's params around its arguments' JSON text, validated once and stringified once; `extra` is JSON text
 * of further members (`,"task":{…}`), or empty.
 *
 * @since 0.1.0
 * @category checks
 */
export const toolCallParams = (
  name: unknown,
  args: unknown,
  isProxy: ((u: unknown) => boolean) | undefined,
  extra: string
): Checked<string> =>
  flatMap(string(name, "name", "the tool name"), (tool) => {
    const text = args === undefined ? ok("{}") : object(args, "args", "tool arguments", isProxy)
    return text.ok ? ok(`{"name":${JSON.stringify(tool)},"arguments":${text.value}${extra}}`) : text
  })

// The table

// Typed as its operation, not inferred: an entry whose params read no arguments (`ping`) keeps its `Args`.
const entry = <Args extends ReadonlyArray<unknown>, Options>(operation: Operation<Args, Options>) => operation

const list = (method: Method): Operation<[], ListOptions> => ({
  method,
  arity: 0,
  params: (_, options) => cursorParams(options)
})

const byUri = (method: Method): Operation<[uri: string], RequestOptions> => ({
  method,
  arity: 1,
  params: ([uri]) => flatMap(string(uri, "uri", "the resource uri"), (value) => ok(JSON.stringify({ uri: value })))
})

const byTaskId = (
  method: "tasks/get" | "tasks/result" | "tasks/cancel"
): Operation<[taskId: string], RequestOptions> => ({
  method,
  arity: 1,
  params: ([taskId]) =>
    flatMap(string(taskId, "taskId", "the task id"), (value) => ok(JSON.stringify({ taskId: value })))
})

const promptParams = (name: unknown, args: unknown, isProxy: ((u: unknown) => boolean) | undefined) =>
  flatMap(string(name, "name", "the prompt name"), (prompt) => {
    if (args === undefined) return ok(JSON.stringify({ name: prompt }))
    if (JsonValue.isJsonObject(args)) {
      const bad = Object.keys(args).find((key) => typeof (args as Record<string, unknown>)[key] !== "string")
      if (bad !== undefined)
        return invalidArgument(JsonValue.appendPath("args", bad), "prompt arguments must be strings")
    }
    const text = object(args, "args", "prompt arguments", isProxy)
    return text.ok ? ok(`{"name":${JSON.stringify(prompt)},"arguments":${text.value}}`) : text
  })

// A task's `ttl` as Effect's Duration reads it, whole milliseconds; an infinite one is refused.
const ttlOf = (ttl: unknown): Checked<string> => {
  if (ttl === undefined) return ok(`,"task":{}`)
  const ms = durationMillis(ttl)
  return ms === undefined || ms === Infinity
    ? invalidArgument("options.ttl", "ttl must be a finite duration")
    : ok(`,"task":{"ttl":${Math.max(0, Math.round(ms))}}`)
}

/**
 * Every request operation, by its name on `McpWorkers`; the task operations (`startTask` … `listTasks`) included.
 *
 * @since 0.1.0
 * @category operations
 */
export const requests = {
  listTools: list("tools/list"),
  callTool: entry<[name: string, args?: JsonValue.JsonObject], CallToolOptions>({
    method: "tools/call",
    arity: 2,
    params: ([name, args], _, context) => toolCallParams(name, args, context.isProxy, ""),
    saveTo: (options, context) => ResultFile.saveToOf(options, context.checkSavePath),
    spill: (options, context) => ResultFile.callPolicyOf(options, context.checkSpillDirectory),
    answer: ResultFile.answerOf
  }),
  listResources: list("resources/list"),
  listResourceTemplates: list("resources/templates/list"),
  readResource: byUri("resources/read"),
  subscribeResource: byUri("resources/subscribe"),
  unsubscribeResource: byUri("resources/unsubscribe"),
  listPrompts: list("prompts/list"),
  getPrompt: entry<[name: string, args?: Readonly<Record<string, string>>], RequestOptions>({
    method: "prompts/get",
    arity: 2,
    params: ([name, args], _, context) => promptParams(name, args, context.isProxy)
  }),
  complete: entry<[params: JsonValue.JsonObject], RequestOptions>({
    method: "completion/complete",
    arity: 1,
    params: ([params], _, context) => object(params, "params", "the completion params", context.isProxy)
  }),
  ping: entry<[], RequestOptions>({ method: "ping", arity: 0, params: () => ok("{}") }),
  startTask: entry<[name: string, args?: JsonValue.JsonObject], StartTaskOptions>({
    method: "tools/call",
    arity: 2,
    params: ([name, args], options, context) =>
      flatMap(ttlOf(options?.ttl), (task) => toolCallParams(name, args, context.isProxy, task))
  }),
  getTask: byTaskId("tasks/get"),
  taskResult: byTaskId("tasks/result"),
  cancelTask: byTaskId("tasks/cancel"),
  listTasks: list("tasks/list")
} as const

/**
 * The request operations.
 *
 * @since 0.1.0
 * @category models
 */
export type Requests = typeof requests

/**
 * The positional arguments of the request `K`, as the table types them: every face's signature of `K` reads them here.
 *
 * @since 0.1.0
 * @category models
 */
export type ArgsOf<K extends keyof Requests> = Requests[K] extends Operation<infer Args, any> ? Args : never

// Budgets

/**
 * The longest timer Node (and every platform's `setTimeout`) can hold: budgets beyond it are clamped to it.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxTimeoutMs = 2147483647

const durationTypeId = Symbol.for("effect/Duration")
const durationPattern = /^(-?\d+(?:\.\d+)?)\s+(nanos?|micros?|millis?|seconds?|minutes?|hours?|days?|weeks?)$/
const unitMillis: Readonly<Record<string, number>> = {
  milli: 1,
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000
}

// Effect's `Duration.millis(n)` (and so seconds … weeks), read back as milliseconds: NaN and n ≤ 0 are zero, a
// fraction is kept to the nanosecond.
const millisOf = (n: number): number =>
  Number.isNaN(n) || n <= 0 ? 0 : !Number.isFinite(n) ? Infinity : Number.isInteger(n) ? n : Math.round(n * 1e6) / 1e6

const nanosMillis = (nanos: bigint): number => (nanos <= 0n ? 0 : Number(nanos) / 1_000_000)

const stringMillis = (input: string): number | undefined => {
  const match = durationPattern.exec(input)
  if (match === null) return undefined
  const [, text, unit] = match as unknown as [string, string, string]
  const scale = unit.startsWith("nano") ? 1 : unit.startsWith("micro") ? 1000 : undefined
  if (scale !== undefined) {
    return nanosMillis(text.includes(".") ? BigInt(Math.round(Number(text) * scale)) : BigInt(text) * BigInt(scale))
  }
  return millisOf(Number(text) * unitMillis[unit.replace(/s$/, "")]!)
}

const objectMillis = (value: { readonly _tag?: unknown; readonly millis?: unknown; readonly nanos?: unknown }) =>
  value._tag === "Infinity"
    ? Infinity
    : value._tag === "Nanos" && typeof value.nanos === "bigint"
      ? Number(value.nanos) / 1_000_000
      : value._tag === "Millis" && typeof value.millis === "number"
        ? value.millis
        : undefined

/**
 * A duration in milliseconds as Effect's `Duration.decodeUnknown` and `Duration.toMillis` read it (`Infinity` for an
 * infinite one), or `undefined` when it is no duration.
 *
 * @since 0.1.0
 * @category budgets
 */
export const durationMillis = (input: unknown): number | undefined => {
  try {
    if (typeof input === "object" && input !== null && durationTypeId in input) {
      return objectMillis((input as unknown as { readonly value: { readonly _tag?: unknown } }).value)
    }
    if (typeof input === "number") return millisOf(input)
    if (typeof input === "bigint") return nanosMillis(input)
    if (typeof input === "string") return stringMillis(input)
    if (Array.isArray(input) && input.length === 2 && input.every((part) => typeof part === "number")) {
      const [seconds, nanos] = input as [number, number]
      if (seconds === -Infinity || nanos === -Infinity || Number.isNaN(seconds) || Number.isNaN(nanos)) return 0
      if (seconds === Infinity || nanos === Infinity) return Infinity
      return nanosMillis(BigInt(Math.round(seconds * 1_000_000_000)) + BigInt(Math.round(nanos)))
    }
    return undefined
  } catch {
    // Effect's decoder throws on what it cannot read (a BigInt of a number past the doubles' range): no duration.
    return undefined
  }
}

// Duration reads negative durations ("-5 millis", [-1, 0], -1n) as zero, like NaN and negative numbers: refused
// before they become "no time at all".
const isNegative = (input: unknown): boolean =>
  typeof input === "number"
    ? !(input >= 0)
    : typeof input === "bigint"
      ? input < 0n
      : typeof input === "string"
        ? input.trimStart().startsWith("-")
        : Array.isArray(input) && input.some((part) => typeof part === "number" && !(part >= 0))

/**
 * A budget's reading: milliseconds (`undefined`: none was given), or why it is refused.
 *
 * @since 0.1.0
 * @category models
 */
export type Budget =
  { readonly ok: true; readonly value: number | undefined } | { readonly ok: false; readonly reason: string }

/**
 * A caller's budget in milliseconds, or `undefined` when none was given. Durations beyond what a timer can hold
 * (an infinite one included) are clamped to the longest timer; anything that is not a duration, or is negative, is
 * refused, with the reason.
 *
 * @since 0.1.0
 * @category budgets
 */
export const budgetOf = (input: unknown): Budget => {
  if (input === undefined) return { ok: true, value: undefined }
  if (isNegative(input)) return { ok: false, reason: "the timeout must be a non-negative duration" }
  const ms = durationMillis(input)
  if (ms === undefined) return { ok: false, reason: "the timeout is not a duration" }
  if (Number.isNaN(ms) || ms < 0) return { ok: false, reason: "the timeout must be a non-negative duration" }
  return { ok: true, value: Math.min(ms, maxTimeoutMs) }
}

/**
 * A budget in ms from now as the `Date.now()` deadline every other thread and process reads (C9); `undefined` stays
 * the default budget.
 *
 * @since 0.1.0
 * @category budgets
 */
export const deadlineOf = (budgetMs: number | undefined): number | undefined =>
  budgetMs === undefined ? undefined : Date.now() + budgetMs

/**
 * The `InvalidInput` of a `timeout` that `budgetOf` refused.
 *
 * @since 0.1.0
 * @category budgets
 */
export const invalidTimeout = (where: "config" | "arguments", reason: string): McpWorkerError.InvalidInput =>
  new InvalidInput({ where, path: "options.timeout", message: reason, delivery: "not_sent" })

// C121: a caller's `idleTimeout` in ms (`undefined`: none), or why it is refused: a positive, finite duration no
// longer than the call's own budget (when the caller gave one; the default one ends the request first anyway).
const idleOf = (input: unknown, budgetMs: number | undefined): Budget => {
  if (input === undefined) return { ok: true, value: undefined }
  const ms = isNegative(input) ? -1 : durationMillis(input)
  if (ms === undefined) return { ok: false, reason: "the idleTimeout is not a duration" }
  if (!(ms > 0) || !Number.isFinite(ms))
    return { ok: false, reason: "the idleTimeout must be a positive, finite duration" }
  if (budgetMs !== undefined && ms > budgetMs)
    return { ok: false, reason: "the idleTimeout must not exceed the timeout" }
  // Longer than a timer holds: the whole budget, which is no longer, ends the request first.
  return { ok: true, value: Math.min(ms, maxTimeoutMs) }
}

// Ids and preparing a request

/**
 * Which id an operation was given: the worker's (or the grant that stands for it), or a request's (`cancel`).
 *
 * @since 0.1.0
 * @category models
 */
export type IdPath = "workerId" | "requestId"

const describe = (input: unknown): string =>
  input === null ? "null" : Array.isArray(input) ? "an array" : typeof input

/**
 * An id as the caller gave it: any string is looked up (an unknown one is `UnknownWorker`); anything else — the
 * `undefined` of an `openAll` entry that failed — is refused at once, unsent, naming the argument (C94).
 *
 * @since 0.1.0
 * @category checks
 */
export const checkId = (input: unknown, path: IdPath): Checked<string> =>
  typeof input === "string"
    ? ok(input)
    : invalidArgument(
        path,
        `the ${path === "workerId" ? "worker" : "request"} id must be a string, not ${describe(input)}`
      )

/**
 * A request as every surface hands it on: its params as JSON text, the caller's budget (`undefined`: the worker's
 * default) and idle budget (C121), and where its result goes (`saveTo`, `spill`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Prepared {
  readonly params: string
  readonly budgetMs: number | undefined
  readonly idleMs: number | undefined
  readonly saveTo: string | undefined
  readonly spill: string | false | undefined
}

/**
 * A caller's arguments and options, checked in one order — the arguments, the `timeout`, the `idleTimeout`, `saveTo`,
 * `onTooLarge` — with
 * the surface's `context` (what it can check, and what it refuses). Nothing is sent before this passes (C16).
 *
 * @since 0.1.0
 * @category constructors
 */
export const prepare = (
  operation: Any,
  args: ReadonlyArray<unknown>,
  options: { readonly timeout?: unknown; readonly idleTimeout?: unknown } | undefined,
  context: ParamsContext
): Checked<Prepared> => {
  const params = operation.params(args, options, context)
  if (!params.ok) return params
  const budget = budgetOf(options?.timeout)
  if (!budget.ok) return { ok: false, error: invalidTimeout("arguments", budget.reason) }
  const idle = idleOf(options?.idleTimeout, budget.value)
  if (!idle.ok) {
    const error = new InvalidInput({
      where: "arguments",
      path: "options.idleTimeout",
      message: idle.reason,
      delivery: "not_sent"
    })
    return { ok: false, error }
  }
  const saveTo = operation.saveTo === undefined ? ok(undefined) : operation.saveTo(options, context)
  if (!saveTo.ok) return saveTo
  const spill = operation.spill === undefined ? ok(undefined) : operation.spill(options, context)
  if (!spill.ok) return spill
  return ok({
    params: params.value,
    budgetMs: budget.value,
    idleMs: idle.value,
    saveTo: saveTo.value,
    spill: spill.value
  })
}

/**
 * `prepare` for a request to a worker by id: the id first, then the rest. Every surface that takes a worker id (or a
 * grant in its place) calls this one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prepareFor = (
  operation: Any,
  id: unknown,
  args: ReadonlyArray<unknown>,
  options: { readonly timeout?: unknown; readonly idleTimeout?: unknown } | undefined,
  context: ParamsContext
): Checked<Prepared & { readonly workerId: string }> =>
  flatMap(checkId(id, "workerId"), (workerId) => {
    const prepared = prepare(operation, args, options, context)
    return prepared.ok ? ok({ ...prepared.value, workerId }) : prepared
  })

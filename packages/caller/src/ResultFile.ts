/**
 * Results that go to a file instead of into the answer. `saveTo` writes a call's raw result to the path it names,
 * whatever its size. `onTooLarge` is the policy for a result larger than the config's `maxResultBytes`: by default
 * the call fails with `ResultTooLarge`; `{ spill: directory }` streams the result instead to a new file of that
 * directory, exactly as `saveTo` writes one, and the call answers a `SpilledResult` saying where it is. A result within
 * the limit answers as usual. The policy is a call's (`callTool`'s options) or its worker's (`open`'s options), the
 * call's first.
 *
 * Spilled files are the caller's: nothing removes one once it was answered with. `@mcp-worker/core/ResultFile` answers
 * with these checks.
 *
 * @since 0.1.0
 */
import { type Checked, invalid, ok } from "./McpWorkerError.js"

/**
 * What a call with `saveTo` answers: where the result is, its size and SHA-256 (of the file's bytes), its `isError`,
 * and the start of its first `text` content (at most 1024 UTF-16 code units), or `null`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SavedResult extends FieldsOf<typeof savedResultFields> {}

/**
 * `SavedResult`'s fields, each with its type as TypeScript text: the one record its type and its copy in the tool
 * declarations (`@mcp-worker/core/ToolDeclarations`, whose text compiles with no import) are made from.
 *
 * @since 0.1.0
 * @category models
 */
export const savedResultFields = {
  path: "string",
  bytes: "number",
  sha256: "string",
  isError: "boolean",
  preview: "string | null"
} as const

// The type a field's text names: primitives, joined by ` | `.
type TypeOfText<T> = T extends `${infer A} | ${infer B}`
  ? TypeOfText<A> | TypeOfText<B>
  : T extends "string"
    ? string
    : T extends "number"
      ? number
      : T extends "boolean"
        ? boolean
        : T extends "null"
          ? null
          : never

type FieldsOf<R> = { readonly [K in keyof R]: TypeOfText<R[K]> }

/**
 * What a call does with a result over `maxResultBytes`: fail with `ResultTooLarge` (`"fail"`, the default), or spill
 * it into a new file of an absolute directory (`{ spill }`). On a call, `"fail"` also overrides its worker's spill.
 *
 * @since 0.1.0
 * @category models
 */
export type TooLargePolicy = "fail" | { readonly spill: string }

/**
 * What a call answers when its result passed `maxResultBytes` and was spilled: the `saveTo` summary of the new file,
 * the `limit` the result passed, and one `text` content item saying where it is, so that code which reads a tool's
 * content finds it (it is a `CallToolResult` too). Tell it from a server's result with `isSpilled`, never by its
 * fields: a server may answer anything, `spilled: true` included.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpilledResult extends SavedResult {
  readonly spilled: true
  readonly limit: number
  readonly content: Array<{ readonly type: "text"; readonly text: string }>
  /** As a `CallToolResult` has. */
  readonly [key: string]: unknown
}

// On the answer itself, not enumerable: what JSON.parse or a structured clone makes never carries it.
const spilledBrand: unique symbol = Symbol.for("@mcp-worker/core/ResultFile/SpilledResult") as any

/**
 * Whether a call's answer is a `SpilledResult` made by mcp-worker in this thread (a server's result never is).
 *
 * @since 0.1.0
 * @category guards
 */
export const isSpilled = (u: unknown): u is SpilledResult =>
  typeof u === "object" && u !== null && (u as { readonly [spilledBrand]?: unknown })[spilledBrand] === true

// How an owner answers a spill, between threads and processes: a JSON array, which no MCP result is (every result of
// the protocol is an object), turned into a `SpilledResult` by the caller's own surface (`answerOf`).
const wireTag = "mcp-worker/spilled"

/**
 * The owner's answer to a call whose result was spilled, as it travels to the caller's surface.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeSpilled = (summary: SavedResult, limit: number): ReadonlyArray<unknown> => [
  wireTag,
  {
    path: summary.path,
    bytes: summary.bytes,
    sha256: summary.sha256,
    isError: summary.isError,
    preview: summary.preview,
    limit
  }
]

const makeSpilled = (summary: SavedResult & { readonly limit: number }): SpilledResult => {
  const text =
    `The result (${summary.bytes} bytes) passed maxResultBytes (${summary.limit} bytes) and was saved to ` +
    `${summary.path} (sha256 ${summary.sha256}).`
  const answer: SpilledResult = {
    spilled: true,
    path: summary.path,
    bytes: summary.bytes,
    sha256: summary.sha256,
    isError: summary.isError,
    preview: summary.preview,
    limit: summary.limit,
    content: [{ type: "text", text }]
  }
  return Object.defineProperty(answer, spilledBrand, { value: true })
}

/**
 * What a caller's surface answers for the value an owner sent: a spill's wire form becomes a `SpilledResult`, any
 * other value is the server's result and is returned as is.
 *
 * @since 0.1.0
 * @category encoding
 */
export const answerOf = (value: unknown): unknown =>
  Array.isArray(value) && value.length === 2 && value[0] === wireTag && typeof value[1] === "object"
    ? makeSpilled(value[1] as SavedResult & { readonly limit: number })
    : value

/**
 * The wire form of an answer again, for a surface that hands it on to another process (`answerOf` reads it there).
 *
 * @since 0.1.0
 * @category encoding
 */
export const wireOf = (value: unknown): unknown => (isSpilled(value) ? encodeSpilled(value, value.limit) : value)

/**
 * The name of a spilled result's file: the tool's name (characters other than `A-Za-z0-9._-` as `_`, no leading dot,
 * at most 64 characters), then the request id, `.json`. A request id is never reused, so the name is new.
 *
 * @since 0.1.0
 * @category utils
 */
export const fileName = (tool: unknown, requestId: string): string => {
  const base = (typeof tool === "string" ? tool : "")
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^\.+/, (dots) => "_".repeat(dots.length))
    .slice(0, 64)
  return `${base.length === 0 ? "tool" : base}-${requestId}.json`
}

/**
 * Why a path cannot be written (`saveTo`) or a directory cannot take spilled results (`spill`), checked by the
 * platform; `undefined` when it can.
 *
 * @since 0.1.0
 * @category models
 */
export type Check = (path: string) => string | undefined

/**
 * `saveTo`, checked: the path, `undefined` when there is none. A surface without a `check` refuses it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const saveToOf = (
  options: { readonly saveTo?: unknown } | undefined,
  check: Check | undefined
): Checked<string | undefined> => {
  const saveTo: unknown = options?.saveTo
  if (saveTo === undefined) return ok(undefined)
  if (typeof saveTo !== "string") return invalid("arguments", "options.saveTo", "saveTo must be a string")
  if (check === undefined) return invalid("arguments", "options.saveTo", "saveTo is not available here")
  const problem = check(saveTo)
  return problem === undefined ? ok(saveTo) : invalid("arguments", "options.saveTo", problem)
}

/**
 * A call's `onTooLarge`, checked: the directory to spill to, `false` for `"fail"` (its worker's spill does not apply),
 * `undefined` when it has none (its worker's policy applies). A surface without a `check` refuses a spill.
 *
 * @since 0.1.0
 * @category constructors
 */
export const callPolicyOf = (
  options: { readonly onTooLarge?: unknown } | undefined,
  check: Check | undefined
): Checked<string | false | undefined> => policyOf(options?.onTooLarge, check, "arguments")

/**
 * `open`'s `onTooLarge`, checked: the worker's spill directory, or `undefined` (its calls fail with
 * `ResultTooLarge`). A surface without a `check` refuses a spill.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openPolicyOf = (
  options: { readonly onTooLarge?: unknown } | undefined,
  check: Check | undefined
): Checked<string | undefined> =>
  mapChecked(policyOf(options?.onTooLarge, check, "config"), (spill) => (spill === false ? undefined : spill))

const mapChecked = <A, B>(checked: Checked<A>, f: (a: A) => B): Checked<B> =>
  checked.ok ? ok(f(checked.value)) : checked

const policyOf = (
  policy: unknown,
  check: Check | undefined,
  where: "arguments" | "config"
): Checked<string | false | undefined> => {
  if (policy === undefined) return ok(undefined)
  if (policy === "fail") return ok(false)
  if (typeof policy !== "object" || policy === null || Array.isArray(policy)) {
    return invalid(where, "options.onTooLarge", 'onTooLarge must be "fail" or { spill: directory }')
  }
  const extra = Object.keys(policy).find((key) => key !== "spill")
  if (extra !== undefined) {
    return invalid(where, `options.onTooLarge.${extra}`, "onTooLarge has only spill")
  }
  const spill: unknown = (policy as { readonly spill?: unknown }).spill
  if (typeof spill !== "string") return invalid(where, "options.onTooLarge.spill", "spill must be a directory path")
  if (check === undefined) return invalid(where, "options.onTooLarge.spill", "spill is not available here")
  const problem = check(spill)
  return problem === undefined ? ok(spill) : invalid(where, "options.onTooLarge.spill", problem)
}

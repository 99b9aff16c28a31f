/**
 * How a tagged error of mcp-worker reads when Node prints it (uncaught, `console.log`, inside an Effect
 * `FiberFailure`), C97: its tag, delivery and message first, then only the frames outside the Effect libraries. An
 * error decoded from another thread's reply is built by Schema's decoder, whose frames say nothing of the call.
 * Effect-free, so that this package's classes and both Effect faces' (`@mcp-worker/core`, `@mcp-worker/effect4`) share
 * the one rule.
 *
 * @since 0.1.0
 */

/**
 * A tagged error's first line: `<tag> [<delivery>]: <message>`, without brackets for an error that has no delivery.
 *
 * @since 0.1.0
 * @category formatting
 */
export const headerOf = (error: {
  readonly _tag: string
  readonly message: string
  readonly delivery?: unknown
}): string => `${error._tag}${typeof error.delivery === "string" ? ` [${error.delivery}]` : ""}: ${error.message}`

// The Effect libraries' own modules (effect, @effect/*), installed or in this repository's node_modules.
const effectFrame = /[\\/]node_modules[\\/](effect|@effect[\\/][^\\/]+)[\\/]/

const framesOf = (stack: string | undefined): Array<string> =>
  (stack ?? "").split("\n").filter((line) => /^\s+at /.test(line) && !effectFrame.test(line))

// A decoded error's stack holds Schema's frames only (V8 keeps ten): the frames below them, where the reply was read.
const deeperFrames = (error: Error): Array<string> => {
  const holder: { stack?: string } = {}
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 64
  Error.captureStackTrace?.(holder, error.constructor)
  Error.stackTraceLimit = limit
  return framesOf(holder.stack)
}

/**
 * Rewrites `error.stack` as its header and the frames that are not the Effect libraries'.
 *
 * @since 0.1.0
 * @category formatting
 */
export const rewriteStack = (
  error: Error & { readonly _tag: string; readonly message: string; readonly delivery?: unknown }
): void => {
  const frames = framesOf(error.stack)
  error.stack = [headerOf(error), ...(frames.length > 0 ? frames : deeperFrames(error))].join("\n")
}

const inspectSymbol = Symbol.for("nodejs.util.inspect.custom")

/**
 * `Base`, a tagged error class, whose instances rewrite their stack once built (decoded ones too: Schema's decoder
 * constructs them), whose `toString` (what an Effect `FiberFailure` shows) is the header, and which Node's
 * `util.inspect` prints as the stack and then the fields.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readable = <C>(Base: C): C => {
  const Tagged = Base as unknown as new (...args: ReadonlyArray<any>) => Error & { readonly _tag: string }
  return class extends Tagged {
    constructor(...args: ReadonlyArray<any>) {
      super(...args)
      rewriteStack(this)
    }
    override toString(): string {
      return headerOf(this)
    }
    [inspectSymbol](_depth: number, options: object, inspect?: (value: unknown, options: object) => string): string {
      return inspect === undefined ? `${this.stack}` : `${this.stack} ${inspect({ ...this }, options)}`
    }
  } as unknown as C
}

// The same bad input is the same error on every surface (Operations.prepare): inputs are described as plain data, so
// that each surface — in this thread, another thread or another process — builds the same values, then refuses them.
import fc from "fast-check"

/** One value of an input, by name: plain data, built into the real value where the call is made (`build`). */
export type Piece = string

const values: Record<Piece, () => unknown> = {
  absent: () => undefined,
  echo: () => "echo",
  empty: () => "",
  number: () => 5,
  null: () => null,
  object: () => ({ token: "x" }),
  text: () => "text",
  array: () => [1],
  withFunction: () => ({ f: () => 1 }),
  withNaN: () => ({ n: Number.NaN }),
  withBigint: () => ({ big: 1n }),
  withUndefined: () => ({ u: undefined }),
  withDate: () => ({ d: new Date(0) }),
  proxy: () => new Proxy({}, {}),
  second: () => "1 second",
  infinity: () => Number.POSITIVE_INFINITY,
  negative: () => -1,
  negativeText: () => "-5 millis",
  soon: () => "soon",
  nan: () => Number.NaN,
  zero: () => 0,
  relative: () => "relative/result.json",
  fail: () => "fail",
  explode: () => "explode",
  spillNumber: () => ({ spill: 5 }),
  spillExtra: () => ({ spill: "/tmp", extra: 1 })
}

/** A `callTool` as plain data: the name of each piece. */
export interface Input {
  readonly name: Piece
  readonly args: Piece
  readonly timeout: Piece
  readonly idleTimeout: Piece
  readonly saveTo: Piece
  readonly onTooLarge: Piece
}

const valid: Record<keyof Input, ReadonlyArray<Piece>> = {
  name: ["echo"],
  args: ["absent", "object"],
  timeout: ["absent", "second", "infinity"],
  // No longer than any valid timeout above (C121).
  idleTimeout: ["absent", "second"],
  saveTo: ["absent"],
  onTooLarge: ["absent", "fail"]
}

const invalid: Record<keyof Input, ReadonlyArray<Piece>> = {
  name: ["empty", "number", "null"],
  args: ["text", "array", "null", "withFunction", "withNaN", "withBigint", "withUndefined", "withDate", "proxy"],
  timeout: ["negative", "negativeText", "soon", "nan", "object"],
  idleTimeout: ["zero", "negative", "infinity", "soon", "nan", "object"],
  saveTo: ["number", "relative"],
  onTooLarge: ["explode", "spillNumber", "spillExtra", "null"]
}

const piece = (key: keyof Input) => fc.constantFrom(...valid[key], ...invalid[key])

/** Inputs with at least one bad piece: every surface refuses them before anything is sent. */
export const badInputs = (count: number, seed: number): ReadonlyArray<Input> =>
  fc.sample(
    fc
      .record({
        name: piece("name"),
        args: piece("args"),
        timeout: piece("timeout"),
        idleTimeout: piece("idleTimeout"),
        saveTo: piece("saveTo"),
        onTooLarge: piece("onTooLarge")
      })
      .filter((input) => (Object.keys(invalid) as Array<keyof Input>).some((key) => invalid[key].includes(input[key]))),
    { numRuns: count, seed }
  )

/** The real arguments of an input: name, arguments, options. */
export const build = (input: Input): [unknown, unknown, Record<string, unknown>] => {
  const options: Record<string, unknown> = {}
  for (const key of ["timeout", "idleTimeout", "saveTo", "onTooLarge"] as const) {
    const value = values[input[key]]!()
    if (value !== undefined) options[key] = value
  }
  return [values[input.name]!(), values[input.args]!(), options]
}

/** What a refusal says, to compare across surfaces: its tag, where and path, and delivery. */
export const refusalOf = (error: unknown): string => {
  const e = error as { _tag?: unknown; where?: unknown; path?: unknown; delivery?: unknown }
  return typeof e?._tag === "string"
    ? `${e._tag} ${String(e.where)} ${String(e.path)} ${String(e.delivery)}`
    : `other ${String(error)}`
}

/** Each input's refusal through `call`, which makes the call and settles with its error (or a result). */
export const refusals = async (
  inputs: ReadonlyArray<Input>,
  call: (name: unknown, args: unknown, options: Record<string, unknown>) => Promise<unknown>
): Promise<Array<string>> => {
  const seen: Array<string> = []
  for (const input of inputs) {
    const [name, args, options] = build(input)
    seen.push(
      await Promise.resolve()
        .then(() => call(name, args, options))
        .then(
          () => "answered",
          (error) => refusalOf(error)
        )
    )
  }
  return seen
}

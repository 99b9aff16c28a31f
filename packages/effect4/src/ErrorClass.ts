/**
 * How this face's error classes are made from `@mcp-worker/caller`'s record of each tag (C103), as core's are: one
 * record, two Effect faces.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ErrorStack from "../lib/caller/ErrorStack.js"
import * as Caller from "../lib/caller/McpWorkerError.js"

type Spec<T extends Caller.Tag> = (typeof Caller.specs)[T]

// Effect 3's `Schema.Literal("a")` and `Schema.Literal("a", "b")` in Effect 4's words, so both faces encode alike.
type LiteralsOf<F> = F extends readonly [infer L extends string]
  ? Schema.Literal<L>
  : F extends ReadonlyArray<string>
    ? Schema.Literals<F>
    : never

const literalsOf = (literals: ReadonlyArray<string>): Schema.Top =>
  literals.length === 1 ? Schema.Literal(literals[0]!) : Schema.Literals(literals)

type SchemaOf<F, Cleanup> = {
  string: typeof Schema.String
  number: typeof Schema.Number
  unknown: typeof Schema.Unknown
  cleanup: Cleanup
  literals: LiteralsOf<F>
}[Caller.KindOf<F> & ("string" | "number" | "unknown" | "cleanup" | "literals")]

type Wrapped<S, Role> = S extends Schema.Top
  ? {
      plain: S
      optional: Schema.optional<S>
      defaulted: S extends Schema.WithoutConstructorDefault ? Schema.withConstructorDefault<S> : never
    }[Role & ("plain" | "optional" | "defaulted")]
  : never

type FieldsOf<T extends Caller.Tag, Cleanup> = {
  readonly [K in keyof Spec<T>["fields"]]: Wrapped<SchemaOf<Spec<T>["fields"][K], Cleanup>, Caller.RoleOf<T, K>>
}

const fieldsOf = (tag: Caller.Tag, cleanup: Schema.Top) =>
  Caller.fieldsWith<Schema.Top>(tag, {
    string: Schema.String,
    number: Schema.Number,
    unknown: Schema.Unknown,
    cleanup,
    literals: literalsOf,
    optional: (schema) => Schema.optional(schema),
    defaulted: (schema, value) =>
      (schema as Schema.Literal<string>).pipe(Schema.withConstructorDefault(Effect.succeed(value)))
  })

/**
 * The maker of this face's error classes, `cleanup` the schema of a `cleanup` field: `TaggedError<Self>()(tag)` is
 * the tag's `Schema.TaggedError` (its identifier core's), printed as C97 says.
 *
 * @since 0.1.0
 * @category constructors
 */
export const taggedError =
  <Cleanup extends Schema.Top>(cleanup: Cleanup) =>
  <Self>() =>
  <T extends Caller.Tag>(
    tag: T
  ): Schema.Class<Self, Schema.TaggedStruct<T, FieldsOf<T, Cleanup>>, Cause.YieldableError> => {
    const Base = Schema.TaggedError<Self>(`@mcp-worker/core/${tag}`)(
      tag,
      fieldsOf(tag, cleanup) as Schema.Struct.Fields
    )
    return ErrorStack.readable(Caller.withMessage(Base, tag)) as never
  }

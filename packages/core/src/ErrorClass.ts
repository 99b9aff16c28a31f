/**
 * How this face's error classes are made from `@mcp-worker/caller`'s record of each tag (C103): one record, for the
 * caller's plain classes and both Effect faces.
 *
 * @since 0.1.0
 */
import * as ErrorStack from "@mcp-worker/caller/ErrorStack"
import * as Caller from "@mcp-worker/caller/McpWorkerError"
import * as Schema from "effect/Schema"

type Spec<T extends Caller.Tag> = (typeof Caller.specs)[T]

type SchemaOf<F, Cleanup> = {
  string: typeof Schema.String
  number: typeof Schema.Number
  unknown: typeof Schema.Unknown
  cleanup: Cleanup
  literals: F extends readonly [string, ...Array<string>] ? Schema.Literal<F> : never
}[Caller.KindOf<F> & ("string" | "number" | "unknown" | "cleanup" | "literals")]

type Wrapped<S, Role> = S extends Schema.Schema.Any
  ? { plain: S; optional: Schema.optional<S>; defaulted: Defaulted<S> }[Role & ("plain" | "optional" | "defaulted")]
  : never

type Defaulted<S extends Schema.Schema.Any> = Schema.PropertySignature<":", S["Type"], never, ":", S["Encoded"], true>

type FieldsOf<T extends Caller.Tag, Cleanup> = {
  readonly [K in keyof Spec<T>["fields"]]: Wrapped<SchemaOf<Spec<T>["fields"][K], Cleanup>, Caller.RoleOf<T, K>>
}

type Field = Schema.Schema.All | Schema.PropertySignature.All

const fieldsOf = (tag: Caller.Tag, cleanup: Schema.Schema.Any) =>
  Caller.fieldsWith<Field>(tag, {
    string: Schema.String,
    number: Schema.Number,
    unknown: Schema.Unknown,
    cleanup,
    literals: (literals) => Schema.Literal(...literals),
    optional: (schema) => Schema.optional(schema as Schema.Schema.Any),
    defaulted: (schema, value) =>
      (schema as Schema.Schema.Any).pipe(
        Schema.propertySignature,
        Schema.withConstructorDefault(() => value as never)
      )
  })

/**
 * The maker of this face's error classes, `cleanup` the schema of a `cleanup` field: `TaggedError<Self>()(tag)` is
 * the tag's `Schema.TaggedError`, printed as C97 says, whose instances `@mcp-worker/caller`'s class of the tag accepts
 * and which accepts the caller's (C103).
 *
 * @since 0.1.0
 * @category constructors
 */
export const taggedError =
  <Cleanup extends Schema.Schema.Any>(cleanup: Cleanup) =>
  <Self>() =>
  <T extends Caller.Tag>(
    tag: T
  ): Schema.TaggedErrorClass<Self, T, { readonly _tag: Schema.tag<T> } & FieldsOf<T, Cleanup>> => {
    const Base = Schema.TaggedError<Self>(`@mcp-worker/core/${tag}`)(
      tag,
      fieldsOf(tag, cleanup) as Schema.Struct.Fields
    )
    return Caller.withSharedInstances(ErrorStack.readable(Caller.withMessage(Base, tag)), tag) as never
  }

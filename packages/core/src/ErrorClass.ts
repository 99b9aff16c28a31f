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

type SchemaOf<F, Cleanup> = F extends "string"
  ? typeof Schema.String
  : F extends "number"
    ? typeof Schema.Number
    : F extends "unknown"
      ? typeof Schema.Unknown
      : F extends "cleanup"
        ? Cleanup
        : F extends readonly [string, ...Array<string>]
          ? Schema.Literal<F>
          : never

type Defaulted<S extends Schema.Schema.Any> = Schema.PropertySignature<":", S["Type"], never, ":", S["Encoded"], true>

type FieldsOf<T extends Caller.Tag, Cleanup extends Schema.Schema.Any> = {
  readonly [K in keyof Spec<T>["fields"]]: K extends Caller.OptionalName<T>
    ? Schema.optional<SchemaOf<Spec<T>["fields"][K], Cleanup>>
    : K extends Caller.DefaultedName<T>
      ? Defaulted<SchemaOf<Spec<T>["fields"][K], Cleanup>>
      : SchemaOf<Spec<T>["fields"][K], Cleanup>
}

type Field = Schema.Schema.All | Schema.PropertySignature.All

const fieldsOf = (tag: Caller.Tag, cleanup: Schema.Schema.Any) =>
  Caller.fieldsWith<Field>(tag, {
    field: (field) =>
      field === "string"
        ? Schema.String
        : field === "number"
          ? Schema.Number
          : field === "unknown"
            ? Schema.Unknown
            : field === "cleanup"
              ? cleanup
              : Schema.Literal(...(field as readonly [string, ...Array<string>])),
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

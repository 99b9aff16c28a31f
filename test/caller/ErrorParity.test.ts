// C103: the caller's plain errors are core's, tag by tag: the test walks core's union (every member, each field's
// literals and optionality), builds both from the same fields and compares what a caller sees; a type-level check
// proves the field types equal.
import * as Caller from "@mcp-worker/caller/McpWorkerError"
import * as Core from "@mcp-worker/core/McpWorkerError"
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
type Simplify<A> = { [K in keyof A]: A[K] } & {}
type CoreEncoded = Schema.Schema.Encoded<typeof Core.McpWorkerError>
type SameFields = {
  readonly [T in Caller.Tag]: Equals<
    Simplify<Extract<CoreEncoded, { _tag: T }>>,
    Simplify<Caller.Fields<T> & { readonly _tag: T }>
  >
}
const sameTags: Equals<CoreEncoded["_tag"], Caller.Tag> = true
const sameFields: SameFields[Caller.Tag] = true
const sameCleanup: Equals<Core.CleanupSummary, Caller.CleanupSummary> = true

interface Field {
  readonly name: string
  readonly optional: boolean
  readonly values: ReadonlyArray<unknown>
  readonly spec: Caller.FieldSpec
}

const sampleCleanup: Caller.CleanupSummary = {
  activeProcesses: 1,
  signalled: { term: 1, kill: 0 },
  escaped: 0,
  durationMs: 12,
  sessionTerminated: null
}

// A field's values (each of its literals) and the spec it stands for, read off core's encoded AST.
const fieldOf = (property: SchemaAST.PropertySignature): Field => {
  const name = String(property.name)
  const types = (property.type._tag === "Union" ? property.type.types : [property.type]).filter(
    (type) => type._tag !== "UndefinedKeyword"
  )
  const literals = types.flatMap((type) => (type._tag === "Literal" ? [type.literal] : []))
  if (literals.length === types.length)
    return { name, optional: property.isOptional, values: literals, spec: literals as Array<string> }
  const [type] = types
  const [spec, value]: [Caller.FieldSpec, unknown] =
    type!._tag === "StringKeyword"
      ? ["string", `${name}-1`]
      : type!._tag === "NumberKeyword"
        ? ["number", 7]
        : type!._tag === "UnknownKeyword"
          ? ["unknown", { detail: [1, "two"] }]
          : ["cleanup", sampleCleanup]
  return { name, optional: property.isOptional, values: [value], spec }
}

const membersOf = Core.McpWorkerError.members.map((member: Schema.Schema<any, any>) => {
  const ast = Schema.encodedSchema(member).ast as SchemaAST.TypeLiteral
  const tagField = ast.propertySignatures.find((property) => property.name === "_tag")!
  const tag = (tagField.type as SchemaAST.Literal).literal as Caller.Tag
  const fields = ast.propertySignatures.filter((property) => property.name !== "_tag").map(fieldOf)
  return { member, tag, fields }
})

// The first values, then each literal and each absent optional field in turn: every message branch is reached.
const samplesOf = (fields: ReadonlyArray<Field>): Array<Record<string, unknown>> => {
  const base = Object.fromEntries(fields.map((field) => [field.name, field.values[0]]))
  const variants = fields.flatMap((field) => [
    ...field.values.slice(1).map((value) => ({ ...base, [field.name]: value })),
    ...(field.optional ? [Object.fromEntries(Object.entries(base).filter(([name]) => name !== field.name))] : [])
  ])
  return [base, ...variants, ...(base["requestId"] === undefined ? [] : [{ ...base, requestId: "" }])]
}

const seen = (error: Error & { readonly _tag: string; readonly delivery?: unknown }) => ({
  tag: error._tag,
  keys: Object.keys(error).sort(),
  delivery: error.delivery,
  message: error.message,
  name: error.name,
  header: String(error),
  firstLine: error.stack?.split("\n")[0]
})

describe("caller errors", () => {
  it("compile with core's field types", () => {
    assert.isTrue(sameTags && sameFields && sameCleanup)
  })

  it("have every tag of core's union, with its fields, optionality and literals", () => {
    assert.sameMembers(
      membersOf.map(({ tag }) => tag),
      Object.keys(Caller.specs)
    )
    for (const { tag, fields } of membersOf) {
      const spec: Caller.ErrorSpec = Caller.specs[tag]
      assert.deepStrictEqual(
        Object.fromEntries(fields.map((field) => [field.name, field.spec])),
        { ...spec.fields },
        tag
      )
      assert.sameMembers(
        fields.filter((field) => field.optional).map((field) => field.name),
        [...(spec.optional ?? [])],
        tag
      )
    }
  })

  it("C116: every tag of the union states its delivery", () => {
    assert.isAbove(membersOf.length, 0)
    for (const { tag, fields } of membersOf) {
      const delivery = fields.find((field) => field.name === "delivery")
      assert.isDefined(delivery, `${tag} has no delivery`)
      assert.isFalse(delivery!.optional, `${tag}'s delivery is optional`)
      assert.isNotEmpty(delivery!.values, tag)
      for (const value of delivery!.values) assert.include(["delivered", "not_sent", "unknown"], value, tag)
    }
  })

  it("default what core defaults, and nothing else", () => {
    for (const { member, tag, fields } of membersOf) {
      const spec: Caller.ErrorSpec = Caller.specs[tag]
      const sample = samplesOf(fields)[0]!
      for (const field of fields.filter((field) => !field.optional)) {
        const { [field.name]: _, ...without } = sample
        const coreBuilds = (() => {
          try {
            new (member as unknown as new (fields: unknown) => unknown)(without)
            return true
          } catch {
            return false
          }
        })()
        assert.strictEqual(coreBuilds, spec.defaults?.[field.name] !== undefined, `${tag}.${field.name}`)
        if (coreBuilds) {
          const error = new (Caller.classes[tag] as unknown as new (fields: unknown) => Caller.McpWorkerError)(without)
          assert.strictEqual((error as unknown as Record<string, unknown>)[field.name], spec.defaults![field.name])
        }
      }
    }
  })

  it("equal core's instances: tag, fields, delivery, message, stack header", () => {
    for (const { member, tag, fields } of membersOf) {
      for (const sample of samplesOf(fields)) {
        const core = Schema.decodeUnknownSync(member)({ _tag: tag, ...sample }) as Core.McpWorkerError
        const caller = new (Caller.classes[tag] as unknown as new (fields: unknown) => Caller.McpWorkerError)(sample)
        assert.deepStrictEqual(seen(caller), seen(core), tag)
        assert.deepStrictEqual<object>({ ...caller }, { ...core }, tag)
      }
    }
  })

  it("accept each other's instances with instanceof, and no other tag's", () => {
    for (const { member, tag, fields } of membersOf) {
      const sample = samplesOf(fields)[0]!
      const core = Schema.decodeUnknownSync(member)({ _tag: tag, ...sample })
      const caller = Caller.fromEncoded({ _tag: tag, ...sample })
      assert.isTrue(core instanceof Caller.classes[tag], tag)
      assert.isTrue(caller instanceof (member as unknown as Function), tag)
      assert.isTrue(Caller.isMcpWorkerError(core) && Caller.isMcpWorkerError(caller), tag)
      for (const other of membersOf.filter((other) => other.tag !== tag)) {
        assert.isFalse(core instanceof Caller.classes[other.tag], `${tag} as ${other.tag}`)
        assert.isFalse(caller instanceof (other.member as unknown as Function), `${tag} as ${other.tag}`)
      }
    }
  })

  it("keep the ordinary instanceof of a subclass", () => {
    class Mine extends Caller.WorkerBusy {}
    class CoreMine extends Core.WorkerBusy {}
    const plain = new Caller.WorkerBusy({ workerId: "w", requestId: "r", delivery: "not_sent" })
    const mine = new Mine({ workerId: "w", requestId: "r", delivery: "not_sent" })
    assert.isFalse(plain instanceof Mine)
    assert.isFalse(plain instanceof CoreMine)
    assert.isTrue(mine instanceof Mine && mine instanceof Caller.WorkerBusy && mine instanceof Core.WorkerBusy)
    assert.isTrue(new CoreMine({ workerId: "w", requestId: "r", delivery: "not_sent" }) instanceof Caller.WorkerBusy)
  })

  it("read core's encoded errors back, and core encodes theirs", () => {
    for (const { member, tag, fields } of membersOf) {
      for (const sample of samplesOf(fields)) {
        const core = Schema.decodeUnknownSync(member)({ _tag: tag, ...sample })
        const encoded = Schema.encodeSync(Core.McpWorkerError)(core as never)
        const caller = Caller.fromEncoded(encoded)
        assert.deepStrictEqual(seen(caller), seen(core as Core.McpWorkerError), tag)
        assert.deepStrictEqual(Schema.encodeSync(Core.McpWorkerError)(caller as never), encoded, tag)
      }
    }
  })

  it("refuse what is not an encoded error, naming the field", () => {
    assert.throws(() => Caller.fromEncoded({ _tag: "Nope" }), TypeError, '_tag "Nope"')
    assert.throws(() => Caller.fromEncoded(null), TypeError, "_tag undefined")
    assert.throws(
      () => Caller.fromEncoded({ _tag: "WorkerBusy", workerId: "w", requestId: 1, delivery: "not_sent" }),
      TypeError,
      "field requestId"
    )
    assert.throws(
      () => Caller.fromEncoded({ _tag: "WorkerBusy", workerId: "w", requestId: "r", delivery: "unknown" }),
      TypeError,
      "field delivery"
    )
  })

  it("are Effect errors on core's side still", () => {
    const error = new Core.WorkerBusy({ workerId: "w", requestId: "r", delivery: "not_sent" })
    assert.isTrue(Schema.is(Core.McpWorkerError)(error))
    assert.strictEqual(
      Schema.decodeUnknownSync(Core.McpWorkerError)(Schema.encodeSync(Core.McpWorkerError)(error))._tag,
      "WorkerBusy"
    )
  })
})

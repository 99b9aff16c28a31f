import * as ToolDeclarations from "@mcp-worker/core/agentHost/ToolDeclarations"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { fileURLToPath } from "node:url"
import { compile } from "./declarationsCompiler.js"

const compiles = (text: string, check?: string) => {
  const problems = compile(text, check)
  assert.deepStrictEqual(problems, [], `${text}\n${check ?? ""}`)
}

const handWritten = [
  {
    name: "get_sum",
    title: "Sum",
    description: "Adds two numbers.\nComments end with */ — not this one.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number", description: "the first */ number" }, b: { type: "number" } },
      required: ["a", "b"]
    },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "get-weather.v2",
    inputSchema: {
      type: "object",
      properties: { "city name": { type: "string", format: "uri" }, units: { enum: ["c", "f"] } },
      required: ["city name"]
    },
    outputSchema: {
      type: "object",
      properties: { temperature: { type: ["number", "null"] }, summary: { type: "string" } },
      required: ["temperature"]
    }
  },
  {
    name: "tree",
    inputSchema: {
      type: "object",
      properties: {
        root: { $ref: "#/$defs/Node" },
        legacy: { $ref: "#/definitions/Leaf" },
        loop: { $ref: "#/$defs/Loop" },
        remote: { $ref: "https://example.com/schema.json" },
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], items: false, minItems: 2 }
      },
      $defs: {
        Node: {
          type: "object",
          properties: {
            children: { type: "array", items: { $ref: "#/$defs/Node" } },
            leaf: { $ref: "#/definitions/Leaf" }
          },
          required: ["children"]
        },
        Loop: { anyOf: [{ $ref: "#/$defs/Loop" }, { type: "string" }] }
      },
      definitions: { Leaf: { oneOf: [{ const: "x" }, { type: "number", nullable: true }] } }
    }
  },
  { name: "then", inputSchema: { type: "object" } },
  { name: "1st tool", inputSchema: { type: "object", additionalProperties: false } }
]

describe("ToolDeclarations", () => {
  it("renders hand-written tools into declarations that compile with strict: true", () => {
    const text = ToolDeclarations.render({ tools: handWritten } as any)
    compiles(text)
    assert.include(text, "get_sum(args: GetSumArgs, options?: ToolCallOptions): Promise<CallToolResult>")
    assert.include(
      text,
      "get_weather_v2(args: GetWeatherV2Args, options?: ToolCallOptions): Promise<GetWeatherV2Result>"
    )
    assert.include(text, '"city name": string')
    assert.include(text, 'units?: "c" | "f"')
    assert.include(text, "temperature: number | null")
    assert.include(text, "export type GetWeatherV2Result = StructuredResult<GetWeatherV2Output>")
    assert.include(text, "children: Array<TreeNode>")
    assert.include(text, 'export type TreeLeaf = "x" | number | null')
    assert.include(text, "pair?: [string, number]")
    assert.match(text, /remote\?: unknown \/\* a \$ref outside this schema \*\//)
    assert.match(
      text,
      /export type TreeLoop = unknown \/\* a \$ref that refers to itself[^*]*\*\/ \| string|export type TreeLoop = unknown/
    )
    // Doc comments: the description, escaped; annotations as tags; the real name of a renamed tool.
    assert.include(text, "Comments end with *\\/ — not this one.")
    assert.include(text, "@readOnlyHint true")
    assert.include(text, '@tool "get-weather.v2"')
    assert.include(text, "then_(args?: ThenArgs")
    assert.include(text, "_1st_tool(args?: T1stToolArgs")
    assert.include(text, 'readonly _1st_tool: "1st tool"')
    assert.include(text, "export type T1stToolArgs = { [key: string]: never }")
  })

  it("the declared types accept what the schemas accept and refuse the rest", () => {
    const text = ToolDeclarations.render({ tools: handWritten } as any)
    compiles(
      text,
      `import type { Tools, GetSumArgs, GetWeatherV2Args, TreeArgs } from "./tools"
export const sum: GetSumArgs = { a: 1, b: 2 }
// @ts-expect-error b is required
export const half: GetSumArgs = { a: 1 }
// @ts-expect-error a is a number
export const wrong: GetSumArgs = { a: "1", b: 2 }
export const weather: GetWeatherV2Args = { "city name": "Oslo", units: "c" }
// @ts-expect-error not one of the units
export const kelvin: GetWeatherV2Args = { "city name": "Oslo", units: "k" }
export const tree: TreeArgs = { root: { children: [{ children: [], leaf: null }], leaf: "x" }, pair: ["a", 1] }
// @ts-expect-error a pair of two
export const single: TreeArgs = { pair: ["a"] }
export const call = async (tools: Tools) => {
  const result = await tools.get_weather_v2({ "city name": "Oslo" })
  if (result.isError !== true) {
    const t: number | null = result.structuredContent.temperature
    return t
  }
  const saved = await tools.get_sum({ a: 1, b: 2 }, { saveTo: "/tmp/x.json", timeout: "5 seconds" })
  // With a spill, a structured tool's answer may be a SpilledResult, which has no structuredContent to read.
  const spilled = await tools.get_weather_v2({ "city name": "Oslo" }, { onTooLarge: { spill: "/tmp" } })
  if (spilled.spilled === true) return spilled.path.length + spilled.limit
  // @ts-expect-error not narrowed to a StructuredResult yet: it may have spilled
  const unchecked: number | null = spilled.structuredContent.temperature
  // A result that spilled is a CallToolResult too: its content says where it went.
  const plain = await tools.get_sum({ a: 1, b: 2 }, { onTooLarge: "fail" })
  return saved.sha256 + plain.content.length + String(unchecked)
}`
    )
  })

  it("a namespace wraps everything, so several servers fit in one file", () => {
    const a = ToolDeclarations.render(handWritten as any, { namespace: "first", name: "Api", title: "server */ one" })
    const b = ToolDeclarations.render(handWritten.slice(0, 2) as any, { namespace: "second-server" })
    assert.include(a, "export declare namespace first {")
    assert.include(b, "export declare namespace SecondServer {")
    assert.include(a, "export interface Api {")
    compiles(`${a}\n${b}`)
  })

  // The declarations stand alone (no import), so they render the caller's SavedResult from its fields' text: the type
  // that text names is proved the caller's own here.
  it("declares SavedResult exactly as the caller's ResultFile does", () => {
    const resultFile = fileURLToPath(new URL("../../packages/caller/src/ResultFile.js", import.meta.url))
    const check = `import type * as Declared from "./tools"
import type * as ResultFile from ${JSON.stringify(resultFile)}
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const same: Same<Declared.SavedResult, ResultFile.SavedResult> = true`
    // The caller's own files need Node's types, which this program leaves out: only the check's verdict counts.
    const problems = compile(ToolDeclarations.render({ tools: [] }), check).filter((p) => p.startsWith("/virtual/"))
    assert.deepStrictEqual(problems, [], check)
  })

  it("no tools, and entries that are not tools, still compile", () => {
    compiles(ToolDeclarations.render({ tools: [] }))
    const text = ToolDeclarations.render({
      tools: [null, { description: "no name" }, { name: "ok", inputSchema: 5 }]
    } as any)
    assert.include(text, "2 entries without a name left out")
    compiles(text)
  })

  it("method names: identifiers kept, the rest made safe and unique", () => {
    assert.deepStrictEqual(
      ToolDeclarations.methodNames(["a-b", "a_b", "a b", "then", "__proto__", "", "9", "ok", "ok"]),
      [
        ["a_b_2", "a-b"],
        ["a_b", "a_b"],
        ["a_b_3", "a b"],
        ["then_", "then"],
        ["__proto___", "__proto__"],
        ["_", ""],
        ["_9", "9"],
        ["ok", "ok"],
        ["ok_2", "ok"]
      ]
    )
  })
})

// Generated schemas: every feature the renderer handles, and junk it must survive.
const propertyKey = fc.oneof(
  fc.constantFrom("a", "b", "value", "__proto__", "constructor", "with space", "kebab-case", "0", "é", 'quote"d', "*/"),
  fc.string({ maxLength: 6 })
)
const defNames = ["Node", "item", "self-ref", "Déf"] as const

const schema: fc.Arbitrary<unknown> = fc.letrec<{ schema: unknown }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(
      { type: "string" },
      { type: "string", format: "date-time" },
      { type: "number" },
      { type: "integer" },
      { type: "boolean" },
      { type: "null" },
      { type: ["string", "null"] },
      { type: "string", nullable: true },
      {},
      true,
      false,
      { type: "object" },
      { type: "array" },
      { type: "unknown-type" },
      { $ref: "#" },
      { $ref: "#/nowhere" },
      { $ref: "other.json#/x" },
      { $ref: 5 },
      { $ref: "#/$defs/%ZZ" },
      ...defNames.map((name) => ({ $ref: `#/$defs/${name}` })),
      { $ref: "#/definitions/Legacy" }
    ),
    fc.record({ enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 4 }) }),
    fc.record({ const: fc.jsonValue({ maxDepth: 2 }) }),
    fc.record({ type: fc.subarray(["string", "number", "boolean", "null", "object", "array"], { minLength: 1 }) }),
    fc
      .record(
        {
          properties: fc.dictionary(propertyKey, tie("schema"), { maxKeys: 4 }),
          additionalProperties: fc.oneof(fc.boolean(), tie("schema")),
          patternProperties: fc.dictionary(fc.constantFrom("^x", "^y"), tie("schema"), { maxKeys: 1 }),
          description: fc.string({ maxLength: 12 })
        },
        { requiredKeys: ["properties"] }
      )
      .chain((object) =>
        fc
          .subarray([...Object.keys(object.properties), "missing"])
          .map((required) => ({ type: "object", ...object, required }))
      ),
    fc.record({ type: fc.constant("array"), items: tie("schema") }),
    fc.record(
      {
        type: fc.constant("array"),
        prefixItems: fc.array(tie("schema"), { maxLength: 3 }),
        items: fc.oneof(fc.constant(false), tie("schema")),
        minItems: fc.nat(3)
      },
      { requiredKeys: ["type", "prefixItems"] }
    ),
    fc.record({
      items: fc.array(tie("schema"), { maxLength: 3 }),
      additionalItems: fc.oneof(fc.boolean(), tie("schema"))
    }),
    fc.record({ anyOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }) }),
    fc.record({ oneOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }) }),
    fc.record({ allOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }) }),
    fc.record({ $ref: fc.constantFrom(...defNames.map((name) => `#/$defs/${name}`)), type: fc.constant("object") }),
    fc.jsonValue({ maxDepth: 2 })
  )
})).schema

const rootSchema = fc.record({
  type: fc.constant("object"),
  properties: fc.dictionary(propertyKey, schema, { maxKeys: 4 }),
  $defs: fc.record(Object.fromEntries(defNames.map((name) => [name, schema])) as Record<string, fc.Arbitrary<unknown>>),
  definitions: fc.record({ Legacy: schema })
})

const toolName = fc.oneof(
  fc.constantFrom("get_sum", "get-sum", "then", "a.b", "1x", "tool"),
  fc.string({ maxLength: 8 })
)

const tool = fc.record(
  {
    name: toolName,
    description: fc.string({ maxLength: 20 }),
    inputSchema: fc.oneof({ weight: 4, arbitrary: rootSchema }, { weight: 1, arbitrary: schema }),
    outputSchema: fc.oneof(rootSchema, schema),
    annotations: fc.record(
      { title: fc.string({ maxLength: 8 }), readOnlyHint: fc.boolean(), "odd key */": fc.jsonValue({ maxDepth: 1 }) },
      { requiredKeys: [] }
    )
  },
  { requiredKeys: ["name", "inputSchema"] }
)

// Shapes with a known set of valid values: a schema, an arbitrary of values it accepts.
interface Shape {
  readonly schema: Record<string, unknown>
  readonly value: fc.Arbitrary<unknown>
  /** A `$defs` entry the schema refers to, if any. */
  readonly defs?: Readonly<Record<string, Record<string, unknown>>>
}

const leafShape: fc.Arbitrary<Shape> = fc.constantFrom<Shape>(
  { schema: { type: "string" }, value: fc.string({ maxLength: 5 }) },
  { schema: { type: "integer" }, value: fc.integer() },
  { schema: { type: "boolean" }, value: fc.boolean() },
  { schema: { type: "null" }, value: fc.constant(null) },
  { schema: { type: ["string", "null"] }, value: fc.option(fc.string({ maxLength: 3 }), { nil: null }) },
  { schema: { enum: ["red", "green", 3] }, value: fc.constantFrom("red", "green", 3) },
  { schema: { const: "fixed" }, value: fc.constant("fixed") },
  { schema: { type: "number", nullable: true }, value: fc.option(fc.integer(), { nil: null }) }
)

// The `$defs` of several shapes together; `undefined` when one name stands for two schemas.
const mergeDefs = (shapes: ReadonlyArray<Shape>): Record<string, Record<string, unknown>> | undefined => {
  const out: Record<string, Record<string, unknown>> = {}
  for (const shape of shapes) {
    for (const [name, schema] of Object.entries(shape.defs ?? {})) {
      if (name in out && JSON.stringify(out[name]) !== JSON.stringify(schema)) return undefined
      out[name] = schema
    }
  }
  return out
}

const combine = (
  shapes: ReadonlyArray<Shape>,
  schema: Record<string, unknown>,
  value: fc.Arbitrary<unknown>
): Shape => {
  const defs = mergeDefs(shapes)
  return defs === undefined ? { schema: { type: "null" }, value: fc.constant(null) } : { schema, value, defs }
}

const shape: fc.Arbitrary<Shape> = fc.letrec<{ shape: Shape }>((tie) => ({
  shape: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leafShape,
    fc
      .array(tie("shape"), { minLength: 1, maxLength: 3 })
      .map((members) =>
        combine(members, { anyOf: members.map((m) => m.schema) }, fc.oneof(...members.map((m) => m.value)))
      ),
    tie("shape").map((item) =>
      combine([item], { type: "array", items: item.schema }, fc.array(item.value, { maxLength: 3 }))
    ),
    fc
      .array(tie("shape"), { minLength: 1, maxLength: 3 })
      .map((items) =>
        combine(
          items,
          { type: "array", prefixItems: items.map((i) => i.schema), items: false, minItems: items.length },
          fc.tuple(...items.map((i) => i.value))
        )
      ),
    fc.dictionary(propertyKey, tie("shape"), { minKeys: 1, maxKeys: 3 }).map((properties) => {
      const keys = Object.keys(properties)
      return combine(
        Object.values(properties),
        {
          type: "object",
          properties: Object.fromEntries(keys.map((k) => [k, properties[k].schema])),
          required: keys,
          additionalProperties: false
        },
        fc.record(Object.fromEntries(keys.map((k) => [k, properties[k].value])))
      )
    }),
    fc.tuple(tie("shape"), fc.constantFrom("Shared", "Other", "with space", "x~y/z")).map(([def, name]) => {
      const ref = `#/$defs/${encodeURIComponent(name.replaceAll("~", "~0").replaceAll("/", "~1"))}`
      const defs = mergeDefs([def, { schema: {}, value: fc.constant(null), defs: { [name]: def.schema } }])
      return defs === undefined ? def : { schema: { $ref: ref }, value: def.value, defs }
    })
  )
})).shape

// Literal keys must survive as data: JSON text is a TypeScript expression, and "__proto__" stays an own key in it.
const literal = (value: unknown): string => JSON.stringify(value)

describe("ToolDeclarations properties", () => {
  // Found by the property below: a union member whose optional tuple element refers back to the root by name is a
  // circular type alias to TypeScript, as one with a rest is.
  it("a $ref to the root inside a tuple's optional elements, in a union, compiles", () => {
    const inner = { items: [{ items: [{ $ref: "#" }], additionalItems: false }], additionalItems: false }
    const tuple = { type: "array", prefixItems: [inner], items: false }
    const inputSchema = { oneOf: [tuple, { type: "array", prefixItems: [] }] }
    compiles(ToolDeclarations.render({ tools: [{ name: "nested", inputSchema }] } as any, {}))
  })

  it("every generated tool list renders to declarations that compile", () => {
    fc.assert(
      fc.property(
        fc.array(tool, { maxLength: 6 }),
        fc.option(fc.constantFrom("ns", "my-server"), { nil: undefined }),
        (tools, namespace) => {
          const text = ToolDeclarations.render({ tools } as any, { namespace })
          compiles(text)
        }
      ),
      { numRuns: 40 }
    )
  })

  it("a value the schema accepts type-checks against the declared type; one missing a property or with an extra does not", () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.tuple(fc.dictionary(propertyKey, shape, { minKeys: 1, maxKeys: 3 }), fc.boolean()), {
            minLength: 1,
            maxLength: 4
          })
          .chain((roots) =>
            fc.tuple(
              fc.constant(roots),
              fc.tuple(
                ...roots.map(([properties]) =>
                  fc.record(Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, s.value])))
                )
              )
            )
          ),
        ([roots, values]) => {
          const tools = roots.map(([properties, closed], i) => {
            const keys = Object.keys(properties)
            const defs = mergeDefs(Object.values(properties))
            return {
              name: `tool_${i}`,
              inputSchema: {
                type: "object",
                properties: Object.fromEntries(keys.map((k) => [k, properties[k].schema])),
                required: keys,
                ...(closed ? { additionalProperties: false } : {}),
                $defs: defs
              }
            }
          })
          fc.pre(tools.every((t) => t.inputSchema.$defs !== undefined))
          const text = ToolDeclarations.render({ tools } as any)
          const lines = ['import type * as T from "./tools"']
          tools.forEach((t, i) => {
            const name = `T.Tool${i}Args`
            const value = values[i] as Record<string, unknown>
            const keys = Object.keys(value)
            lines.push(`export const ok${i}: ${name} = ${literal(value)}`)
            const missing = Object.fromEntries(keys.slice(1).map((k) => [k, value[k]]))
            lines.push(
              "// @ts-expect-error a required property is missing",
              `export const missing${i}: ${name} = ${literal(missing)}`
            )
            if (roots[i][1]) {
              lines.push(
                "// @ts-expect-error a closed object has no other property",
                `export const extra${i}: ${name} = ${literal({ ...value, not_in_the_schema_: 1 })}`
              )
            }
          })
          compiles(text, lines.join("\n"))
        }
      ),
      { numRuns: 40 }
    )
  })
})

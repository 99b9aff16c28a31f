// C62's pure part: the owner's reading of `x-mcp-header` declarations and its header encoding are the client SDK's
// own rules. The SDK keeps its scan and encoder inside `callTool`/`listTools` (not exported), so this test loads them
// from the SDK's build and compares, over generated schemas and values, what both decide.
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as ParamHeaders from "../../packages/core/src/internal/owner/paramHeaders.js"

interface SdkScan {
  readonly valid: boolean
  readonly reason?: string
  readonly declarations?: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly headerName: string }>
}
interface Sdk {
  readonly scan: (schema: unknown) => SdkScan
  readonly build: (
    declarations: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly headerName: string }>,
    args: unknown
  ) => Record<string, string>
  readonly encode: (value: string) => string
}

// The chunk of the SDK's build that defines them, and the names its export list gives them.
const loadSdk = async (): Promise<Sdk> => {
  const dist = path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/client"))
  for (const file of fs.readdirSync(dist).filter((name) => name.endsWith(".mjs"))) {
    const text = fs.readFileSync(path.join(dist, file), "utf8")
    if (!text.includes("function scanXMcpHeaderDeclarations(")) continue
    const alias = (name: string) => new RegExp(`\\b${name} as (\\w+)`).exec(text)?.[1]
    const module = await import(pathToFileURL(path.join(dist, file)).href)
    return {
      scan: module[alias("scanXMcpHeaderDeclarations")!],
      build: module[alias("buildMcpParamHeaders")!],
      encode: module[alias("encodeMcpParamValue")!]
    }
  }
  throw new Error("the client SDK's build has no scanXMcpHeaderDeclarations")
}

// Mostly valid names and types, so that valid declarations are common; every kind of fault is in reach.
const headerName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("Region", "X-Id", "Priority", "ok_1", "Flag", "Tenant") },
  { weight: 1, arbitrary: fc.constantFrom("region", "", "My Region", "Région", "a:b", "Tab\t") },
  { weight: 1, arbitrary: fc.string({ minLength: 0, maxLength: 6 }) }
)
const type = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("string", "integer", "boolean") },
  { weight: 1, arbitrary: fc.constantFrom("number", "object", "array", "null", undefined) }
)
const leaf = fc.oneof(
  fc.record({ type, description: fc.string({ maxLength: 3 }) }, { requiredKeys: ["type"] }),
  fc.record({ type, "x-mcp-header": headerName })
)
const keywords = ["items", "oneOf", "anyOf", "allOf", "not", "if", "$defs", "additionalProperties"] as const
const properties = (node: fc.Arbitrary<unknown>) =>
  fc.dictionary(fc.constantFrom("a", "b", "region", "n"), node, { maxKeys: 3 })
const node: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: leaf },
    {
      weight: 2,
      arbitrary: fc.record(
        { type: fc.constant("object"), properties: properties(tie("node")), "x-mcp-header": headerName },
        { requiredKeys: ["type", "properties"] }
      )
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...keywords), tie("node")).map(([keyword, sub]) => ({
        type: "object",
        [keyword]: keyword === "$defs" ? { x: sub } : keyword.endsWith("Of") ? [sub] : sub
      }))
    }
  )
})).node
// A tool's inputSchema: an object at the root (a declaration there is a fault too, now and then).
const schema = fc.oneof(
  { weight: 8, arbitrary: fc.record({ type: fc.constant("object"), properties: properties(node) }) },
  { weight: 1, arbitrary: node }
)

const value = fc.oneof(
  fc.string(),
  fc.fullUnicodeString({ maxLength: 8 }),
  fc.constantFrom(" padded ", "=?base64?abc?=", "", "line1\nline2", "\tx", "plain"),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
  fc.array(fc.integer(), { maxLength: 2 })
)

describe("ParamHeaders (C62)", () => {
  it("scan: valid exactly when the SDK's scan says so, with the same declarations", async () => {
    const sdk = await loadSdk()
    const seen = { declared: 0, invalid: 0 }
    fc.assert(
      fc.property(schema, (inputSchema) => {
        const ours = ParamHeaders.scan(inputSchema)
        const theirs = sdk.scan(inputSchema)
        if (!ours.valid) seen.invalid++
        else if (ours.declarations.length > 0) seen.declared++
        assert.strictEqual(ours.valid, theirs.valid, JSON.stringify(inputSchema))
        if (ours.valid) {
          assert.deepStrictEqual(
            ours.declarations.map((d) => [d.path, d.header]),
            (theirs.declarations ?? []).map((d) => [d.path, d.headerName])
          )
        }
      }),
      { numRuns: 2000 }
    )
    // Both sides of the rule were exercised, not only schemas without declarations.
    assert.isAbove(seen.declared, 100, JSON.stringify(seen))
    assert.isAbove(seen.invalid, 100, JSON.stringify(seen))
  })

  it("headersFor and encode: the SDK's headers for the same declarations and arguments", async () => {
    const sdk = await loadSdk()
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom("region", "priority", "flag"), value), (args) => {
        const declarations = [
          { path: ["region"], header: "Region" },
          { path: ["priority"], header: "Priority" },
          { path: ["flag"], header: "Flag" }
        ]
        const theirs = sdk.build(
          declarations.map((d) => ({ path: d.path, headerName: d.header })),
          args
        )
        assert.deepStrictEqual(ParamHeaders.headersFor(declarations, args) ?? {}, theirs)
      }),
      { numRuns: 2000 }
    )
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.fullUnicodeString()), (text) =>
        assert.strictEqual(ParamHeaders.encode(text), sdk.encode(text))
      )
    )
  })

  it("the rules, case by case: what is refused and why", () => {
    const scanOf = (properties: Record<string, unknown>) => ParamHeaders.scan({ type: "object", properties })
    const reasonOf = (properties: Record<string, unknown>) => {
      const scanned = scanOf(properties)
      return scanned.valid ? "valid" : scanned.reason
    }
    assert.deepStrictEqual(scanOf({ r: { type: "string", "x-mcp-header": "Region" } }), {
      valid: true,
      declarations: [{ path: ["r"], header: "Region" }]
    })
    assert.match(reasonOf({ r: { type: "string", "x-mcp-header": "" } }), /must be a string/)
    assert.match(reasonOf({ r: { type: "number", "x-mcp-header": "N" } }), /string, integer or boolean/)
    assert.match(reasonOf({ r: { type: "object", "x-mcp-header": "O" } }), /string, integer or boolean/)
    assert.match(reasonOf({ r: { type: "string", "x-mcp-header": "A B" } }), /RFC 9110 token/)
    assert.match(
      reasonOf({ a: { type: "string", "x-mcp-header": "Id" }, b: { type: "string", "x-mcp-header": "id" } }),
      /declared twice/
    )
    assert.match(
      reasonOf({ list: { type: "array", items: { type: "string", "x-mcp-header": "I" } } }),
      /through 'properties' alone/
    )
    // Nested properties are reachable; a value at their path is mirrored.
    const nested = scanOf({ outer: { type: "object", properties: { id: { type: "integer", "x-mcp-header": "Id" } } } })
    assert.isTrue(nested.valid)
    if (nested.valid) {
      assert.deepStrictEqual(ParamHeaders.headersFor(nested.declarations, { outer: { id: 12 } }), {
        "Mcp-Param-Id": "12"
      })
    }
  })

  it("excludeInvalid: only invalid tools go; what is learnt is per tool name and replaced on each list", () => {
    const known = ParamHeaders.makeKnown()
    const valid = {
      name: "v",
      inputSchema: { type: "object", properties: { r: { type: "string", "x-mcp-header": "R" } } }
    }
    const plain = { name: "p", inputSchema: { type: "object" } }
    const invalid = {
      name: "i",
      inputSchema: { type: "object", properties: { n: { type: "number", "x-mcp-header": "N" } } }
    }
    assert.strictEqual(ParamHeaders.excludeInvalid(known, { tools: [valid, plain] }), undefined)
    assert.deepStrictEqual(ParamHeaders.excludeInvalid(known, { tools: [valid, invalid, plain], nextCursor: "c" }), {
      tools: [valid, plain],
      nextCursor: "c"
    })
    assert.deepStrictEqual([...known.declared.keys()], ["v"])
    assert.deepStrictEqual([...known.excluded], ["i"])
    assert.deepStrictEqual(ParamHeaders.ofCall(known, { name: "i", arguments: {} }), Either.left("excluded"))
    assert.deepStrictEqual(
      ParamHeaders.ofCall(known, { name: "v", arguments: { r: "x" } }),
      Either.right({ "Mcp-Param-R": "x" })
    )
    assert.deepStrictEqual(ParamHeaders.ofCall(known, { name: "p", arguments: {} }), Either.right(undefined))
    // The server fixed the tool: listed again, it is valid and callable.
    ParamHeaders.excludeInvalid(known, { tools: [{ ...invalid, inputSchema: plain.inputSchema }] })
    assert.deepStrictEqual([...known.excluded], [])
  })
})

// C59's pure part: what a tool filter accepts (every refusal with its path), what its globs match (checked against a
// regular expression built from the same pattern), that no name makes matching slow, and how a tools/list result is
// filtered (every member but the refused tools kept as the server sent it).
import * as ToolFilter from "@mcp-worker/core/ToolFilter"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as internal from "../../packages/core/src/internal/toolFilter.js"

const refusal = (input: unknown) => {
  const checked = ToolFilter.check(input)
  return Either.isLeft(checked) ? [checked.left.path, checked.left.where, checked.left.delivery] : "accepted"
}

// The reference: the same glob as an anchored regular expression (only ever run on short generated names).
const reference = (pattern: string, name: string): boolean =>
  new RegExp(
    `^${Array.from(pattern)
      .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")))
      .join("")}$`,
    "su"
  ).test(name)

describe("ToolFilter (C59)", () => {
  it("check: a filter is an object of allow and deny pattern lists; no filter is undefined", () => {
    assert.deepStrictEqual(ToolFilter.check(undefined), Either.right(undefined))
    assert.deepStrictEqual(ToolFilter.check({}), Either.right(undefined))
    assert.deepStrictEqual(ToolFilter.check({ allow: undefined, deny: undefined }), Either.right(undefined))
    assert.deepStrictEqual(
      ToolFilter.check({ allow: ["browser_*", "ec?o"], deny: ["browser_install"] }),
      Either.right({ allow: ["browser_*", "ec?o"], deny: ["browser_install"] })
    )
    // An empty allow list is a filter that offers nothing.
    assert.deepStrictEqual(ToolFilter.check({ allow: [] }), Either.right({ allow: [] }))
  })

  it("check: every refusal is InvalidInput at the path of the value, not sent", () => {
    const at = (path: string) => [path, "config", "not_sent"]
    assert.deepStrictEqual(refusal(null), at("options.tools"))
    assert.deepStrictEqual(refusal(["echo"]), at("options.tools"))
    assert.deepStrictEqual(refusal("echo"), at("options.tools"))
    assert.deepStrictEqual(refusal(new Map()), at("options.tools"))
    assert.deepStrictEqual(refusal({ only: ["echo"] }), at("options.tools.only"))
    assert.deepStrictEqual(refusal({ allow: "echo" }), at("options.tools.allow"))
    assert.deepStrictEqual(refusal({ deny: { 0: "echo" } }), at("options.tools.deny"))
    assert.deepStrictEqual(refusal({ allow: ["echo", "inc", 7] }), at("options.tools.allow[2]"))
    assert.deepStrictEqual(refusal({ allow: ["echo"], deny: ["ok", ""] }), at("options.tools.deny[1]"))
    assert.deepStrictEqual(refusal({ allow: [null] }), at("options.tools.allow[0]"))
    for (const reserved of ["a[bc]", "{a,b}", "a\\*", "x]"]) {
      assert.deepStrictEqual(refusal({ allow: [reserved] }), at("options.tools.allow[0]"), reserved)
    }
    assert.deepStrictEqual(refusal({ allow: ["a\u0000b"] }), at("options.tools.allow[0]"))
    assert.deepStrictEqual(refusal({ allow: ["a\nb"] }), at("options.tools.allow[0]"))
    assert.deepStrictEqual(
      refusal({ allow: ["x".repeat(ToolFilter.maxPatternLength + 1)] }),
      at("options.tools.allow[0]")
    )
    assert.strictEqual(refusal({ allow: ["x".repeat(ToolFilter.maxPatternLength)] }), "accepted")
    assert.deepStrictEqual(
      refusal({ deny: Array.from({ length: ToolFilter.maxPatterns + 1 }, () => "x") }),
      at("options.tools.deny")
    )
    // A path given by the caller roots every refusal.
    const rooted = ToolFilter.check({ allow: [1] }, "tools")
    assert.strictEqual(Either.isLeft(rooted) ? rooted.left.path : "", "tools.allow[0]")
  })

  it("matches: * is any run, ? one character, the rest literal and case-sensitive, over the whole name", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean]> = [
      ["browser_*", "browser_open", true],
      ["browser_*", "browser_", true],
      ["browser_*", "my_browser_open", false],
      ["*_open", "browser_open", true],
      ["ec?o", "echo", true],
      ["ec?o", "eco", false],
      ["ec?o", "ecHHo", false],
      ["Echo", "echo", false],
      ["*", "", true],
      ["*", "anything at all", true],
      ["a*b*c", "abc", true],
      ["a*b*c", "aXbYcZ", false],
      ["a.b", "aXb", false],
      ["a.b", "a.b", true],
      ["?", "😀", true],
      ["**", "x", true]
    ]
    for (const [pattern, name, expected] of cases) {
      assert.strictEqual(ToolFilter.matches(pattern, name), expected, `${pattern} ~ ${name}`)
    }
  })

  it.prop(
    "matches agrees with the same glob as a regular expression",
    [
      fc.stringOf(fc.constantFrom("a", "b", "*", "?", ".", "😀"), { maxLength: 8 }),
      fc.stringOf(fc.constantFrom("a", "b", ".", "😀"), { maxLength: 12 })
    ],
    ([pattern, name]) => {
      assert.strictEqual(ToolFilter.matches(pattern, name), reference(pattern, name), `${pattern} ~ ${name}`)
    },
    { fastCheck: { numRuns: 5_000 } }
  )

  it("matching stays fast on a name a regular expression would backtrack on", () => {
    const name = "a".repeat(20_000)
    const started = performance.now()
    assert.isFalse(ToolFilter.matches("*a*a*a*a*a*a*a*a*b", name))
    assert.isTrue(ToolFilter.matches("*a*a*a*a*a*a*a*a*", name))
    assert.isBelow(performance.now() - started, 2_000)
  })

  it("allows: allow first (every tool when absent), then deny removes", () => {
    const filter = { allow: ["browser_*", "echo"], deny: ["browser_install"] }
    assert.isTrue(ToolFilter.allows(filter, "browser_open"))
    assert.isTrue(ToolFilter.allows(filter, "echo"))
    assert.isFalse(ToolFilter.allows(filter, "browser_install"))
    assert.isFalse(ToolFilter.allows(filter, "sleep"))
    assert.isTrue(ToolFilter.allows({ deny: ["sleep"] }, "echo"))
    assert.isFalse(ToolFilter.allows({ deny: ["sleep"] }, "sleep"))
    assert.isFalse(ToolFilter.allows({ allow: [] }, "echo"))
    assert.isTrue(ToolFilter.allows(undefined, "anything"))
  })

  it("a filtered tools/list keeps every other member, and drops tools without a string name", () => {
    const compiled = internal.compile({ allow: ["e*"], deny: ["exit"] })
    const result = {
      tools: [{ name: "echo", inputSchema: {} }, { name: "exit" }, { name: 7 }, null, { name: "sleep" }],
      nextCursor: "page-2",
      _meta: { kept: true }
    }
    assert.deepStrictEqual(internal.filterList(compiled, result), {
      tools: [{ name: "echo", inputSchema: {} }],
      nextCursor: "page-2",
      _meta: { kept: true }
    })
    assert.isFalse(internal.allowsCompiled(compiled, 7))
  })
})

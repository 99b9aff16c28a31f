import * as Redact from "@mcp-worker/core/Redact"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

// Secrets never contain "*": a secret made of stars could legitimately be found in the mask itself.
const noStar = (s: string) => !s.includes("*")

const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))

const secretArbitrary = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.string({ minLength: 1, maxLength: 6, unit: "grapheme" }),
    fc.string({ minLength: 1, maxLength: 4, unit: fc.constantFrom("a", "b", "é", "😀", "\uD83D") }),
    fc.string({ minLength: 1, maxLength: 6, unit: codeUnit })
  )
  .filter(noStar)

// Text assembled from noise and secrets, and from pieces of secrets glued together so they overlap.
const scenario = fc.array(secretArbitrary, { minLength: 1, maxLength: 5 }).chain((secrets) =>
  fc
    .array(
      fc.oneof(
        fc.string({ maxLength: 8 }),
        fc.string({ maxLength: 4, unit: "grapheme" }),
        fc.constantFrom("*", "***", "😀", "\uDE00", "a", "b"),
        fc.constantFrom(...secrets),
        // the tail of one secret then the head of another: partial overlaps
        fc
          .tuple(fc.constantFrom(...secrets), fc.constantFrom(...secrets), fc.nat(), fc.nat())
          .map(([a, b, i, j]) => a.slice(0, (i % a.length) + 1) + b.slice(j % b.length))
      ),
      { maxLength: 12 }
    )
    .map((parts) => ({ secrets, text: parts.join("") }))
)

describe("Redact (C24)", () => {
  it("replaces every occurrence with ***", () => {
    assert.strictEqual(Redact.redact("token=abc123; again abc123", ["abc123"]), "token=***; again ***")
    assert.strictEqual(Redact.redact("nothing here", ["abc"]), "nothing here")
    assert.strictEqual(Redact.redact("abc", []), "abc")
    assert.strictEqual(Redact.redact("", ["x"]), "")
    assert.strictEqual(Redact.redact("abc", [""]), "abc")
  })

  it("a secret inside another is hidden with it, whatever the order", () => {
    for (const secrets of [
      ["password", "pass"],
      ["pass", "password"]
    ]) {
      assert.strictEqual(Redact.redact("x password y pass z", secrets), "x *** y *** z")
    }
  })

  it("partly overlapping secrets and overlapping occurrences leave nothing behind", () => {
    assert.strictEqual(Redact.redact("--abcdef--", ["abcd", "cdef"]), "--***--")
    assert.strictEqual(Redact.redact("--abcdef--", ["cdef", "abcd"]), "--***--")
    assert.strictEqual(Redact.redact("aaaaa", ["aa"]), "***")
    assert.strictEqual(Redact.redact("abab ab", ["aba", "bab"]), "*** ab")
    // adjacent occurrences collapse into one mask
    assert.strictEqual(Redact.redact("s1s2", ["s1", "s2"]), "***")
  })

  it("works on UTF-16 code units and never splits a surrogate pair", () => {
    assert.strictEqual(Redact.redact("ключ=секрет!", ["секрет"]), "ключ=***!")
    assert.strictEqual(Redact.redact("a😀b😀", ["😀"]), "a***b***")
    // a secret that is half of a pair takes the whole character with it
    const out = Redact.redact("x😀y", ["\uD83D"])
    assert.strictEqual(out, "x***y")
    assert.strictEqual(Redact.redact("x😀y", ["\uDE00"]), "x***y")
  })

  it.prop(
    "no secret survives, and text without secrets is unchanged",
    [scenario],
    ([{ secrets, text }]) => {
      const out = Redact.redact(text, secrets)
      for (const secret of secrets) assert.notInclude(out, secret)
      const found = secrets.some((secret) => text.includes(secret))
      if (!found) assert.strictEqual(out, text)
      else assert.include(out, "***")
      // the order of the secrets does not matter
      assert.strictEqual(Redact.redact(text, [...secrets].reverse()), out)
      // well-formed in, well-formed out
      if (!loneSurrogate.test(text) && !secrets.some((s) => loneSurrogate.test(s))) {
        assert.isFalse(loneSurrogate.test(out))
      }
    },
    { fastCheck: { numRuns: 5_000 } }
  )

  describe("redactTail", () => {
    it("redacts before cutting, so a secret across the window edge cannot leak in part", () => {
      const secret = "SECRET-VALUE-0123456789"
      const text = "x".repeat(100) + secret + "tail"
      // a window that starts inside the secret
      const out = Redact.redactTail(text, [secret], 10)
      assert.strictEqual(out, "xxx***tail")
      assert.notInclude(out, "VALUE")
      assert.notInclude(out, "789")
    })

    it("keeps at most maxBytes UTF-8 bytes and never splits a character", () => {
      assert.strictEqual(Redact.redactTail("abcdef", [], 3), "def")
      assert.strictEqual(Redact.redactTail("aé", [], 2), "é")
      assert.strictEqual(Redact.redactTail("aé", [], 1), "")
      assert.strictEqual(Redact.redactTail("a😀", [], 3), "")
      assert.strictEqual(Redact.redactTail("a😀", [], 4), "😀")
      assert.strictEqual(Redact.redactTail("€€", [], 5), "€")
      assert.strictEqual(Redact.redactTail("short", []), "short")
      assert.strictEqual(Redact.utf8Length(Redact.redactTail("é".repeat(5000), [])), 2048)
    })

    it.prop(
      "never exceeds maxBytes, keeps as much as fits, and never contains a secret",
      [scenario, fc.integer({ min: 0, max: 64 })],
      ([{ secrets, text }, maxBytes]) => {
        const redacted = Redact.redact(text, secrets)
        const out = Redact.redactTail(text, secrets, maxBytes)
        assert.isAtMost(Redact.utf8Length(out), maxBytes)
        assert.isAtMost(Buffer.byteLength(out, "utf8"), maxBytes)
        assert.isTrue(redacted.endsWith(out))
        for (const secret of secrets) assert.notInclude(out, secret)
        // maximal: the next character to the left would not fit
        if (out.length < redacted.length) {
          const before = redacted.slice(0, redacted.length - out.length)
          const last = before.codePointAt(before.length - 2) ?? 0
          const char = last > 0xffff && before.length >= 2 ? before.slice(-2) : before.slice(-1)
          assert.isAbove(Redact.utf8Length(char + out), maxBytes)
        }
        // the cut never splits a pair that was whole
        if (!loneSurrogate.test(redacted)) assert.isFalse(loneSurrogate.test(out))
      },
      { fastCheck: { numRuns: 5_000 } }
    )
  })

  it("utf8Length agrees with Buffer.byteLength, counting a lone surrogate as U+FFFD", () => {
    for (const text of ["", "abc", "é", "€", "😀", "a😀b", "\uD83D", "\uDE00x", "\uD83D\uD83D\uDE00"]) {
      assert.strictEqual(Redact.utf8Length(text), Buffer.byteLength(text, "utf8"), JSON.stringify(text))
    }
  })
})

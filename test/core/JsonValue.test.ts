import * as JsonValue from "@mcp-worker/core/JsonValue"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as util from "node:util"
import * as vm from "node:vm"

const options = { where: "arguments", root: "args", isProxy: util.types.isProxy } as const

const rejection = (value: unknown, opts: JsonValue.CheckOptions = options) => {
  const result = JsonValue.encode(value, opts)
  if (Either.isRight(result)) return assert.fail(`expected a rejection, got ${result.right}`)
  assert.strictEqual(result.left._tag, "InvalidInput")
  assert.strictEqual(result.left.where, opts.where)
  assert.strictEqual(result.left.delivery, "not_sent")
  return result.left
}

const accepted = (value: unknown): string => {
  const result = JsonValue.encode(value, options)
  if (Either.isLeft(result)) return assert.fail(`unexpected rejection at ${result.left.path}: ${result.left.message}`)
  return result.right
}

// Builds objects the way JSON.parse does: own data properties, so a "__proto__" key stays data.
const objectOf = (entries: ReadonlyArray<readonly [string, unknown]>, nullProto = false): Record<string, unknown> => {
  const out: Record<string, unknown> = nullProto ? Object.create(null) : {}
  for (const [key, value] of entries) {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return out
}

// Exact structural equality of JSON data: same kinds, same key order, numbers equal as JSON writes them (-0 is 0).
const sameJson = (actual: unknown, expected: unknown): boolean => {
  if (typeof expected === "number") return Object.is(actual, expected === 0 ? 0 : expected)
  if (expected === null || typeof expected !== "object") return Object.is(actual, expected)
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => Object.hasOwn(actual, i) && sameJson(actual[i], item))
    )
  }
  if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false
  if (Object.getPrototypeOf(actual) !== Object.prototype) return false
  const keys = Object.keys(expected)
  const actualKeys = Object.keys(actual)
  return (
    keys.length === actualKeys.length &&
    keys.every(
      (key, i) =>
        actualKeys[i] === key &&
        sameJson((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key])
    )
  )
}

const anyCodeUnitString = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) })

const key = fc.oneof(
  fc.string(),
  fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "", "a b", "0", "01", "length", "$x"),
  fc.string({ unit: "grapheme" }),
  anyCodeUnitString
)

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom(0, -0, "", false, Number.MAX_VALUE, Number.MIN_VALUE, -Number.MAX_SAFE_INTEGER),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string(),
  fc.string({ unit: "grapheme" }),
  anyCodeUnitString
)

const { value: jsonArbitrary, container } = fc.letrec<{
  value: unknown
  array: Array<unknown>
  object: Record<string, unknown>
  container: Array<unknown> | Record<string, unknown>
}>((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("array"), tie("object")),
  array: fc.oneof(
    { weight: 5, arbitrary: fc.array(tie("value"), { maxLength: 6 }) },
    { weight: 1, arbitrary: fc.array(leaf, { minLength: 100, maxLength: 400 }) }
  ),
  object: fc
    .tuple(fc.array(fc.tuple(key, tie("value")), { maxLength: 6 }), fc.boolean())
    .map(([entries, nullProto]) => objectOf(entries, nullProto)),
  container: fc.oneof(tie("array"), tie("object"))
}))

// An independent path formatter, so the property does not grade JsonValue with its own helper.
const segment = (k: string | number | symbol): string =>
  typeof k === "number"
    ? `[${k}]`
    : typeof k === "symbol"
      ? `[${k.toString()}]`
      : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k)
        ? `.${k}`
        : `[${JSON.stringify(k)}]`

const deepClone = (value: unknown): unknown => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(deepClone)
  return objectOf(
    Object.keys(value).map((k) => [k, deepClone((value as Record<string, unknown>)[k])] as const),
    Object.getPrototypeOf(value) === null
  )
}

class Point {
  constructor(readonly x: number) {}
}

// Disallowed things to put at one position. `at` is the injection path; `ancestors` are the containers above it
// (the last one is the container that receives it). Each returns the exact path where it must be reported.
type Injection = {
  readonly name: string
  readonly inject: (
    container: object,
    k: string | number,
    ancestors: ReadonlyArray<object>
  ) => Array<string | number | symbol>
}

const put = (container: object, k: string | number, value: unknown) =>
  Object.defineProperty(container, k, { value, enumerable: true, writable: true, configurable: true })

const valueInjection = (name: string, make: (ancestors: ReadonlyArray<object>) => unknown): Injection => ({
  name,
  inject: (container, k, ancestors) => {
    put(container, k, make(ancestors))
    return [k]
  }
})

const injections: ReadonlyArray<Injection> = [
  valueInjection("undefined", () => undefined),
  valueInjection("function", () => () => 1),
  valueInjection("symbol", () => Symbol("s")),
  valueInjection("bigint", () => 10n),
  valueInjection("NaN", () => NaN),
  valueInjection("Infinity", () => Infinity),
  valueInjection("-Infinity", () => -Infinity),
  valueInjection("Date", () => new Date(0)),
  valueInjection("Map", () => new Map()),
  valueInjection("Set", () => new Set()),
  valueInjection("RegExp", () => /x/),
  valueInjection("Uint8Array", () => new Uint8Array(2)),
  valueInjection("Buffer", () => Buffer.from("x")),
  valueInjection("Error", () => new Error("x")),
  valueInjection("boxed", () => new String("x")),
  valueInjection("class instance", () => new Point(1)),
  valueInjection("Object.create", () => Object.create({ inherited: 1 })),
  valueInjection("proxy", () => new Proxy({}, {})),
  valueInjection("array proxy", () => new Proxy([], {})),
  // A reference back to a container on the current path.
  valueInjection("cycle", (ancestors) => ancestors[Math.floor(ancestors.length / 2)]),
  {
    name: "too deep",
    inject: (container, k, ancestors) => {
      // The receiving container is at depth ancestors.length; the injected arrays start one deeper.
      let deep: Array<unknown> = []
      for (let i = 0; i < JsonValue.maxDepth; i++) deep = [deep]
      put(container, k, deep)
      const below = JsonValue.maxDepth + 1 - (ancestors.length + 1)
      return [k, ...Array.from({ length: below }, () => 0)]
    }
  },
  {
    name: "accessor",
    inject: (container, k) => {
      Object.defineProperty(container, k, {
        get: () => assert.fail("a getter ran"),
        enumerable: true,
        configurable: true
      })
      return [k]
    }
  },
  {
    name: "non-enumerable",
    inject: (container, k) => {
      Object.defineProperty(container, k, { value: 1, enumerable: false, writable: true, configurable: true })
      return [k]
    }
  },
  {
    name: "symbol key",
    inject: (container) => {
      const s = Symbol("injected")
      put(container, s as unknown as string, 1)
      return [s]
    }
  }
]

// Arrays get two more kinds of trouble of their own.
const arrayInjections: ReadonlyArray<Injection> = [
  {
    name: "hole",
    inject: (container) => {
      const array = container as Array<unknown>
      array.length += 1
      return [array.length - 1]
    }
  },
  {
    name: "named property on an array",
    inject: (container) => {
      put(container, "extra", 1)
      return ["extra"]
    }
  }
]

describe("JsonValue (C16, C17)", () => {
  it.prop(
    "every value of the grammar round-trips exactly through encode and decode",
    [jsonArbitrary],
    ([value]) => {
      const text = accepted(value)
      assert.strictEqual(text, JSON.stringify(value))
      const decoded = Either.getOrThrow(JsonValue.decode(text))
      assert.isTrue(sameJson(decoded, value), text)
      assert.strictEqual(accepted(decoded), text)
      assert.isTrue(sameJson(JsonValue.decodeUnsafe(text), value))
    },
    // CPU-bound: a busy machine may take many times the usual ~3 s.
    { fastCheck: { numRuns: 10_000 }, timeout: 120_000 }
  )

  it.prop(
    "one disallowed item anywhere is rejected at exactly its path",
    [
      container,
      fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
      fc.nat({ max: injections.length + arrayInjections.length - 1 }),
      key
    ],
    ([generated, choices, which, newKey]) => {
      const root = deepClone(generated) as object
      const ancestors: Array<object> = [root]
      const path: Array<string | number> = []
      let current = root
      // Follow the choices down through nested containers; each choice either stops here or descends.
      for (const choice of choices) {
        const keys = Array.isArray(current) ? current.map((_, i) => i) : Object.keys(current)
        const children = keys.filter((k) => {
          const child = (current as Record<string | number, unknown>)[k]
          return child !== null && typeof child === "object"
        })
        if (children.length === 0 || choice % 3 === 0) break
        const k = children[choice % children.length]
        path.push(k)
        current = (current as Record<string | number, object>)[k]
        ancestors.push(current)
      }
      const isArray = Array.isArray(current)
      const pool = isArray ? [...injections, ...arrayInjections] : injections
      const injection = pool[which % pool.length]
      const array = current as Array<unknown>
      const k: string | number = isArray
        ? // an existing index or the next one (which extends the array densely)
          newKey.length % Math.max(1, array.length + 1)
        : newKey
      const where = injection.inject(current, k, ancestors)
      const expected = "args" + [...path, ...where].map(segment).join("")
      const error = rejection(root)
      assert.strictEqual(error.path, expected, `${injection.name}: ${error.message}`)
    },
    // CPU-bound: a busy machine may take many times the usual ~3 s.
    { fastCheck: { numRuns: 10_000 }, timeout: 120_000 }
  )

  describe("rejections name the first offending path and the kind of value, never the value", () => {
    const cases: ReadonlyArray<readonly [string, unknown, string, RegExp]> = [
      ["undefined", { a: { b: undefined } }, "args.a.b", /undefined.*use null/],
      ["undefined in an array", [1, undefined], "args[1]", /undefined/],
      ["a function", { items: [{}, {}, { name: () => "SECRET-canary" }] }, "args.items[2].name", /a function/],
      ["a symbol", { s: Symbol("SECRET-canary") }, "args.s", /a symbol/],
      ["a bigint", { n: 1234567890123n }, "args.n", /a bigint/],
      ["NaN", { x: [NaN] }, "args.x[0]", /NaN/],
      ["Infinity", { x: Infinity }, "args.x", /^Infinity/],
      ["-Infinity", { x: -Infinity }, "args.x", /-Infinity/],
      ["a hole", { list: [1, , 3] }, "args.list[1]", /hole.*use null explicitly/],
      ["a trailing hole", new Array(2), "args[0]", /use null explicitly/],
      ["a Date", { when: new Date(1234567890123) }, "args.when", /a Date instance/],
      ["a Map", { m: new Map([["SECRET-canary", 1]]) }, "args.m", /a Map instance/],
      ["a Set", { s: new Set(["SECRET-canary"]) }, "args.s", /a Set instance/],
      ["a RegExp", { r: /SECRET-canary/ }, "args.r", /a RegExp instance/],
      ["a Buffer", { b: Buffer.from("SECRET-canary") }, "args.b", /a Buffer instance.*bytes/],
      ["a Uint8Array", { b: new Uint8Array([1, 2]) }, "args.b", /a Uint8Array instance/],
      ["a Float64Array", [new Float64Array(1)], "args[0]", /a Float64Array instance/],
      ["an ArrayBuffer", { b: new ArrayBuffer(4) }, "args.b", /an ArrayBuffer instance/],
      ["an Error", { e: new Error("SECRET-canary") }, "args.e", /an Error instance/],
      ["a TypeError", { e: new TypeError("SECRET-canary") }, "args.e", /a TypeError instance/],
      ["a boxed string", { s: new String("SECRET-canary") }, "args.s", /a String instance.*primitive/],
      ["a boxed number", { n: new Number(1) }, "args.n", /a Number instance/],
      ["a class instance", { p: new Point(1) }, "args.p", /a Point instance/],
      ["a promise", { p: Promise.resolve("SECRET-canary") }, "args.p", /a Promise instance/],
      ["a weird key", { "a b": [0, { c: undefined }] }, 'args["a b"][1].c', /undefined/],
      ["a numeric-looking key", { "1x": NaN }, 'args["1x"]', /NaN/],
      ["an empty key", { "": NaN }, 'args[""]', /NaN/],
      ["a $ key", { $ref: NaN }, "args.$ref", /NaN/],
      ["an array subclass", { a: new (class Tuple extends Array {})() }, "args.a", /a Tuple instance/],
      ["an inheriting object", { o: Object.create({ SECRET: "canary" }) }, "args.o", /custom prototype/],
      ["a named property on an array", { a: Object.assign([1], { extra: 2 }) }, "args.a.extra", /named property/],
      ["a regex match array", { m: /a/.exec("a") }, "args.m.index", /named property/]
    ]
    for (const [name, value, path, message] of cases) {
      it(name, () => {
        const error = rejection(value)
        assert.strictEqual(error.path, path)
        assert.match(error.message, message)
        assert.notInclude(error.message, "SECRET")
        assert.notInclude(error.message, "canary")
        assert.notInclude(error.message, "1234567890123")
      })
    }

    it("a top-level value that is not JSON is reported at the root", () => {
      assert.strictEqual(rejection(undefined).path, "args")
      assert.strictEqual(rejection(() => 1).path, "args")
      assert.strictEqual(rejection(NaN, { where: "config", root: "config" }).path, "config")
      assert.strictEqual(rejection(new Date(), { where: "config", root: "config" }).where, "config")
    })

    it("the first offending path in document order wins", () => {
      assert.strictEqual(rejection({ a: [1, { b: NaN }], c: undefined }).path, "args.a[1].b")
      assert.strictEqual(rejection([[undefined], NaN]).path, "args[0][0]")
    })

    it("proxies are rejected when isProxy is given, before any trap runs", () => {
      let trapped = false
      const handler: ProxyHandler<object> = {
        getPrototypeOf: () => ((trapped = true), Object.prototype),
        ownKeys: () => ((trapped = true), []),
        getOwnPropertyDescriptor: () => ((trapped = true), undefined)
      }
      const error = rejection({ list: [new Proxy({}, handler)] })
      assert.strictEqual(error.path, "args.list[0]")
      assert.match(error.message, /a proxy/)
      assert.isFalse(trapped)
      assert.strictEqual(rejection(new Proxy([1], {})).path, "args")
    })

    it("without isProxy, a revoked proxy is still an InvalidInput, never a throw", () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      const error = rejection({ a: { b: proxy } }, { where: "arguments", root: "args" })
      assert.strictEqual(error.path, "args.a.b")
    })

    it("accessor properties are rejected without invoking the getter", () => {
      let ran = false
      const value = {
        ok: 1,
        get secret() {
          ran = true
          return "SECRET"
        }
      }
      const error = rejection({ nested: value })
      assert.strictEqual(error.path, "args.nested.secret")
      assert.match(error.message, /accessor/)
      assert.isFalse(ran)
      const setterOnly = Object.defineProperty({}, "x", { set: () => {}, enumerable: true })
      assert.strictEqual(rejection(setterOnly).path, "args.x")
      const array = [0, 1]
      Object.defineProperty(array, 1, { get: () => ((ran = true), 1), enumerable: true })
      assert.strictEqual(rejection(array).path, "args[1]")
      assert.isFalse(ran)
    })

    it("symbol keys and non-enumerable properties are rejected", () => {
      const error = rejection({ a: { [Symbol("tag")]: 1 } })
      assert.strictEqual(error.path, "args.a[Symbol(tag)]")
      assert.match(error.message, /symbol/)
      assert.strictEqual(rejection(Object.assign([1], { [Symbol("s")]: 1 })).path, "args[Symbol(s)]")
      const hidden = Object.defineProperty({ shown: 1 }, "hidden", { value: 2, enumerable: false })
      const hiddenError = rejection({ o: hidden })
      assert.strictEqual(hiddenError.path, "args.o.hidden")
      assert.match(hiddenError.message, /non-enumerable/)
      const hiddenIndex = Object.defineProperty([1, 2], 0, { value: 2, enumerable: false })
      assert.strictEqual(rejection(hiddenIndex).path, "args[0]")
    })
  })

  describe("what is accepted", () => {
    it("explicit null, empty string, 0, false, empty containers and lengths arrive exactly", () => {
      const value = { a: null, b: "", c: 0, d: false, e: [], f: {}, g: [null, null], h: [[], [{}]], i: -0 }
      const text = accepted(value)
      assert.strictEqual(text, '{"a":null,"b":"","c":0,"d":false,"e":[],"f":{},"g":[null,null],"h":[[],[{}]],"i":0}')
      const decoded = Either.getOrThrow(JsonValue.decode(text)) as Record<string, unknown>
      assert.deepStrictEqual(decoded, { ...value, i: 0 })
      assert.strictEqual((decoded.g as Array<unknown>).length, 2)
    })

    it("null-prototype objects, frozen values and top-level primitives", () => {
      const bare = objectOf([["k", 1]], true)
      assert.strictEqual(accepted(Object.freeze({ bare, list: Object.freeze([1]) })), '{"bare":{"k":1},"list":[1]}')
      assert.strictEqual(accepted("x"), '"x"')
      assert.strictEqual(accepted(null), "null")
      assert.strictEqual(accepted(1.5), "1.5")
    })

    it("shared references are fine; only cycles are rejected", () => {
      const shared = { x: 1 }
      const list = [shared, shared]
      assert.strictEqual(
        accepted({ a: shared, b: shared, c: [list, list] }),
        JSON.stringify({ a: shared, b: shared, c: [list, list] })
      )
      const self: Record<string, unknown> = { a: 1 }
      self.self = self
      const error = rejection({ root: self })
      assert.strictEqual(error.path, "args.root.self")
      assert.match(error.message, /cycle/)
      const a: Record<string, unknown> = {}
      const b = { c: [1, a] }
      a.b = b
      assert.strictEqual(rejection(a).path, "args.b.c[1]")
      const array: Array<unknown> = [1]
      array.push([array])
      assert.strictEqual(rejection(array).path, "args[1][0]")
    })

    it("plain objects and arrays from another realm (a node:vm sandbox)", () => {
      const foreign = vm.runInNewContext('({ a: [1, { b: "x" }], c: Object.create(null) })')
      assert.notStrictEqual(Object.getPrototypeOf(foreign), Object.prototype)
      assert.strictEqual(accepted(foreign), '{"a":[1,{"b":"x"}],"c":{}}')
      assert.isTrue(JsonValue.isJsonObject(foreign))
      assert.match(rejection(vm.runInNewContext("({ d: new Date(0) })")).message, /a Date instance/)
      assert.match(rejection(vm.runInNewContext("({ m: new Map() })")).message, /a Map instance/)
      // A sandbox that installs toJSON would make JSON.stringify run its code.
      const poisoned = vm.runInNewContext("Object.prototype.toJSON = () => 'SECRET'; ({ a: 1 })")
      assert.notInclude(rejection(poisoned).message, "SECRET")
    })
  })

  describe("nesting depth", () => {
    const nestArrays = (levels: number): unknown => {
      let value: Array<unknown> = []
      for (let i = 1; i < levels; i++) value = [value]
      return value
    }
    const nestObjects = (levels: number): unknown => {
      let value: Record<string, unknown> = {}
      for (let i = 1; i < levels; i++) value = { a: value }
      return value
    }

    it("512 levels are accepted, 513 are rejected at the 513th container", () => {
      assert.strictEqual(JsonValue.maxDepth, 512)
      const text = accepted(nestArrays(512))
      assert.strictEqual(text, "[".repeat(512) + "]".repeat(512))
      accepted(nestObjects(512))
      const error = rejection(nestArrays(513))
      assert.strictEqual(error.path, "args" + "[0]".repeat(512))
      assert.match(error.message, /deeper than 512/)
      assert.strictEqual(rejection(nestObjects(513)).path, "args" + ".a".repeat(512))
      // A scalar inside 512 containers is still fine.
      accepted([[[["deep"]]]])
    })

    it("100,000 levels are rejected without overflowing the stack", () => {
      const error = rejection(nestArrays(100_000))
      assert.strictEqual(error.path, "args" + "[0]".repeat(512))
      assert.strictEqual(rejection({ x: nestObjects(100_000) }).path, "args.x" + ".a".repeat(511))
    })
  })

  describe("decode", () => {
    it('a "__proto__" key is carried as data and pollutes nothing', () => {
      const result = Either.getOrThrow(JsonValue.decode('{"__proto__":{"polluted":true},"a":1}')) as Record<
        string,
        unknown
      >
      assert.strictEqual(Object.getPrototypeOf(result), Object.prototype)
      assert.isTrue(Object.hasOwn(result, "__proto__"))
      const descriptor = Object.getOwnPropertyDescriptor(result, "__proto__")
      assert.deepStrictEqual(descriptor?.value, { polluted: true })
      assert.isTrue(descriptor?.enumerable)
      assert.strictEqual(({} as Record<string, unknown>).polluted, undefined)
      assert.strictEqual((result as { polluted?: unknown }).polluted, undefined)
      // It survives another trip through encode.
      assert.strictEqual(accepted(result), '{"__proto__":{"polluted":true},"a":1}')
      const nested = Either.getOrThrow(JsonValue.decode('[{"__proto__":[]}]')) as Array<object>
      assert.strictEqual(Object.getPrototypeOf(nested[0]), Object.prototype)
      assert.isTrue(Array.isArray(Object.getOwnPropertyDescriptor(nested[0], "__proto__")?.value))
    })

    it("text that is not JSON is an InvalidInput whose message does not quote it", () => {
      for (const text of ["", "{", "{SECRET-canary}", "[1,]", "undefined", "NaN", "'x'"]) {
        const result = JsonValue.decode(text)
        if (Either.isRight(result)) return assert.fail(`accepted ${text}`)
        assert.strictEqual(result.left.path, "args")
        assert.strictEqual(result.left.where, "arguments")
        assert.notInclude(result.left.message, "SECRET")
      }
      const config = JsonValue.decode("{", { where: "config", root: "config" })
      assert.isTrue(Either.isLeft(config) && config.left.where === "config" && config.left.path === "config")
      assert.throws(() => JsonValue.decodeUnsafe("{"))
    })
  })

  it("isJsonObject accepts only plain objects", () => {
    assert.isTrue(JsonValue.isJsonObject({}))
    assert.isTrue(JsonValue.isJsonObject(Object.create(null)))
    for (const value of [null, [], "x", 1, new Date(), new Map(), new Point(1), Object.create({})]) {
      assert.isFalse(JsonValue.isJsonObject(value))
    }
  })

  it("appendPath writes identifiers with a dot, other keys quoted, indices in brackets", () => {
    assert.strictEqual(JsonValue.appendPath(JsonValue.appendPath("args", "items"), 2), "args.items[2]")
    assert.strictEqual(JsonValue.appendPath("args", "a b"), 'args["a b"]')
    assert.strictEqual(JsonValue.appendPath("args", "2"), 'args["2"]')
    assert.strictEqual(JsonValue.appendPath("args", 'q"'), 'args["q\\""]')
    assert.strictEqual(JsonValue.appendPath("args", "_ok$1"), "args._ok$1")
  })
})

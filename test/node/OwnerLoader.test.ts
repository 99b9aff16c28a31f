// The owner runtime's V8 code cache: one file per V8, built by scripts/bundle.mjs for the Node that runs it
// (the suite's globalSetup) and written on first use by any other.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as V8 from "node:v8"
import * as OwnerLoader from "../../packages/node/src/internal/owner/loader.js"

const runtime = fileURLToPath(new URL("../../packages/node/owner/owner-runtime.cjs", import.meta.url))

// A copy of the built runtime in a directory of its own, so caches can be removed and spoiled freely.
const copyOfRuntime = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mcp-worker-loader-"))
    const file = Path.join(dir, "owner-runtime.cjs")
    Fs.copyFileSync(runtime, file)
    return file
  }),
  (file) => Effect.sync(() => Fs.rmSync(Path.dirname(file), { recursive: true, force: true }))
)

// `refresh` writes in the background (to a temporary file, then renamed) and gives no signal: wait until the
// cache file is there and is not the one it replaces.
const cacheWritten = (file: string, replacedSize?: number) =>
  Effect.gen(function* () {
    const cache = OwnerLoader.cacheFileOf(file)
    const written = () => Fs.existsSync(cache) && Fs.statSync(cache).size !== replacedSize
    const until = Date.now() + 5000
    while (!written()) {
      if (Date.now() > until) return yield* Effect.dieMessage("no code cache was written")
      yield* Effect.sleep("10 millis")
    }
  })

describe("owner runtime code cache", () => {
  it("is named after this thread's V8 and its flags", () => {
    assert.strictEqual(
      Path.basename(OwnerLoader.cacheFileOf(runtime)),
      `owner-runtime.v8-${process.versions.v8}-${process.arch}-${V8.cachedDataVersionTag().toString(36)}.cache`
    )
  })

  it("the cache the build made for this Node is accepted", () => {
    assert.isTrue(Fs.existsSync(OwnerLoader.cacheFileOf(runtime)))
    const loaded = OwnerLoader.load<{ run: unknown }>(runtime)
    assert.isTrue(loaded.cached)
    assert.strictEqual(typeof loaded.exports.run, "function")
  })

  it.scopedLive("a missing cache is written on first use and accepted next time", () =>
    Effect.gen(function* () {
      const file = yield* copyOfRuntime
      const first = OwnerLoader.load<{ run: unknown }>(file)
      assert.isFalse(first.cached)
      assert.strictEqual(typeof first.exports.run, "function")
      first.refresh()
      yield* cacheWritten(file)
      assert.isTrue(OwnerLoader.load(file).cached)
    })
  )

  // V8 rejects a cache made under other flags. With one file for all, an owner process with a heap limit and the
  // host's owner threads would each rewrite the other's cache, and most owners would start without one.
  it.scopedLive("a process under other V8 flags keeps a cache of its own; the one of the default flags stays", () =>
    Effect.gen(function* () {
      const file = yield* copyOfRuntime
      OwnerLoader.load(file).refresh()
      yield* cacheWritten(file)
      const plain = OwnerLoader.cacheFileOf(file)
      const before = Fs.readFileSync(plain)
      yield* Effect.gen(function* () {
        V8.setFlagsFromString("--expose-gc")
        const flagged = OwnerLoader.cacheFileOf(file)
        assert.notStrictEqual(flagged, plain)
        const first = OwnerLoader.load(file)
        assert.isFalse(first.cached)
        first.refresh()
        yield* cacheWritten(file)
        assert.isTrue(Fs.existsSync(flagged))
        assert.isTrue(OwnerLoader.load(file).cached)
      }).pipe(Effect.ensuring(Effect.sync(() => V8.setFlagsFromString("--no-expose-gc"))))
      assert.strictEqual(OwnerLoader.cacheFileOf(file), plain)
      assert.isTrue(Fs.readFileSync(plain).equals(before))
      assert.isTrue(OwnerLoader.load(file).cached)
    })
  )

  it.scopedLive("warm: written once the owner has run, larger, preferred next time; a refused one is removed", () =>
    Effect.gen(function* () {
      const file = yield* copyOfRuntime
      const first = OwnerLoader.load<{ run: unknown }>(file)
      first.refresh()
      yield* cacheWritten(file)
      const built = Fs.statSync(OwnerLoader.cacheFileOf(file)).size
      const second = OwnerLoader.load<typeof import("../../packages/node/src/internal/owner/runtime.js")>(file)
      assert.isTrue(second.cached)
      second.warm()
      const warm = OwnerLoader.warmCacheFileOf(file)
      const until = Date.now() + 5000
      while (!Fs.existsSync(warm)) {
        if (Date.now() > until) return yield* Effect.dieMessage("no warm cache was written")
        yield* Effect.sleep("10 millis")
      }
      assert.isAtLeast(Fs.statSync(warm).size, built)
      const third = OwnerLoader.load(file)
      assert.isTrue(third.cached)
      // Loaded from the warm cache: nothing more to write.
      Fs.rmSync(OwnerLoader.cacheFileOf(file))
      third.warm()
      third.refresh()
      yield* Effect.sleep("200 millis")
      assert.isFalse(Fs.existsSync(OwnerLoader.cacheFileOf(file)))
      // A warm cache V8 refuses is removed, so that owners fall back to the build's (in a copy of its own: this
      // isolate already compiled the one above, and would not read a cache for it again).
      const other = yield* copyOfRuntime
      const refused = OwnerLoader.warmCacheFileOf(other)
      Fs.writeFileSync(refused, Fs.readFileSync(warm).subarray(0, 64))
      assert.isFalse(OwnerLoader.load(other).cached)
      for (let i = 0; i < 100 && Fs.existsSync(refused); i++) yield* Effect.sleep("10 millis")
      assert.isFalse(Fs.existsSync(refused))
    })
  )

  it.scopedLive("a cache V8 rejects is rewritten", () =>
    Effect.gen(function* () {
      const file = yield* copyOfRuntime
      Fs.writeFileSync(OwnerLoader.cacheFileOf(file), Fs.readFileSync(OwnerLoader.cacheFileOf(runtime)).subarray(0, 64))
      const first = OwnerLoader.load(file)
      assert.isFalse(first.cached)
      first.refresh()
      yield* cacheWritten(file, 64)
      assert.isTrue(OwnerLoader.load(file).cached)
    })
  )
})

// scripts/bundle.mjs swaps the SDK client's Node shims for scripts/shims/clientShims.mjs, which loads Ajv only when a
// JSON Schema is first validated, and makes both SDK packages share one zod.
describe("owner runtime bundle", () => {
  it("holds one zod, and evaluates Ajv only on a first validation, which then works", async () => {
    const source = Fs.readFileSync(runtime, "utf8")
    // zod's own error-map text appears twice in each copy bundled (four times with two copies).
    assert.strictEqual(source.split("Invalid input: expected").length - 1, 2)
    const esbuild = await import("esbuild")
    const built = await esbuild.build({
      entryPoints: [fileURLToPath(new URL("../../scripts/shims/clientShims.mjs", import.meta.url))],
      bundle: true,
      platform: "node",
      format: "cjs",
      write: false,
      logLevel: "silent"
    })
    const module = { exports: {} as Record<string, any> }
    new Function("module", "exports", "require", built.outputFiles[0]!.text)(module, module.exports, require)
    const validator = new module.exports.DefaultJsonSchemaValidator()
    assert.strictEqual(validator.real, undefined)
    const check = validator.getValidator({ type: "object", required: ["a"] })
    assert.deepStrictEqual([check({ a: 1 }).valid, check({}).valid], [true, false])
    assert.strictEqual(module.exports.CORS_IS_POSSIBLE, false)
  })
})

// The owner runtime's V8 code cache: one file per V8, written by the first owner on each into the user's cache
// directory; none is built or shipped (C67).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as V8 from "node:v8"
import * as OwnerLoader from "../../packages/node/src/internal/owner/loader.js"

const runtime = fileURLToPath(new URL("../../packages/node/owner/owner-runtime.cjs", import.meta.url))

const temporaryDirectory = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

// The user's cache directory for this test alone: `XDG_CACHE_HOME` pointed at a new directory, restored after.
const privateCacheHome = Effect.gen(function* () {
  const home = yield* temporaryDirectory("mcp-worker-cache-home-")
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const before = process.env.XDG_CACHE_HOME
      process.env.XDG_CACHE_HOME = home
      return before
    }),
    (before) =>
      Effect.sync(() => {
        if (before === undefined) delete process.env.XDG_CACHE_HOME
        else process.env.XDG_CACHE_HOME = before
      })
  )
  return home
})

// A copy of the built runtime in a directory of its own, its source made unique (a comment at its end) so that
// neither this isolate's compiled scripts nor another copy's caches stand in for its own.
let copies = 0
const copyOfRuntime = Effect.gen(function* () {
  const dir = yield* temporaryDirectory("mcp-worker-loader-")
  const file = Path.join(dir, "owner-runtime.cjs")
  Fs.writeFileSync(file, `${Fs.readFileSync(runtime, "utf8")}\n// copy ${process.pid}-${++copies}-${Date.now()}`)
  return { file, source: Fs.readFileSync(file, "utf8") }
})

const waitFor = (what: string, done: () => boolean) =>
  Effect.gen(function* () {
    const until = Date.now() + 5000
    while (!done()) {
      if (Date.now() > until) return yield* Effect.dieMessage(`${what} was not written`)
      yield* Effect.sleep("10 millis")
    }
  })

// `refresh` writes in the background (to a temporary file, then renamed) and gives no signal: wait until the
// cache file is there and is not the one it replaces.
const cacheWritten = (copy: { file: string; source: string }, replacedSize?: number) => {
  const cache = OwnerLoader.userCacheFileOf(copy.file, copy.source)
  return waitFor("the code cache", () => Fs.existsSync(cache) && Fs.statSync(cache).size !== replacedSize)
}

const listing = (dir: string) =>
  Fs.readdirSync(dir)
    .map((name) => `${name} ${Fs.statSync(Path.join(dir, name)).size}`)
    .sort()

describe("owner runtime code cache", () => {
  it.scoped("C67: no cache is built beside the runtime; the first load names its own after this V8 and its flags", () =>
    Effect.gen(function* () {
      yield* privateCacheHome
      assert.deepStrictEqual(
        Fs.readdirSync(Path.dirname(runtime)).filter((file) => file.endsWith(".cache")),
        []
      )
      const loaded = OwnerLoader.load<{ run: unknown }>(runtime)
      assert.isFalse(loaded.cached)
      assert.strictEqual(typeof loaded.exports.run, "function")
      const name = Path.basename(OwnerLoader.userCacheFileOf(runtime, Fs.readFileSync(runtime, "utf8")))
      const tag = `v8-${process.versions.v8}-${process.arch}-${V8.cachedDataVersionTag().toString(36)}`
      assert.match(name, /^owner-runtime-[0-9a-f]{16}\./)
      assert.isTrue(name.endsWith(`.${tag}.cache`), name)
    })
  )

  it.scoped("C67: the cache directory is $XDG_CACHE_HOME/mcp-worker, else a private one in os.tmpdir()", () =>
    Effect.gen(function* () {
      const home = yield* privateCacheHome
      assert.strictEqual(OwnerLoader.cacheDirectory(), Path.join(home, "mcp-worker"))
      process.env.XDG_CACHE_HOME = "relative/cache"
      assert.strictEqual(OwnerLoader.cacheDirectory(), Path.join(Os.tmpdir(), `mcp-worker-${process.getuid!()}`))
      delete process.env.XDG_CACHE_HOME
      assert.strictEqual(OwnerLoader.cacheDirectory(), Path.join(Os.tmpdir(), `mcp-worker-${process.getuid!()}`))
    })
  )

  it.scopedLive("C67: a missing cache is written to the user's cache directory, never beside the runtime", () =>
    Effect.gen(function* () {
      yield* privateCacheHome
      const copy = yield* copyOfRuntime
      const before = listing(Path.dirname(copy.file))
      const first = OwnerLoader.load<{ run: unknown }>(copy.file)
      assert.isFalse(first.cached)
      assert.strictEqual(typeof first.exports.run, "function")
      first.refresh()
      first.warm()
      yield* cacheWritten(copy)
      yield* waitFor("the warm cache", () => Fs.existsSync(OwnerLoader.warmCacheFileOf(copy.file, copy.source)))
      assert.strictEqual(
        Path.dirname(OwnerLoader.userCacheFileOf(copy.file, copy.source)),
        OwnerLoader.cacheDirectory()
      )
      assert.strictEqual(Fs.statSync(OwnerLoader.cacheDirectory()).mode & 0o777, 0o700)
      assert.deepStrictEqual(listing(Path.dirname(copy.file)), before)
      assert.isTrue(OwnerLoader.load(copy.file).cached)
    })
  )

  // V8 checks a cache against the source's length only: a cache of another runtime must never be offered.
  it.scopedLive("C67: caches of different runtimes sharing the directory are told apart by their source", () =>
    Effect.gen(function* () {
      yield* privateCacheHome
      const one = yield* copyOfRuntime
      const other = yield* copyOfRuntime
      assert.notStrictEqual(
        OwnerLoader.userCacheFileOf(one.file, one.source),
        OwnerLoader.userCacheFileOf(other.file, other.source)
      )
      OwnerLoader.load(one.file).refresh()
      yield* cacheWritten(one)
      assert.isFalse(OwnerLoader.load(other.file).cached)
    })
  )

  // A code cache is code: where another user can write, owners neither read nor write one.
  it.scopedLive("C67: a cache directory others can write to is not used", () =>
    Effect.gen(function* () {
      yield* privateCacheHome
      const copy = yield* copyOfRuntime
      OwnerLoader.load(copy.file).refresh()
      yield* cacheWritten(copy)
      Fs.chmodSync(OwnerLoader.cacheDirectory(), 0o777)
      const loaded = OwnerLoader.load(copy.file)
      assert.isFalse(loaded.cached)
      Fs.rmSync(OwnerLoader.userCacheFileOf(copy.file, copy.source))
      loaded.refresh()
      const other = yield* copyOfRuntime
      const trusted = OwnerLoader.load(other.file)
      Fs.chmodSync(OwnerLoader.cacheDirectory(), 0o700)
      trusted.refresh()
      // Refused at once, where the directory is judged: nothing of the first is written later.
      yield* cacheWritten(other)
      assert.isFalse(Fs.existsSync(OwnerLoader.userCacheFileOf(copy.file, copy.source)))
    })
  )

  // V8 rejects a cache made under other flags. With one file for all, an owner process with a heap limit and the
  // host's owner threads would each rewrite the other's cache, and most owners would start without one.
  it.scopedLive("a process under other V8 flags keeps a cache of its own; the one of the default flags stays", () =>
    Effect.gen(function* () {
      yield* privateCacheHome
      const copy = yield* copyOfRuntime
      OwnerLoader.load(copy.file).refresh()
      yield* cacheWritten(copy)
      const plain = OwnerLoader.userCacheFileOf(copy.file, copy.source)
      const before = Fs.readFileSync(plain)
      yield* Effect.gen(function* () {
        V8.setFlagsFromString("--expose-gc")
        const flagged = OwnerLoader.userCacheFileOf(copy.file, copy.source)
        assert.notStrictEqual(flagged, plain)
        const first = OwnerLoader.load(copy.file)
        assert.isFalse(first.cached)
        first.refresh()
        yield* cacheWritten(copy)
        assert.isTrue(Fs.existsSync(flagged))
        assert.isTrue(OwnerLoader.load(copy.file).cached)
      }).pipe(Effect.ensuring(Effect.sync(() => V8.setFlagsFromString("--no-expose-gc"))))
      assert.strictEqual(OwnerLoader.userCacheFileOf(copy.file, copy.source), plain)
      assert.isTrue(Fs.readFileSync(plain).equals(before))
      assert.isTrue(OwnerLoader.load(copy.file).cached)
    })
  )

  it.scopedLive("warm: written once the owner has run, larger, preferred next time; a refused one is removed", () =>
    Effect.gen(function* () {
      yield* privateCacheHome
      const copy = yield* copyOfRuntime
      const first = OwnerLoader.load<{ run: unknown }>(copy.file)
      first.refresh()
      yield* cacheWritten(copy)
      const cold = OwnerLoader.userCacheFileOf(copy.file, copy.source)
      const built = Fs.statSync(cold).size
      const second = OwnerLoader.load(copy.file)
      assert.isTrue(second.cached)
      second.warm()
      const warm = OwnerLoader.warmCacheFileOf(copy.file, copy.source)
      yield* waitFor("the warm cache", () => Fs.existsSync(warm))
      assert.isAtLeast(Fs.statSync(warm).size, built)
      const third = OwnerLoader.load(copy.file)
      assert.isTrue(third.cached)
      // Loaded from the warm cache: nothing more to write.
      Fs.rmSync(cold)
      third.warm()
      third.refresh()
      yield* Effect.sleep("200 millis")
      assert.isFalse(Fs.existsSync(cold))
      // A warm cache V8 refuses is removed, so that owners fall back to the others.
      const other = yield* copyOfRuntime
      const refused = OwnerLoader.warmCacheFileOf(other.file, other.source)
      Fs.writeFileSync(refused, Fs.readFileSync(warm).subarray(0, 64))
      assert.isFalse(OwnerLoader.load(other.file).cached)
      yield* waitFor("the refused cache's removal", () => !Fs.existsSync(refused))
    })
  )

  it.scopedLive("a cache V8 rejects is rewritten", () =>
    Effect.gen(function* () {
      yield* privateCacheHome
      const copy = yield* copyOfRuntime
      const cache = OwnerLoader.userCacheFileOf(copy.file, copy.source)
      Fs.mkdirSync(Path.dirname(cache), { recursive: true, mode: 0o700 })
      Fs.writeFileSync(cache, Buffer.alloc(64, 1))
      const first = OwnerLoader.load(copy.file)
      assert.isFalse(first.cached)
      first.refresh()
      yield* cacheWritten(copy, 64)
      assert.isTrue(OwnerLoader.load(copy.file).cached)
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

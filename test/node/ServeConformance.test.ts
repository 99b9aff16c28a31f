// The MCP conformance suite's server scenarios (@modelcontextprotocol/conformance, 2025-11-25) run against the gateway
// in front of one real fixture worker; and what routing by name and by URI refuses when a grant names two workers.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpServe } from "@mcp-worker/node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  McpError,
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Deferred from "effect/Deferred"
import { execFile } from "node:child_process"
import * as http from "node:http"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { layer } from "../../examples/conformance-host.js"
import { relay } from "../../examples/conformance-relay.js"
import { fixturePath } from "../fixtures/servers.js"
// @ts-expect-error plain ESM script without types
import * as Conformance from "../../scripts/modernConformance.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const runner = path.join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
const listed = JSON.parse(fs.readFileSync(path.join(root, "examples/conformance-scenarios.json"), "utf8")) as {
  serverLeftOut: Record<string, string>
  serverFailing: Record<string, string>
  modernServerLeftOut: Record<string, string>
}
const config = { command: process.execPath, args: [fixturePath("conformance")] }
const askingConfig = { ...config, args: [...config.args, "--input-required"] }

/** An MCP SDK client of the gateway at `url`, presenting `grant`; closed with the scope. */
const connect = (url: string, grant: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "serve-conformance-test", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const runConformance = (argv: ReadonlyArray<string>, entry = runner) =>
  Effect.async<string>((resume) => {
    const child = execFile(
      process.execPath,
      [entry, ...argv],
      { env: { ...process.env, NO_COLOR: "1" } },
      (_, out, err) => resume(Effect.succeed(`${out}${err}`))
    )
    return Effect.sync(() => child.kill())
  })

const summary = (output: string): Map<string, boolean> => Conformance.summaryOf(output)

describe("McpServe conformance", { timeout: 120_000 }, () => {
  it.scopedLive("C144: every server scenario that applies to a gateway passes through it", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(config)
      const grant = yield* serve.grant({ conformance: id }, { unprefixed: true })
      const relayed = yield* Effect.acquireRelease(
        Effect.promise(() => relay(serve.url!, grant)),
        (r) => Effect.promise(() => r.close())
      )
      const scenarios = summary(yield* runConformance(["server", "--url", relayed.url, "--suite", "all"]))
      const set = (yield* runConformance(["list", "--server"])).matchAll(/^\s+- (\S+) \[[^\]]*2025-11-25/gm)
      const all = [...set].map((m) => m[1]!)
      assert.isAbove(all.length, 20)
      for (const name of all) assert.isTrue(scenarios.has(name), `${name} ran`)
      const outOfScope = { ...listed.serverLeftOut, ...listed.serverFailing }
      for (const name of all) {
        // A scenario left out that starts to pass makes the list stale; one that applies must pass.
        assert.strictEqual(scenarios.get(name), outOfScope[name] === undefined, name)
      }
      for (const name of Object.keys(outOfScope)) assert.isTrue(scenarios.has(name), `${name} is a scenario`)
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C165: every 2026-07-28 server scenario of the 0.2.0-alpha line that applies passes through it", () =>
    Effect.gen(function* () {
      // Installed into .runtimes/ as `npm run conformance` installs it: at most once per version.
      const modernRunner: string = yield* Effect.sync(() => Conformance.installModernRunner(root))
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const grant = yield* serve.grant({ conformance: yield* workers.open(config) }, { unprefixed: true })
      const relayed = yield* Effect.acquireRelease(
        Effect.promise(() => relay(serve.url!, grant)),
        (r) => Effect.promise(() => r.close())
      )
      const revision: string = Conformance.modernRevision
      const listing = yield* runConformance(["list", "--server", "--requirements", revision], modernRunner)
      const required: Array<string> = Conformance.requiredScenarios(listing, "Server")
      assert.isAbove(required.length, 30)
      const ran = yield* runConformance(["server", "--url", relayed.url, "--requirements", revision], modernRunner)
      const scenarios = summary(ran)
      const asking = required.filter((name) => name.startsWith("input-required-result-"))
      // C173: a scenario that takes input_required and never retries holds its worker; each runs on one of its own.
      const alone = yield* Effect.forEach(
        asking,
        (name) =>
          Effect.gen(function* () {
            const own = yield* serve.grant({ conformance: yield* workers.open(askingConfig) }, { unprefixed: true })
            const to = yield* Effect.acquireRelease(
              Effect.promise(() => relay(serve.url!, own)),
              (r) => Effect.promise(() => r.close())
            )
            const run = yield* runConformance(
              ["server", "--url", to.url, "--scenario", name, "--spec-version", revision, "--verbose"],
              modernRunner
            )
            // One scenario's --verbose output is its checks as JSON; it passes when none failed.
            const checks = JSON.parse(run.slice(run.indexOf("\n["), run.indexOf("\n]") + 2)) as Array<{
              status: string
            }>
            const passed = checks.some((c) => c.status === "SUCCESS") && checks.every((c) => c.status !== "FAILURE")
            return [name, passed] as [string, boolean]
          }),
        { concurrency: 3 }
      )
      for (const [name, passed] of [...scenarios].filter(([name]) => !asking.includes(name)).concat(alone)) {
        if (!required.includes(name)) continue
        // As for 2025-11-25: one left out that starts to pass makes the list stale; one that applies must pass.
        assert.strictEqual(passed, listed.modernServerLeftOut[name] === undefined, name)
      }
      for (const name of required) assert.isTrue(scenarios.has(name), `${name} ran`)
      for (const name of Object.keys(listed.modernServerLeftOut)) assert.include(required, name)
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C141, C142: two workers: prompts carry the worker's name; a URI both serve is refused unsent", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const a = yield* workers.open(config)
      const b = yield* workers.open(config)
      const refused = yield* Effect.flip(serve.grant({ a, b }, { unprefixed: true }))
      assert.strictEqual(refused._tag, "InvalidInput")
      assert.strictEqual((refused as { path?: string }).path, "options.unprefixed")
      const grant = yield* serve.grant({ a, b })
      const client = yield* connect(serve.url!, grant)
      const prompts = yield* Effect.promise(() => client.listPrompts())
      assert.includeMembers(
        prompts.prompts.map((prompt) => prompt.name),
        ["a__test_simple_prompt", "b__test_prompt_with_arguments"]
      )
      const got = yield* Effect.promise(() =>
        client.getPrompt({ name: "b__test_prompt_with_arguments", arguments: { arg1: "x1", arg2: "y2" } })
      )
      assert.include(JSON.stringify(got.messages), "arg1='x1', arg2='y2'")
      const error = yield* Effect.promise(() =>
        client.readResource({ uri: "test://static-text" }).then(
          () => assert.fail("a URI two workers serve was read"),
          (error: unknown) => error as McpError
        )
      )
      assert.instanceOf(error, McpError)
      assert.strictEqual(error.code, -32602)
      const data = error.data as Record<string, unknown>
      assert.deepStrictEqual([data._tag, data.path, data.delivery], ["InvalidInput", "uri", "not_sent"])
      assert.include(String(data.message), "a, b")
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive(
    "C142, C143: a tool filter narrows tools only; a changed prompt list and a subscribed update are announced",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const id = yield* workers.open({ ...config, args: [...config.args, "--with-changes"] })
        const client = yield* connect(
          serve.url!,
          yield* serve.grant({ w: { id, tools: ["add_prompt", "touch_watched"] } })
        )
        const tools = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(
          tools.tools.map((tool) => tool.name),
          ["w__add_prompt", "w__touch_watched"]
        )
        const before = yield* Effect.promise(() => client.listPrompts())
        assert.includeMembers(
          before.prompts.map((prompt) => prompt.name),
          ["w__test_simple_prompt", "w__test_prompt_with_image"]
        )
        const resources = yield* Effect.promise(() => client.listResources())
        assert.include(
          resources.resources.map((resource) => resource.uri),
          "test://static-text"
        )
        const announced = yield* Deferred.make<void>()
        client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
          Effect.runSync(Deferred.succeed(announced, undefined))
        })
        yield* Effect.promise(() => client.callTool({ name: "w__add_prompt", arguments: {} }))
        yield* Deferred.await(announced)
        const after = yield* Effect.promise(() => client.listPrompts())
        assert.include(
          after.prompts.map((prompt) => prompt.name),
          "w__added_prompt"
        )
        const updated = yield* Deferred.make<string>()
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
          Effect.runSync(Deferred.succeed(updated, notification.params.uri))
        })
        yield* Effect.promise(() => client.subscribeResource({ uri: "test://watched-resource" }))
        yield* Effect.promise(() => client.callTool({ name: "w__touch_watched", arguments: {} }))
        assert.strictEqual(yield* Deferred.await(updated), "test://watched-resource")
      }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C145: a request naming another host, or from another origin, is 403 with a grant that holds", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const grant = yield* serve.grant({ w: yield* workers.open(config) })
      const url = new URL(serve.url!)
      const status = (headers: Record<string, string>) =>
        Effect.async<number>((resume) => {
          const body = JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
          })
          const req = http.request(
            {
              host: url.hostname,
              port: url.port,
              path: url.pathname,
              method: "POST",
              headers: {
                authorization: `Bearer ${grant}`,
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                ...headers
              }
            },
            (res) => {
              res.resume()
              resume(Effect.succeed(res.statusCode ?? 0))
            }
          )
          req.on("error", (error) => resume(Effect.die(error)))
          req.end(body)
        })
      assert.strictEqual(yield* status({ host: `evil.example:${url.port}` }), 403)
      assert.strictEqual(yield* status({ host: `localhost:${url.port}`, origin: "http://evil.example" }), 403)
      assert.strictEqual(yield* status({ host: `127.0.0.1.evil.example` }), 403)
      assert.strictEqual(yield* status({ host: `localhost:${url.port}`, origin: `http://localhost:${url.port}` }), 200)
      assert.strictEqual(yield* status({ host: `[::1]:${url.port}` }), 200)
    }).pipe(Effect.provide(layer))
  )
})

import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

// Run in a fresh process: this one has long since loaded everything. The probe first loads, through the same
// loader, a module that imports nothing, so the loader's own threads and resources are on both sides of the
// comparison and only the two packages differ. Three views: threads by name (as `/proc` shows them), the kinds
// of async resource created while the packages load (timers, sockets, processes, workers, ports — ref'd or
// not), and what is still active afterwards. The transform cache is off: with it on, a cache miss starts
// esbuild's thread late and tsx writes its cache in the background.
const probe = `
const fs = await import("node:fs")
const { createHook } = await import("node:async_hooks")
const threads = () =>
  fs.readdirSync("/proc/self/task").map((task) => {
    try {
      return fs.readFileSync("/proc/self/task/" + task + "/comm", "utf8").trim()
    } catch {
      return "(ended)"
    }
  })
const load = async (files) => {
  const created = []
  const hook = createHook({ init: (_id, type) => created.push(type) }).enable()
  for (const file of files) await import(file)
  hook.disable()
  await new Promise((resolve) => setImmediate(resolve))
  return {
    created: [...new Set(created)],
    threads: threads(),
    resources: process.getActiveResourcesInfo(),
    exit: process.listenerCount("exit")
  }
}
const before = await load([${JSON.stringify(path.join(root, "test/node/importBaseline.ts"))}])
const after = await load(${JSON.stringify(["packages/core/src/index.ts", "packages/node/src/index.ts"].map((file) => path.join(root, file)))})
console.log(JSON.stringify({ before, after }))
`

const count = (list: Array<string>) =>
  list.reduce<Record<string, number>>((acc, name) => ({ ...acc, [name]: (acc[name] ?? 0) + 1 }), {})

describe("imports (C2)", () => {
  it("importing both packages starts no thread, timer, process, socket or listener", async () => {
    const started = Date.now()
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", probe],
        { cwd: root, timeout: 20_000, env: { ...process.env, TSX_DISABLE_CACHE: "1" } },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))
      )
    )
    const { after, before } = JSON.parse(output.trim().split("\n").pop()!)
    const [threadsWere, threadsNow] = [count(before.threads), count(after.threads)]
    for (const [name, n] of Object.entries(threadsNow)) {
      assert.isAtMost(n, threadsWere[name] ?? 0, `a new thread is running: ${name}`)
    }
    for (const type of after.created) assert.include(before.created, type, `loading the packages created a ${type}`)
    // Nothing new may be active (the loader may finish some of its own work meanwhile: fewer is fine).
    const [was, now] = [count(before.resources), count(after.resources)]
    for (const [name, n] of Object.entries(now)) assert.isAtMost(n, was[name] ?? 0, `a new ${name} is active`)
    assert.strictEqual(after.exit, before.exit)
    // Nothing keeps the event loop alive: the process ended on its own.
    assert.isBelow(Date.now() - started, 15_000)
  })
})

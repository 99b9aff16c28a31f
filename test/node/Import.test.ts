import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

// Run in a fresh process: this one has long since loaded everything.
const probe = `
const fs = await import("node:fs")
const threads = () => fs.readdirSync("/proc/self/task").length
const before = { threads: threads(), resources: process.getActiveResourcesInfo(), exit: process.listenerCount("exit") }
await import(${JSON.stringify(path.join(root, "packages/core/src/index.ts"))})
await import(${JSON.stringify(path.join(root, "packages/node/src/index.ts"))})
await new Promise((resolve) => setImmediate(resolve))
const after = { threads: threads(), resources: process.getActiveResourcesInfo(), exit: process.listenerCount("exit") }
console.log(JSON.stringify({ before, after }))
`

describe("imports (C2)", () => {
  it("importing both packages starts no thread, timer, process, socket or listener", async () => {
    const started = Date.now()
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", probe],
        { cwd: root, timeout: 20_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))
      )
    )
    const { after, before } = JSON.parse(output.trim().split("\n").pop()!)
    assert.strictEqual(after.threads, before.threads)
    // Nothing new may be active (the loader may finish some of its own work meanwhile: fewer is fine).
    const count = (list: Array<string>) =>
      list.reduce<Record<string, number>>((acc, name) => ({ ...acc, [name]: (acc[name] ?? 0) + 1 }), {})
    const [was, now] = [count(before.resources), count(after.resources)]
    for (const [name, n] of Object.entries(now)) assert.isAtMost(n, was[name] ?? 0, `a new ${name} is active`)
    assert.strictEqual(after.exit, before.exit)
    // Nothing keeps the event loop alive: the process ended on its own.
    assert.isBelow(Date.now() - started, 15_000)
  })
})

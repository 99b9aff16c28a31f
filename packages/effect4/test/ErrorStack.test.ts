// C97: an error of this face that Node prints (console.log, uncaught out of Effect.runPromise) shows its tag,
// delivery and message first, and no frames of the Effect library, as core's do (test/core/ErrorStack.test.ts).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const stateful = path.resolve(here, "../../../test/fixtures/dist/stateful.mjs")

// Bundled beside this package (its `effect` and the implementation stay outside, resolved as an install resolves
// them), so that Effect's frames are Effect's files.
let dir = ""
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(here, ".uncaught-"))
  await esbuild.build({
    entryPoints: [path.join(here, "uncaught-entry.ts")],
    outfile: path.join(dir, "uncaught-entry.mjs"),
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node22",
    plugins: [
      {
        name: "external-implementation",
        setup(build) {
          build.onResolve({ filter: /lib\/effect3\/bundle\/[a-z]+\.mjs$/ }, (args) => ({
            path: path.resolve(args.resolveDir, args.path),
            external: true
          }))
        }
      }
    ],
    logLevel: "warning"
  })
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const effectFrames = /node_modules[\\/](effect|@effect[\\/][^\\/]+)[\\/]|Schema\.js|interpreter\.js/

describe("C97: errors read well when Node prints them", () => {
  it("a ResultTooLarge decoded from the owner thread, logged and uncaught: tag, delivery, message, no Effect frames", async () => {
    const { code, stdout, stderr } = await new Promise<{ code: unknown; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [path.join(dir, "uncaught-entry.mjs"), JSON.stringify([process.execPath, stateful])],
        { cwd: here, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error?.code ?? 0, stdout, stderr })
      )
    )
    assert.strictEqual(code, 1, stderr)
    const header = "ResultTooLarge [unknown]: the answer to request "
    assert.isTrue(stdout.startsWith(header), stdout)
    const report = stderr.slice(stderr.indexOf(header))
    assert.isTrue(stderr.includes(header), stderr)
    assert.notMatch(report, effectFrames, report)
    assert.include(report, "delivery: 'unknown'")
  }, 90_000)
})

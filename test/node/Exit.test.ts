// C93: a program that never disposes its host or client exits by itself once its work is done, and leaves no
// server behind. The program is bundled into main.mjs in a temporary directory and run as a user would run it.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
// @ts-expect-error plain ESM build script without types
import { bundleHost } from "../../scripts/bundle.mjs"
import { fixturePath } from "../fixtures/servers.js"
import { eventually, isAlive, processesWithEnv, tag } from "./helpers.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

// How long a finished program may take to end: nothing of the library may hold it, so this is only process teardown.
const exitWithinMs = 5_000

// main.mjs in a temporary directory of its own, bundled once for the file's tests.
let main = ""
beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-exit-"))
  main = path.join(dir, "main.mjs")
  await bundleHost({ entryPoints: [path.join(root, "test/fixtures/undisposed-program.ts")], outfile: main })
})
afterAll(() => fs.rmSync(path.dirname(main), { recursive: true, force: true }))

interface Run {
  readonly code: number | null
  readonly stdout: string
  /** From the program's last line (`PID`) to the process's end. */
  readonly afterDoneMs: number
}

/** Runs `node main.mjs <face>` and waits for it to end by itself; it and its server are killed if they outlive the scope. */
const run = (main: string, face: string) =>
  Effect.gen(function* () {
    const testTag = tag()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [main, face, fixturePath("stateful")], {
          cwd: path.dirname(main),
          env: { ...process.env, TEST_TAG: testTag },
          stdio: ["ignore", "pipe", "inherit"]
        })
      ),
      (child) =>
        Effect.sync(() => {
          child.kill("SIGKILL")
          for (const pid of processesWithEnv("TEST_TAG", testTag)) process.kill(pid, "SIGKILL")
        })
    )
    return yield* Effect.async<Run>((resume) => {
      let stdout = ""
      let doneAt = 0
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => {
        stdout += chunk
        if (doneAt === 0 && /^PID \d+$/m.test(stdout)) doneAt = Date.now()
      })
      child.once("close", (code) => resume(Effect.succeed({ code, stdout, afterDoneMs: Date.now() - doneAt })))
    })
  })

const serverPid = (stdout: string) => Number(/^PID (\d+)$/m.exec(stdout)![1])

describe("C93: a program that never disposes exits by itself", () => {
  for (const face of ["promise-host", "promise-process", "promise-client", "effect"]) {
    it.scopedLive(
      `${face}: the awaited call completes, the process ends, no server is left`,
      () =>
        Effect.gen(function* () {
          // A program that is never done fails here, by the test's timeout: it is killed with the scope.
          const ended = yield* run(main, face)
          assert.strictEqual(ended.code, 0, ended.stdout)
          const result = JSON.parse(/^RESULT (.*)$/m.exec(ended.stdout)![1]!)
          assert.deepStrictEqual(result, { token: face, slept: 1_000 })
          if (face === "effect") assert.include(ended.stdout, "CLOSED")
          assert.isAtMost(ended.afterDoneMs, exitWithinMs)
          const pid = serverPid(ended.stdout)
          assert.isTrue(
            yield* Effect.promise(() => eventually(() => !isAlive(pid), 2_000)),
            `server ${pid} outlived its host`
          )
        }),
      // Each program is a process of its own that mostly waits on its server: the four run at once.
      { timeout: 60_000, concurrent: true }
    )
  }
})

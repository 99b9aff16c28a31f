// Runs the MCP conformance suite's client scenarios against examples/conformance-client.ts and prints one line per
// scenario. The suite's runner needs Node >= 22 (`fs.globSync`), so it runs on the pinned 22 from
// scripts/node-runtimes.sh; the client under test runs on the Node that runs this script.
//
//   npm run conformance                 # every scenario below
//   npm run conformance -- sse-retry    # the named ones only
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
// The client auth scenarios examples/conformance-client.ts answers, listed once for both.
const { auth } = JSON.parse(fs.readFileSync(path.join(root, "examples/conformance-scenarios.json"), "utf8"))
const scenarios = ["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults", ...auth]
const wanted = process.argv.length > 2 ? process.argv.slice(2) : scenarios

const run = (command, args, options = {}) => {
  const result = spawnSync(command, args, { cwd: root, encoding: "utf8", ...options })
  if (result.error) throw result.error
  return result
}

const bundle = run(process.execPath, ["scripts/bundle.mjs", "owner"], { stdio: "inherit" })
if (bundle.status !== 0) process.exit(bundle.status ?? 1)

const runtimes = run("bash", ["scripts/node-runtimes.sh", "22"], { stdio: ["ignore", "pipe", "inherit"] })
if (runtimes.status !== 0) process.exit(runtimes.status ?? 1)
const node22 = path.join(runtimes.stdout.trim().split("\n").at(-1), "node")
const runner = path.join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
// The runner spawns this through a shell and appends the server's URL.
const client = [process.execPath, "--import", "tsx", path.join(root, "examples/conformance-client.ts")]
  .map((part) => JSON.stringify(part))
  .join(" ")

const version = run(node22, [runner, "--version"]).stdout.trim()
console.log(
  `MCP conformance ${version} (runner on Node ${run(node22, ["--version"]).stdout.trim()}), client on ${process.version}`
)

// Colours and timestamps off: the check lines are read back below.
const strip = (text) => text.replace(/\x1b\[[0-9;]*m/g, "")
const summary = []
for (const scenario of wanted) {
  const result = run(node22, [runner, "client", "--command", client, "--scenario", scenario], {
    env: { ...process.env, NO_COLOR: "1" }
  })
  const output = strip(`${result.stdout}${result.stderr}`)
  const totals = output.match(/Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/)
  const passed = result.status === 0 && totals !== null && totals[3] === "0"
  const checks = output
    .split("\n")
    .map((line) => line.match(/\[([^\]]+?)\s*\]\s+(SUCCESS|FAILURE|WARNING)\s+(.*)$/))
    .filter((match) => match !== null)
  if (!passed) console.log(`\n--- ${scenario} ---\n${output.trim()}\n`)
  console.log(
    `${passed ? "PASS" : "FAIL"}  ${scenario}  ${totals ? `${totals[1]}/${totals[2]} checks, ${totals[4]} warnings` : `runner exited ${result.status}`}`
  )
  for (const [, id, status] of checks) console.log(`        ${status.padEnd(7)} ${id}`)
  summary.push(passed)
}
const failed = summary.filter((passed) => !passed).length
console.log(`\n${summary.length - failed}/${summary.length} scenarios passed`)
process.exit(failed === 0 ? 0 : 1)

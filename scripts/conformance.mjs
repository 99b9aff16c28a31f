// Runs the MCP conformance suite's client scenarios against examples/conformance-client.ts and prints one line per
// scenario, for both protocol eras:
//   - legacy: the 2025-11-25 client scenarios of @modelcontextprotocol/conformance 0.1.16 (the root's dev dependency);
//   - modern: the client scenarios the 2026-07-28 revision requires (`list --client --requirements 2026-07-28`) of
//     the 0.2.0-alpha line, installed into a private prefix under .runtimes/ (its own SDK and zod line would clash
//     with the root lock), each run with `--spec-version 2026-07-28`, which the runner hands the client as
//     MCP_CONFORMANCE_PROTOCOL_VERSION.
//   - server: every 2025-11-25 server scenario of 0.1.16 against the gateway, in front of one worker of the conformance
//     fixture server (examples/conformance-gateway.ts), the runner's client reaching it through a relay that presents
//     the grant.
//   - modern-server: the server scenarios 2026-07-28 requires (`list --server --requirements 2026-07-28`) of the
//     0.2.0-alpha line, against the same gateway, run at that revision's wire.
// Scenarios left out are listed with why in examples/conformance-scenarios.json (`modernLeftOut`, `serverLeftOut`,
// `modernServerLeftOut`, and `serverFailing`: scenarios that apply and fail) and printed.
// Both runners need Node >= 22 (`fs.globSync`), so they run on the pinned 22 from scripts/node-runtimes.sh; the client
// under test runs on the Node that runs this script.
//
//   npm run conformance                 # both eras
//   npm run conformance -- legacy       # one mode (legacy | modern | server | modern-server)
//   npm run conformance -- sse-retry    # the named scenarios only (of either era)
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import {
  installModernRunner,
  modernRevision,
  modernVersion,
  requiredScenarios,
  summaryOf
} from "./modernConformance.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
// The client auth scenarios examples/conformance-client.ts answers, listed once for both.
const listed = JSON.parse(fs.readFileSync(path.join(root, "examples/conformance-scenarios.json"), "utf8"))
const legacyScenarios = ["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults", ...listed.auth]
const leftOut = listed.modernLeftOut ?? {}

const args = process.argv.slice(2)
const modes = ["legacy", "modern", "server", "modern-server"]
const eras = args.filter((arg) => modes.includes(arg))
const named = args.filter((arg) => !modes.includes(arg))
const runEra = (era) => eras.length === 0 || eras.includes(era)

const run = (command, argv, options = {}) => {
  const result = spawnSync(command, argv, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options })
  if (result.error) throw result.error
  return result
}

const gatewayWanted = runEra("server") || runEra("modern-server")
const bundle = run(process.execPath, ["scripts/bundle.mjs", "owner", ...(gatewayWanted ? ["fixtures"] : [])], {
  stdio: "inherit"
})
if (bundle.status !== 0) process.exit(bundle.status ?? 1)

const runtimes = run("bash", ["scripts/node-runtimes.sh", "22"], { stdio: ["ignore", "pipe", "inherit"] })
if (runtimes.status !== 0) process.exit(runtimes.status ?? 1)
const node22 = path.join(runtimes.stdout.trim().split("\n").at(-1), "node")

const legacyRunner = path.join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
const modernRunner = () => {
  try {
    return installModernRunner(root)
  } catch (error) {
    console.error(String(error))
    process.exit(1)
  }
}

// The runner spawns this through a shell and appends the server's URL.
const client = [process.execPath, "--import", "tsx", path.join(root, "examples/conformance-client.ts")]
  .map((part) => JSON.stringify(part))
  .join(" ")

// Colours and timestamps off: the check lines are read back below.
const strip = (text) => text.replace(/\x1b\[[0-9;]*m/g, "")

const runScenario = (runner, scenario, extra) => {
  const result = run(node22, [runner, "client", "--command", client, "--scenario", scenario, ...extra], {
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
  return passed
}

const results = []
if (runEra("legacy")) {
  const wanted = named.length > 0 ? legacyScenarios.filter((s) => named.includes(s)) : legacyScenarios
  if (wanted.length > 0) {
    const version = run(node22, [legacyRunner, "--version"]).stdout.trim()
    console.log(
      `MCP conformance ${version}, 2025-11-25 client scenarios (runner on Node 22), client on ${process.version}`
    )
    for (const scenario of wanted) results.push({ era: "legacy", passed: runScenario(legacyRunner, scenario, []) })
  }
}
if (runEra("modern")) {
  const runner = modernRunner()
  // The client scenarios of the frozen requirement set: the lines between "Client scenarios" and the next heading.
  const required = requiredScenarios(
    strip(run(node22, [runner, "list", "--client", "--requirements", modernRevision]).stdout),
    "Client"
  )
  const all = named.length > 0 ? required.filter((s) => named.includes(s)) : required
  const wanted = all.filter((s) => leftOut[s] === undefined)
  if (all.length > 0) {
    console.log(
      `\nMCP conformance ${modernVersion}, the ${required.length} client scenarios ${modernRevision} requires, client on ${process.version}`
    )
    for (const scenario of all.filter((s) => leftOut[s] !== undefined)) {
      console.log(`SKIP  ${scenario}  ${leftOut[scenario]}`)
    }
    for (const scenario of wanted) {
      results.push({
        era: "modern",
        passed: runScenario(runner, scenario, ["--spec-version", modernRevision])
      })
    }
  }
}

// A gateway runs until its input ends; it prints its relay's URL as one JSON line when it serves.
const startGateway = async (args = []) => {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/conformance-gateway.ts", ...args], {
    cwd: root,
    stdio: ["pipe", "pipe", "inherit"]
  })
  const first = await new Promise((resolve) => {
    createInterface({ input: child.stdout }).once("line", resolve)
    child.once("exit", () => resolve(null))
  })
  if (first === null) process.exit(1)
  const stop = async () => {
    child.stdin.end()
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve))
  }
  return { url: JSON.parse(first).url, stop }
}
const gateway = gatewayWanted ? await startGateway() : undefined
const url = gateway?.url

if (runEra("server")) {
  const outOfScope = { ...listed.serverLeftOut, ...listed.serverFailing }
  const listing = strip(run(node22, [legacyRunner, "list", "--server"]).stdout)
  const all = [...listing.matchAll(/^\s+- (\S+) \[[^\]]*2025-11-25/gm)].map((match) => match[1])
  const wanted = named.length > 0 ? all.filter((s) => named.includes(s)) : all
  console.log(`\nMCP conformance 0.1.16, ${all.length} server scenarios of 2025-11-25, against the gateway at ${url}`)
  for (const scenario of wanted) {
    const result = run(node22, [legacyRunner, "server", "--url", url, "--scenario", scenario], {
      env: { ...process.env, NO_COLOR: "1" }
    })
    const output = strip(`${result.stdout}${result.stderr}`)
    const passed = result.status === 0 && /Passed: \d+\/\d+, 0 failed/.test(output)
    const why = outOfScope[scenario]
    if (why !== undefined) {
      console.log(`${passed ? "PASS" : "SKIP"}  ${scenario}  ${why}`)
      // A scenario listed as out of scope that passes makes the list stale.
      results.push({ era: "server", passed: !passed, leftOut: true })
      continue
    }
    if (!passed) console.log(`\n--- ${scenario} ---\n${output.trim()}\n`)
    console.log(`${passed ? "PASS" : "FAIL"}  ${scenario}`)
    results.push({ era: "server", passed })
  }
}

if (runEra("modern-server")) {
  const runner = modernRunner()
  const required = requiredScenarios(
    strip(run(node22, [runner, "list", "--server", "--requirements", modernRevision]).stdout),
    "Server"
  )
  const outOfScope = listed.modernServerLeftOut ?? {}
  // One run of the frozen set (it runs in seconds); the never-scored scenarios it adds are not read.
  const result = run(node22, [runner, "server", "--url", url, "--requirements", modernRevision], {
    env: { ...process.env, NO_COLOR: "1" }
  })
  const output = strip(`${result.stdout}${result.stderr}`)
  const scenarios = summaryOf(output)
  // C174: a scenario that takes input_required and never retries holds its worker; each runs on a gateway of its own.
  for (const scenario of required.filter((s) => s.startsWith("input-required-result-"))) {
    if (named.length > 0 && !named.includes(scenario)) continue
    const own = await startGateway(["--input-required"])
    const alone = run(
      node22,
      [runner, "server", "--url", own.url, "--scenario", scenario, "--spec-version", modernRevision, "--verbose"],
      { env: { ...process.env, NO_COLOR: "1" } }
    )
    await own.stop()
    // One scenario's --verbose output is its checks as JSON; it passes when none failed.
    const text = strip(`${alone.stdout}`)
    const checks = JSON.parse(text.slice(text.indexOf("\n["), text.indexOf("\n]") + 2))
    scenarios.set(scenario, checks.some((c) => c.status === "SUCCESS") && checks.every((c) => c.status !== "FAILURE"))
  }
  console.log(
    `\nMCP conformance ${modernVersion}, the ${required.length} server scenarios ${modernRevision} requires, against the gateway at ${url}`
  )
  for (const scenario of required.filter((s) => named.length === 0 || named.includes(s))) {
    const passed = scenarios.get(scenario) === true
    const why = outOfScope[scenario]
    if (why !== undefined) {
      console.log(`${passed ? "PASS" : "SKIP"}  ${scenario}  ${why}`)
      results.push({ era: "modern-server", passed: !passed, leftOut: true })
      continue
    }
    console.log(`${passed ? "PASS" : scenarios.has(scenario) ? "FAIL" : "MISSING"}  ${scenario}`)
    results.push({ era: "modern-server", passed })
  }
  if (results.some((r) => r.era === "modern-server" && !r.passed)) console.log(`\n${output.trim()}\n`)
}

if (gateway) await gateway.stop()

const line = (era) => {
  const all = results.filter((r) => r.era === era)
  const of = all.filter((r) => !r.leftOut)
  const stale = all.filter((r) => r.leftOut && !r.passed).length
  const out = all.length - of.length
  const rest = out === 0 ? "" : `, ${out} left out${stale === 0 ? "" : ` (${stale} of them passed: the list is stale)`}`
  return all.length === 0 ? null : `${era}: ${of.filter((r) => r.passed).length}/${of.length} scenarios passed${rest}`
}
console.log(
  `\n${modes
    .map(line)
    .filter((l) => l !== null)
    .join("; ")}`
)
process.exit(results.every((r) => r.passed) ? 0 : 1)

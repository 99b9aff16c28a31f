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
// Scenarios left out are listed with why in examples/conformance-scenarios.json (`modernLeftOut`, `serverLeftOut`,
// and `serverFailing`: scenarios that apply and fail) and printed.
// Both runners need Node >= 22 (`fs.globSync`), so they run on the pinned 22 from scripts/node-runtimes.sh; the client
// under test runs on the Node that runs this script.
//
//   npm run conformance                 # both eras
//   npm run conformance -- legacy       # one mode (legacy | modern | server)
//   npm run conformance -- sse-retry    # the named scenarios only (of either era)
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
// The line that tracks 2026-07-28; bump with a full run.
const modernVersion = "0.2.0-alpha.12"
const modernRevision = "2026-07-28"

// The client auth scenarios examples/conformance-client.ts answers, listed once for both.
const listed = JSON.parse(fs.readFileSync(path.join(root, "examples/conformance-scenarios.json"), "utf8"))
const legacyScenarios = ["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults", ...listed.auth]
const leftOut = listed.modernLeftOut ?? {}

const args = process.argv.slice(2)
const modes = ["legacy", "modern", "server"]
const eras = args.filter((arg) => modes.includes(arg))
const named = args.filter((arg) => !modes.includes(arg))
const runEra = (era) => eras.length === 0 || eras.includes(era)

const run = (command, argv, options = {}) => {
  const result = spawnSync(command, argv, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options })
  if (result.error) throw result.error
  return result
}

const bundle = run(process.execPath, ["scripts/bundle.mjs", "owner", ...(runEra("server") ? ["fixtures"] : [])], {
  stdio: "inherit"
})
if (bundle.status !== 0) process.exit(bundle.status ?? 1)

const runtimes = run("bash", ["scripts/node-runtimes.sh", "22"], { stdio: ["ignore", "pipe", "inherit"] })
if (runtimes.status !== 0) process.exit(runtimes.status ?? 1)
const node22 = path.join(runtimes.stdout.trim().split("\n").at(-1), "node")

const legacyRunner = path.join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
const modernRunner = () => {
  const prefix = path.join(root, ".runtimes", `conformance-${modernVersion}`)
  const entry = path.join(prefix, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
  const installed = path.join(prefix, "node_modules/@modelcontextprotocol/conformance/package.json")
  const version = fs.existsSync(installed) ? JSON.parse(fs.readFileSync(installed, "utf8")).version : null
  if (version !== modernVersion) {
    // No lock file and no scripts: this prefix holds one tool, not a project.
    const npm = run(
      "npm",
      [
        "install",
        "--prefix",
        prefix,
        "--no-save",
        "--no-package-lock",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        `@modelcontextprotocol/conformance@${modernVersion}`
      ],
      { stdio: ["ignore", "inherit", "inherit"] }
    )
    if (npm.status !== 0) process.exit(npm.status ?? 1)
  }
  return entry
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
  const listing = strip(run(node22, [runner, "list", "--client", "--requirements", modernRevision]).stdout)
  const section = listing.split(/\n\s*\n/).find((block) => block.trim().startsWith("Client scenarios")) ?? ""
  const required = [...section.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1])
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

if (runEra("server")) {
  // The gateway runs until its input ends; it prints its relay's URL as one JSON line when it serves.
  const gateway = spawn(process.execPath, ["--import", "tsx", "examples/conformance-gateway.ts"], {
    cwd: root,
    stdio: ["pipe", "pipe", "inherit"]
  })
  const first = await new Promise((resolve) => {
    createInterface({ input: gateway.stdout }).once("line", resolve)
    gateway.once("exit", () => resolve(null))
  })
  if (first === null) process.exit(1)
  const { url } = JSON.parse(first)
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
  gateway.stdin.end()
  await new Promise((resolve) => gateway.once("exit", resolve))
}

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

// `npm test`: the static checks, the suite, and the Effect 4 workspace's suite. MCPW_NODE_INDEPENDENT selects which
// shares of the Node-independent checks and suites run (scripts/testShares.mjs): all of them unless it says otherwise,
// as in CI, where each Node runs one. Stops at the first step that fails.
import { spawnSync } from "node:child_process"
import { nodeIndependent, sharesOf } from "./testShares.mjs"

const shares = sharesOf(process.env.MCPW_NODE_INDEPENDENT)
const steps = [
  ...shares.flatMap((share) => nodeIndependent[share - 1].checks.map((script) => ["npm", "run", script])),
  ["npx", "vitest", "run"],
  ["node", "scripts/test-effect4.mjs"]
]

if (shares.length < nodeIndependent.length) {
  const which = shares.length === 0 ? "none" : `share ${shares.join(", ")} of ${nodeIndependent.length}`
  console.log(
    `test: Node ${process.versions.node}; Node-independent checks and suites: ${which} (MCPW_NODE_INDEPENDENT)`
  )
}
for (const [command, ...args] of steps) {
  const started = Date.now()
  const { status, signal } = spawnSync(command, args, { stdio: "inherit" })
  console.log(
    `test: ${[command, ...args].join(" ")} ${status === 0 ? "passed" : "FAILED"} in ${Date.now() - started} ms`
  )
  if (status !== 0) process.exit(status ?? (signal === null ? 1 : 128))
}

// `npm test`: the static checks, the suite, and the Effect 4 workspace's suite. With MCPW_NODE_INDEPENDENT=0 (CI's
// runs on every Node but one) only what can differ between Node versions runs: the static checks are left out, and
// vitest.config.ts leaves out its Node-independent suites. Stops at the first step that fails.
import { spawnSync } from "node:child_process"

const everything = process.env.MCPW_NODE_INDEPENDENT !== "0"
const steps = [
  ...(everything ? ["typecheck", "lint", "imports", "sizes", "docs"].map((script) => ["npm", "run", script]) : []),
  ["npx", "vitest", "run"],
  ["node", "scripts/test-effect4.mjs"]
]

if (!everything) {
  console.log(
    `test: Node ${process.versions.node}, the Node-dependent part only (MCPW_NODE_INDEPENDENT=0): no static checks, ` +
      "no Node-independent suites"
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

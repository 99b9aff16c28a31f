// The peers of the flood bench, each its own process: `measure` times sequential `callTool` echo calls on its grant
// and prints their latencies (ms) as JSON; `flood` keeps 16 calls at a time on its grant, refused as busy or not,
// until its stdin closes, then prints how many it made.
import { makePromiseClient } from "../packages/node/src/PromiseClient.js"

interface Input {
  readonly socket: string
  readonly grant: string
  readonly mode: "measure" | "flood"
  readonly calls: number
}

const input: Input = JSON.parse(process.argv[2]!)
const mcp = makePromiseClient({ connect: input.socket })

const measure = async () => {
  for (let i = 0; i < 100; i++) await mcp.callTool(input.grant, "echo", { token: `w${i}` })
  const latencies: Array<number> = []
  for (let i = 0; i < input.calls; i++) {
    const started = performance.now()
    await mcp.callTool(input.grant, "echo", { token: `t${i}` })
    latencies.push(performance.now() - started)
  }
  process.stdout.write(JSON.stringify(latencies) + "\n")
}

const flood = async () => {
  let stop = false
  let made = 0
  process.stdin.on("close", () => (stop = true)).resume()
  const loop = async () => {
    while (!stop) {
      made++
      await mcp.callTool(input.grant, "inc", {}).catch(() => undefined)
    }
  }
  process.stdout.write("FLOODING\n")
  await Promise.all(Array.from({ length: 16 }, loop))
  process.stdout.write(`${made}\n`)
}

await (input.mode === "measure" ? measure() : flood())
await mcp.dispose()

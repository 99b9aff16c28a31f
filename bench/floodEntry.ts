// The peers of the flood bench, each its own process driven by lines on its stdin. `measure`: warms up, prints
// `READY`, then for each line `N` makes N sequential `callTool` echo calls on its grant and prints their latencies (ms)
// as JSON. `flood`: on `start` keeps 16 calls at a time on its grant, refused as busy or not, and prints `FLOODING`;
// on `stop` lets them end and prints how many it made.
import { createInterface } from "node:readline"
import { makePromiseClient } from "../packages/node/src/PromiseClient.js"

interface Input {
  readonly socket: string
  readonly grant: string
  readonly mode: "measure" | "flood"
}

const input: Input = JSON.parse(process.argv[2]!)
const mcp = makePromiseClient({ connect: input.socket })
const say = (line: string) => process.stdout.write(line + "\n")

const measure = async (calls: number) => {
  const latencies: Array<number> = []
  for (let i = 0; i < calls; i++) {
    const started = performance.now()
    await mcp.callTool(input.grant, "echo", { token: `t${i}` })
    latencies.push(performance.now() - started)
  }
  say(JSON.stringify(latencies))
}

let flooding: { stop: boolean; made: number; loops: Promise<unknown> } | undefined
const start = () => {
  const state = { stop: false, made: 0, loops: Promise.resolve() as Promise<unknown> }
  const loop = async () => {
    while (!state.stop) {
      state.made++
      await mcp.callTool(input.grant, "inc", {}).catch(() => undefined)
    }
  }
  state.loops = Promise.all(Array.from({ length: 16 }, loop))
  flooding = state
  say("FLOODING")
}
const stop = async () => {
  const state = flooding!
  state.stop = true
  await state.loops
  say(String(state.made))
}

if (input.mode === "measure") {
  for (let i = 0; i < 100; i++) await mcp.callTool(input.grant, "echo", { token: `w${i}` })
  say("READY")
}
// One command at a time, in order.
let queue: Promise<unknown> = Promise.resolve()
for await (const line of createInterface({ input: process.stdin })) {
  queue = queue.then(() =>
    input.mode === "measure" ? measure(Number(line)) : line === "start" ? start() : line === "stop" ? stop() : undefined
  )
}
await queue
await mcp.dispose()

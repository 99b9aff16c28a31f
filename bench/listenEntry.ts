// The sandbox side of the listener bench: `callTool` echo over a listener's socket against the SDK `Client` used
// directly in this same process, in interleaved blocks; or (in a worker_thread of the host) the same call from a
// remote thread. Prints (or posts) the µs per call of each block as JSON.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { isMainThread, parentPort, workerData } from "node:worker_threads"
import { makePromiseClient } from "../packages/node/src/PromiseClient.js"
import * as Profiler from "./profiler.js"

interface Input {
  readonly socket?: string
  readonly id: string
  readonly fixture: string
  readonly blocks: number
  readonly perBlock: number
}

const input: Input = isMainThread ? JSON.parse(process.argv[2]!) : workerData

// `BENCH_PROFILE_DIR`: each measured block of this process is profiled on its own (socket-<b>, direct-<b>).
const profiler = Profiler.make(isMainThread ? process.env.BENCH_PROFILE_DIR : undefined)
const profiledBlock = (name: string, n: number, call: (i: number) => Promise<unknown>) =>
  profiler.around(name, () => block(n, call))

const block = async (n: number, call: (i: number) => Promise<unknown>) => {
  const started = performance.now()
  for (let i = 0; i < n; i++) await call(i)
  return ((performance.now() - started) / n) * 1000
}

const main = async () => {
  const mcp = makePromiseClient(input.socket === undefined ? undefined : { connect: input.socket })
  const viaMcp = (i: number) => mcp.callTool(input.id, "echo", { token: `t${i}` })
  if (input.socket === undefined) {
    await block(200, viaMcp)
    const thread: Array<number> = []
    for (let b = 0; b < input.blocks; b++) thread.push(await block(input.perBlock, viaMcp))
    await mcp.dispose()
    parentPort!.postMessage({ thread })
    return
  }
  const sdk = new Client({ name: "bench", version: "1" })
  await sdk.connect(
    new StdioClientTransport({ command: process.execPath, args: [input.fixture, "--exit-on-stdin-eof"] })
  )
  const direct = (i: number) => sdk.callTool({ name: "echo", arguments: { token: `t${i}` } })
  await block(200, viaMcp)
  await block(200, direct)
  const socket: Array<number> = []
  const sdkBlocks: Array<number> = []
  for (let b = 0; b < input.blocks; b++) {
    if (b % 2 === 0) {
      socket.push(await profiledBlock(`socket-${b}`, input.perBlock, viaMcp))
      sdkBlocks.push(await profiledBlock(`direct-${b}`, input.perBlock, direct))
    } else {
      sdkBlocks.push(await profiledBlock(`direct-${b}`, input.perBlock, direct))
      socket.push(await profiledBlock(`socket-${b}`, input.perBlock, viaMcp))
    }
  }
  await sdk.close()
  await mcp.dispose()
  process.stdout.write(JSON.stringify({ socket, direct: sdkBlocks }) + "\n")
}

await main()

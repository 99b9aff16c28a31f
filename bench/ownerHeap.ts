// `npm run bench:heap`: where an owner thread's heap goes. Opens one worker on the stateful fixture, makes 50 calls,
// waits past the owner's warm-cache write, then takes a heap snapshot of its owner thread from the host
// (`worker.getHeapSnapshot()`) and sums it by what the memory holds: compiled code and its metadata, the runtime's
// source, other strings, and the objects, closures and arrays that the SDK, Effect and the library build. The
// snapshot is kept (its path is printed) for a closer look in DevTools.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as DiagnosticsChannel from "node:diagnostics_channel"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Worker } from "node:worker_threads"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const fixture = path.join(root, "test/fixtures/dist/stateful.mjs")
const out = path.join(os.tmpdir(), `mcp-worker-owner-${process.pid}.heapsnapshot`)

const threads: Array<Worker> = []
DiagnosticsChannel.subscribe("worker_threads", (message) => threads.push((message as { worker: Worker }).worker))

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: Array<string>; readonly node_types: [Array<string>] } }
  readonly nodes: Array<number>
  readonly strings: Array<string>
}

// What a node of the snapshot is, by its type and name: the categories of the breakdown.
const categoryOf = (type: string, name: string, size: number): string => {
  if (type === "code") return "code: bytecode, function metadata, feedback"
  if (type === "string" && size > 256 * 1024) return "strings: the runtime's source (kept by V8)"
  if (type === "string" || type === "concatenated string" || type === "sliced string") return "strings: other"
  if (type === "native") return `native: ${name}`
  if (type === "closure") return "closures"
  if (type === "object shape" || type === "hidden") return "object shapes and V8 internals"
  if (type === "array") return "arrays (object and property backing stores)"
  if (name === "system / Context") return "closure contexts (module scopes)"
  if (type === "object") return "objects"
  return type
}

const breakdown = (snapshot: Snapshot) => {
  const fields = snapshot.snapshot.meta.node_fields
  const types = snapshot.snapshot.meta.node_types[0]
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((field) => fields.indexOf(field)) as [
    number,
    number,
    number
  ]
  const sums = new Map<string, number>()
  let total = 0
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const size = snapshot.nodes[i + sizeAt]!
    const category = categoryOf(
      types[snapshot.nodes[i + typeAt]!]!,
      snapshot.strings[snapshot.nodes[i + nameAt]!]!,
      size
    )
    sums.set(category, (sums.get(category) ?? 0) + size)
    total += size
  }
  return { total, sums: [...sums].sort((a, b) => b[1] - a[1]) }
}

const MiB = 1024 * 1024

await Effect.runPromise(
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    const id = yield* workers.open({ command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] })
    for (let i = 0; i < 50; i++) yield* workers.callTool(id, "echo", { token: `h${i}` })
    // Past the owner's warm-cache write (2 s after it starts), so that the snapshot is of an owner at rest.
    yield* Effect.sleep("2500 millis")
    const { threadId } = yield* workers.status(id)
    const thread = threads.find((candidate) => candidate.threadId === threadId)
    if (thread === undefined) return yield* Effect.dieMessage(`no started thread has the id ${threadId}`)
    const stream = yield* Effect.promise(() => thread.getHeapSnapshot())
    yield* Effect.promise(
      () => new Promise<void>((resolve) => stream.pipe(fs.createWriteStream(out)).on("finish", () => resolve()))
    )
    const limits = thread.resourceLimits
    yield* workers.close(id)
    const { total, sums } = breakdown(JSON.parse(fs.readFileSync(out, "utf8")) as Snapshot)
    console.log(`owner thread heap snapshot: ${(total / MiB).toFixed(2)} MiB (${out})`)
    console.log(`resourceLimits: ${JSON.stringify(limits)}`)
    for (const [category, size] of sums) {
      if (size >= 0.01 * MiB) console.log(`${(size / MiB).toFixed(2).padStart(8)} MiB  ${category}`)
    }
  }).pipe(Effect.provide(NodeMcpWorkers.layer()))
)

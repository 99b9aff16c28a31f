// The host of `npm run walk`, bundled with its sources mapped: it opens the stateful fixture, runs each path's caller
// (scripts/walk/caller.mjs in a thread of its own or in a process), and takes the coverage of every thread on the
// path: its own, and each worker thread's (the owner's, the remote's) through the inspector's `NodeWorker` domain.
// It prints one JSON line: per path, the functions of each thread that ran on every call.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { spawn } from "node:child_process"
import * as inspector from "node:inspector/promises"
import { once } from "node:events"
import * as readline from "node:readline"
import { setTimeout as sleep } from "node:timers/promises"
import { Worker } from "node:worker_threads"
import { statefulConfig } from "../../test/fixtures/servers.ts"
import * as Coverage from "./coverage.mjs"

const { caller, socket, paths, warmup, calls, rounds, settleMs } = JSON.parse(process.argv[2])

const session = new inspector.Session()
session.connect()

const labelOf = (url) => (url.endsWith("/owner.cjs") ? "owner" : url === caller ? "caller" : url)

/** Each worker thread of this process, attached: its label and a `post` of inspector commands into it. */
const threads = new Map()
const pending = new Map()
let nextId = 1
const attach = ({ sessionId, workerInfo }) => {
  const post = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve, reject })
      const message = JSON.stringify({ id, method, params })
      session.post("NodeWorker.sendMessageToWorker", { sessionId, message }).catch(reject)
    })
  threads.set(sessionId, { label: labelOf(workerInfo.url), post, started: Coverage.start(post) })
}
session.on("NodeWorker.attachedToWorker", ({ params }) => attach(params))
session.on("NodeWorker.detachedFromWorker", ({ params }) => threads.delete(params.sessionId))
session.on("NodeWorker.receivedMessageFromWorker", ({ params }) => {
  const { id, result, error } = JSON.parse(params.message)
  const waiting = pending.get(id)
  if (waiting === undefined) return
  pending.delete(id)
  if (error === undefined) waiting.resolve(result)
  else waiting.reject(new Error(`${error.message} (${id})`))
})
const own = { label: "host", post: (method, params) => session.post(method, params) }
await Coverage.start(own.post)
await session.post("NodeWorker.enable", { waitForDebuggerOnStart: false })

/**
 * Every thread's snapshot at a phase's end (`reset`, `window`, `idle`): this one's (`host`), each worker's, and the
 * caller process's; after `idle`, by label, the functions that ran on every call.
 */
const makeSnapshots = (callerProcess) => {
  const windows = new Map()
  return async (phase) => {
    const found = {}
    const inProcess = [own, ...threads.values()]
    for (const thread of inProcess) {
      const taken = await Coverage.snapshot(thread.post)
      if (phase === "window") windows.set(thread, taken)
      if (phase === "idle") found[thread.label] = await Coverage.perCall(thread.post, windows.get(thread), taken, calls)
    }
    if (callerProcess !== undefined) found.caller = (await callerProcess.ask({ snapshot: phase })).found
    return found
  }
}

/** A caller in a thread: commands on its port. */
const threadCaller = (variant, id) => {
  const worker = new Worker(new URL(caller), { workerData: { variant, id, calls } })
  const answers = []
  worker.on("message", (answer) => answers.push(answer))
  const next = async () => answers.shift() ?? (await once(worker, "message"), answers.shift())
  return {
    ready: next(),
    ask: (command) => (worker.postMessage(command), next()),
    done: once(worker, "exit"),
    end: () => undefined
  }
}

/** A caller in a process: commands on its stdin, one JSON line each way. */
const processCaller = (variant, id) => {
  const child = spawn(
    process.execPath,
    [...process.execArgv, new URL(caller).pathname, JSON.stringify({ variant, socket, id, calls })],
    {
      stdio: ["pipe", "pipe", "inherit"]
    }
  )
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => JSON.parse((await lines.next()).value)
  return {
    ready: next(),
    ask: (command) => (child.stdin.write(JSON.stringify(command) + "\n"), next()),
    done: once(child, "exit"),
    end: () => child.stdin.end(),
    process: true
  }
}

const expect = (answer) => {
  if (answer.error !== undefined) throw new Error(`the caller failed: ${answer.tag ?? ""} ${answer.error}`)
  return answer
}

/**
 * One round: `warmup` calls, then the calls' window and an idle window of the same length, snapshots between. The
 * warm-up comes right before the window: a remote thread's call goes straight to the owner only while it heard from
 * the host lately (`staleAfterMs`, caller/internal/thread/protocol.ts), and an idle window is longer than that. The
 * calls' window ends `settleMs` after the last answer: work a call leaves for later (the owner's batch of counts) is
 * in it.
 */
const measure = async (peer) => {
  const snapshot = makeSnapshots(peer.process ? peer : undefined)
  expect(await peer.ask({ run: warmup }))
  await snapshot("reset")
  const started = performance.now()
  expect(await peer.ask({ run: calls }))
  await sleep(settleMs)
  const window = performance.now() - started
  await snapshot("window")
  await sleep(window)
  return await snapshot("idle")
}

// A timer slower than a round (the host's sample of the server trees) can fall in one round's calls' window and
// miss its idle one; it cannot do so in every round.
const everyRound = ([first, ...rest]) =>
  Object.fromEntries(
    Object.entries(first).map(([label, functions]) => [
      label,
      functions.filter((fn) =>
        rest.every((round) => round[label]?.some((other) => other.url === fn.url && other.offset === fn.offset))
      )
    ])
  )

/** One path: warm up, then `rounds` rounds; the functions that ran on every call in each. */
const walk = async ({ plane, variant }, target) => {
  const peer = plane === "thread" ? threadCaller(variant, target.id) : processCaller(variant, target.grant)
  try {
    expect(await peer.ready)
    await Promise.all([...threads.values()].map((thread) => thread.started))
    const found = []
    for (let round = 0; round < rounds; round++) found.push(await measure(peer))
    return everyRound(found)
  } finally {
    await peer.ask({ exit: true }).catch(() => undefined)
    peer.end()
    await peer.done
  }
}

const runtime = ManagedRuntime.make(
  Layer.merge(NodeMcpWorkers.layerListen({ path: socket }), Logger.minimumLogLevel(LogLevel.Warning))
)
try {
  const target = await runtime.runPromise(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const grant = yield* (yield* McpGrants.McpGrants).grant(id)
      return { id, grant }
    })
  )
  const results = {}
  for (const path of paths) results[path.name] = await walk(path, target)
  process.stdout.write(JSON.stringify(results) + "\n")
} finally {
  await runtime.dispose()
  await session.post("NodeWorker.disable").catch(() => undefined)
  session.disconnect()
}

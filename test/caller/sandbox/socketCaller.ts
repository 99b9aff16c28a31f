// A sandbox program of the socket plane, run under Node, Deno and Bun: `<runtime> socketCaller.mjs <socket path>`.
// It knows only the socket path and reads one command a line on stdin, answering each with one JSON line on stdout.
import * as readline from "node:readline"
import * as Socket from "../../../packages/caller/src/internal/socket/index.js"

interface Command {
  readonly n: number
  readonly op: "request" | "status" | "cancel" | "close" | "subscribe" | "take" | "exit"
  readonly workerId?: string
  readonly method?: string
  readonly params?: unknown
  readonly budgetMs?: number
  readonly progress?: boolean
  readonly abortAfterMs?: number
  readonly requestId?: string
  readonly take?: number
}

const plane = Socket.make({ path: process.argv[2]! })
let subscription: AsyncIterableIterator<unknown> | undefined
const out = (line: object) => process.stdout.write(JSON.stringify(line) + "\n")

const errorOf = (error: any) => ({
  _tag: error?._tag,
  name: error?.name,
  delivery: error?.delivery,
  reason: error?.reason,
  message: String(error?.message ?? error)
})

const run = async (command: Command): Promise<object> => {
  switch (command.op) {
    case "request": {
      const progress: Array<unknown> = []
      const controller = new AbortController()
      if (command.abortAfterMs !== undefined)
        setTimeout(() => controller.abort(new Error("aborted by the sandbox")), command.abortAfterMs)
      const value = await plane.request({
        workerId: command.workerId!,
        method: command.method!,
        params: JSON.stringify(command.params ?? {}),
        budgetMs: command.budgetMs,
        onProgress: command.progress === true ? (p) => void progress.push(p) : undefined,
        signal: controller.signal
      })
      return { value, progress }
    }
    case "status":
      return { value: await plane.status(command.workerId!) }
    case "cancel":
      return { value: await plane.cancel(command.workerId!, command.requestId!) }
    case "close":
      return { value: await plane.close(command.workerId!, command.budgetMs) }
    case "subscribe":
      subscription = plane.events(command.workerId!, 16)
      return {}
    case "take": {
      const items: Array<unknown> = []
      while (items.length < (command.take ?? 1)) {
        const next = await subscription!.next()
        if (next.done === true) break
        items.push(next.value)
      }
      await subscription!.return!()
      return { value: items }
    }
    case "exit":
      await plane.dispose()
      return process.exit(0)
  }
}

out({ n: 0, ok: true, runtime: "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node" })
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const command = JSON.parse(line) as Command
  run(command).then(
    (result) => out({ n: command.n, ok: true, ...result }),
    (error) => out({ n: command.n, ok: false, error: errorOf(error) })
  )
})

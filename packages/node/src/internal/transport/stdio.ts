// The SDK's stdio transport signals the direct child only; `close` must end and confirm the tree.
import * as Owner from "@mcp-worker/core/protocol/Owner"
import { OpenFailed } from "@mcp-worker/core/McpWorkerError"
import * as Redact from "@mcp-worker/core/Redact"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import { type JSONRPCMessage, serializeMessage, type Transport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import type { ChildProcess as NodeChildProcess } from "node:child_process"
import type * as ProcessJobFace from "../../ProcessJob.js"
import * as ProcessJob from "../job/processJob.js"
import * as ProcessStart from "../job/start.js"
import * as Lines from "../wire/lines.js"
import { ResponseScanner } from "./responseScanner.js"
import { previewBytes, ResponseSave } from "./responseSave.js"
import { ResponseSpill } from "./responseSpill.js"

const spoolKeepBytes = 1024 * 1024

/** A line past the limit while a spill was armed. */
interface Spool {
  readonly save: ResponseSave
  readonly spill?: ResponseSpill | undefined
  readonly scanner: ResponseScanner
  bytes: number
}

/** Else the client refuses a 2026-07-28 result. */
const minimalResult = (scanner: ResponseScanner) =>
  scanner.resultTypeText === undefined ? { content: [] } : { content: [], resultType: "complete" }

class TransportClosed extends Error {}

class ProcessTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined
  private readonly lines: Lines.LineSplitter<string>
  private closed = false
  private tracked: string | number | undefined
  private answered: { readonly id: string | number; readonly line: string; readonly result: unknown } | undefined
  private save: ResponseSave | undefined
  private spill: ResponseSpill | undefined
  /** C95 */
  private own: { readonly request: Owner.OwnRequest } | undefined

  constructor(
    private readonly job: ProcessJobFace.ProcessJob,
    private readonly maxLineBytes: number,
    private readonly ownLineBytes: number
  ) {
    this.lines = Lines.make({
      decode: Lines.text,
      maxLineBytes,
      dropCarriageReturn: true,
      onLine: (line) => this.onLine(line),
      onOverflow: (held, bytes) => this.overLimit(held, bytes),
      // While a save is pending every line goes to the file.
      onLineStart: () =>
        this.save?.live === true ? this.spoolInto(this.startSpool(this.save), spoolKeepBytes) : undefined
    })
  }

  /** C90 */
  get pid(): number {
    return this.job.pid
  }

  // C98: the face's `ChildProcess` names no Node type; a job's child is Node's.
  private get child(): NodeChildProcess {
    return this.job.child as NodeChildProcess
  }

  get stderr(): NodeJS.ReadableStream | null {
    return this.child.stderr
  }

  takeResponse(): { readonly line: string; readonly result: unknown } | undefined {
    const answered = this.answered
    this.answered = undefined
    return answered !== undefined && answered.id === this.tracked ? answered : undefined
  }

  saveResponse(target: string): Either.Either<ResponseSave, string> {
    this.save?.discard()
    const opened = ResponseSave.open(target)
    this.save = Either.getOrUndefined(opened)
    return opened
  }

  /** C95 */
  ownRequest(request: Owner.OwnRequest): () => void {
    const own = { request }
    this.own = own
    return () => {
      if (this.own === own) this.own = undefined
    }
  }

  spillResponse(directory: string, name: string): ResponseSpill {
    this.spill?.discard()
    this.spill = ResponseSpill.make(directory, name)
    return this.spill
  }

  start(): Promise<void> {
    const child = this.child
    child.stdout!.on("data", (chunk: Buffer) => this.lines.push(chunk))
    child.stdout!.on("error", (error) => this.onerror?.(error))
    child.stdin!.on("error", (error) => this.onerror?.(error))
    // Bounded (a grandchild may hold stderr), so an exit during initialize reports its last words.
    child.once("exit", () => {
      const stderr = child.stderr
      if (stderr === null || stderr.readableEnded || stderr.destroyed) return this.markClosed()
      const timer = setTimeout(() => this.markClosed(), 100)
      stderr.once("end", () => {
        clearTimeout(timer)
        this.markClosed()
      })
    })
    return Promise.resolve()
  }

  private overLimit(held: ReadonlyArray<Buffer>, bytes: number): Lines.Overflow<string> {
    const own = this.own
    if (own !== undefined) {
      // C95
      if (bytes <= this.ownLineBytes) return this.ownLineBytes
      return void this.onerror?.(new Owner.OversizedMessage(bytes, this.ownLineBytes, undefined, own.request))
    }
    const spill = this.spill
    const started = spill?.live === true ? spill.start(held) : undefined
    if (started !== undefined && Either.isRight(started)) return this.spoolInto({ ...started.right, spill, bytes })
    this.oversized(bytes, started?.left)
    return undefined
  }

  private startSpool(save: ResponseSave): Spool {
    save.reset()
    const scanner = new ResponseScanner((bytes) => save.write(bytes), previewBytes)
    return { save, scanner, bytes: 0 }
  }

  private spoolInto(spool: Spool, keepBytes?: number): Lines.Sink<string> {
    return {
      keepBytes,
      write: (chunk, from, to) => {
        spool.bytes += to - from
        spool.scanner.feed(chunk, from, to)
      },
      end: (line) => this.endSpool(spool, line)
    }
  }

  private endSpool(spool: Spool, line: string | undefined) {
    if (spool.spill !== undefined) return this.endSpill(spool, spool.spill)
    const { save, scanner } = spool
    scanner.end()
    const id = save.id
    const mine = id !== undefined && scanner.id === JSON.stringify(id)
    // A multi-round-trip round is not the result: the save waits for the retry.
    const complete = scanner.resultTypeText === undefined || scanner.resultTypeText === '"complete"'
    if (mine && save.live && !complete) save.id = undefined
    if (mine && save.live && complete && scanner.resultComplete && !scanner.hasError) {
      if (this.save === save) this.save = undefined
      const committed = save.commit(scanner)
      return this.onmessage?.(
        Either.isRight(committed)
          ? { jsonrpc: "2.0", id, result: minimalResult(scanner) }
          : { jsonrpc: "2.0", id, error: { code: -32603, message: committed.left } }
      )
    }
    save.reset()
    if (line !== undefined) return this.onLine(line)
    // The request's own answer fails it; anything else is skipped as oversized.
    if (mine && save.live) {
      const message = complete
        ? `the server's ${spool.bytes}-byte answer has no result to save`
        : `the server's ${spool.bytes}-byte input_required answer is too long to read`
      return this.onmessage?.({ jsonrpc: "2.0", id, error: { code: -32603, message } })
    }
    if (!mine)
      this.onerror?.(new Error(`a ${spool.bytes}-byte message arrived during a saveTo request and was skipped`))
  }

  private endSpill(spool: Spool, spill: ResponseSpill) {
    const { scanner } = spool
    scanner.end()
    const id = this.tracked
    const mine = id !== undefined && scanner.id === JSON.stringify(id)
    const complete = scanner.resultTypeText === undefined || scanner.resultTypeText === '"complete"'
    if (!spill.live) return spool.save.discard()
    if (mine && complete && scanner.resultComplete && !scanner.hasError) {
      const committed = spill.commit(scanner)
      if (Either.isRight(committed)) return this.onmessage?.({ jsonrpc: "2.0", id, result: minimalResult(scanner) })
      return this.oversized(spool.bytes, committed.left)
    }
    spool.save.discard()
    this.oversized(spool.bytes)
  }

  /** The caller need not wait for what it cannot get. */
  private oversized(bytes: number, spillFailed?: string) {
    this.onerror?.(new Owner.OversizedMessage(bytes, this.maxLineBytes, spillFailed))
  }

  /** The client's dispatch checks the schemas; twice would be hot. */
  private onLine(line: string) {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch (error) {
      // As the SDK's own transport does.
      this.onerror?.(error as Error)
      return
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      this.onerror?.(new Error("a line of the server's stdout is JSON but not a JSON-RPC message"))
      return
    }
    if ("result" in message && "id" in message && message.id === this.tracked) {
      this.answered = { id: message.id as string | number, line, result: message.result }
    }
    this.onmessage?.(message as JSONRPCMessage)
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child.stdin
      if (this.closed || stdin === null || stdin.destroyed) {
        return reject(new TransportClosed("the server's stdin is closed"))
      }
      // Not a caller's request.
      if (
        "method" in message &&
        "id" in message &&
        message.method !== "initialize" &&
        message.method !== "subscriptions/listen"
      ) {
        this.tracked = message.id
        this.answered = undefined
        if (this.save !== undefined && this.save.id === undefined) this.save.id = message.id
      }
      if (stdin.write(serializeMessage(message))) return resolve()
      const settle = (error?: Error) => {
        stdin.off("drain", onDrain)
        stdin.off("close", onClose)
        if (error === undefined) resolve()
        else reject(error)
      }
      const onDrain = () => settle()
      const onClose = () => settle(new TransportClosed("the server's stdin closed"))
      stdin.once("drain", onDrain)
      stdin.once("close", onClose)
    })
  }

  close(): Promise<void> {
    this.markClosed()
    return Promise.resolve()
  }

  private markClosed() {
    if (this.closed) return
    this.closed = true
    this.lines.clear()
    this.save?.discard()
    this.save = undefined
    this.spill?.discard()
    this.spill = undefined
    this.onclose?.()
  }
}

/** @internal */
export const make = (
  config: ServerConfig.StdioConfig,
  context: Parameters<Owner.TransportFactory>[1],
  early?: ProcessStart.StartedProcess
): Effect.Effect<Owner.OwnerTransport, OpenFailed> =>
  Effect.gen(function* () {
    const env = ProcessStart.defaultEnvironment()
    const secrets: Array<string> = []
    for (const [key, value] of Object.entries(config.env)) {
      env[key] = Redacted.value(value)
      secrets.push(env[key]!)
    }
    secrets.push(...ProcessStart.networkSecrets(env))
    const started =
      early ??
      ProcessStart.start({ command: config.command, args: config.args, env, cwd: config.cwd, marker: context.marker })
    const job = yield* ProcessJob.adopt(started, context.marker).pipe(
      Effect.mapError(
        (error) =>
          new OpenFailed({ stage: "spawn", message: Redact.redact(error.message, secrets), delivery: "not_sent" })
      )
    )
    context.onSpawned(job.pid)

    const stderrEnded = Effect.promise(() => started.stderrEnded)

    const maxResultBytes = ServerConfig.maxResultBytesOf(config)
    const transport = new ProcessTransport(job, maxResultBytes, ServerConfig.ownRequestBytesOf(config))
    return {
      transport,
      pid: job.pid,
      takeResponse: () => transport.takeResponse(),
      saveResponse: (target) =>
        Either.map(transport.saveResponse(target), (save) => ({
          summary: () => save.summary,
          discard: () => save.discard()
        })),
      spillResponse: (directory, name) => {
        const spill = transport.spillResponse(directory, name)
        return { limit: maxResultBytes, summary: () => spill.summary, discard: () => spill.discard() }
      },
      ownRequest: (request) => transport.ownRequest(request),
      secrets: () => secrets,
      classify: (error) => (error instanceof TransportClosed ? "transport" : undefined),
      stop: (budgetMs) =>
        job.stop({ budgetMs }).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              job.child.stdout?.destroy()
              job.child.stderr?.destroy()
              job.child.stdin?.destroy()
            })
          )
        ),
      exitInfo: (waitMs) =>
        // C28
        Effect.all([job.exited, stderrEnded], { concurrency: "unbounded", discard: true }).pipe(
          Effect.timeoutOption(waitMs),
          Effect.map(() => {
            // A server that died at once may have exited before this transport existed.
            const { exitCode, signalCode } = job.child
            const tail = Redact.redactTail(started.stderr().toString("utf8"), secrets, 2048)
            return {
              ...(exitCode !== null ? { exitCode } : {}),
              ...(signalCode !== null ? { signal: signalCode } : {}),
              ...(tail.length > 0 ? { stderrTail: tail } : {})
            }
          })
        )
    }
  })

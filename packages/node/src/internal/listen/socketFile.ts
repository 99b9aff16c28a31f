/**
 * Node cannot read `SO_PEERCRED` without native code, so who may connect is who may enter the directory (mode 0700).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

/**
 * The listener could not start: its path, its directory, or another host already listening there.
 *
 * @since 0.1.0
 * @category errors
 */
export class ListenError extends Schema.TaggedError<ListenError>("@mcp-worker/node/ListenError")("ListenError", {
  path: Schema.String,
  reason: Schema.Literal("path", "directory", "in_use", "listen"),
  detail: Schema.String
}) {
  override get message(): string {
    return `cannot listen on ${this.path}: ${this.detail}`
  }
}

/** @internal */
export interface Prepared {
  readonly path: string
  readonly createdDirectory: boolean
}

const fail = (socketPath: string, reason: ListenError["reason"], detail: string) =>
  Effect.fail(new ListenError({ path: socketPath, reason, detail }))

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | null)?.code

const probe = (socketPath: string): Effect.Effect<"live" | "stale"> =>
  Effect.async<"live" | "stale">((resume) => {
    const socket = net.createConnection({ path: socketPath })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed("live"))
    })
    socket.once("error", () => resume(Effect.succeed("stale")))
    return Effect.sync(() => socket.destroy())
  })

const directory = (socketPath: string, dir: string): Effect.Effect<boolean, ListenError> =>
  Effect.gen(function* () {
    let created = false
    if (!fs.existsSync(dir)) {
      yield* Effect.try({
        try: () => fs.mkdirSync(dir, { recursive: true, mode: 0o700 }),
        catch: (error) => new ListenError({ path: socketPath, reason: "directory", detail: `mkdir: ${errnoOf(error)}` })
      })
      created = true
    }
    const stat = fs.statSync(dir)
    if (!stat.isDirectory()) return yield* fail(socketPath, "directory", `${dir} is not a directory`)
    if (process.getuid !== undefined && stat.uid !== process.getuid()) {
      return yield* fail(socketPath, "directory", `${dir} belongs to another user`)
    }
    if ((stat.mode & 0o077) !== 0) {
      return yield* fail(
        socketPath,
        "directory",
        `${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); it must be 0700`
      )
    }
    return created
  })

/** Removes a stale socket file; fails on a live one. @internal */
export const prepare = (socketPath: string): Effect.Effect<Prepared, ListenError> =>
  Effect.gen(function* () {
    if (process.platform === "win32") return yield* fail(socketPath, "path", "Unix domain sockets only")
    if (typeof socketPath !== "string" || !path.isAbsolute(socketPath)) {
      return yield* fail(String(socketPath), "path", "the path must be absolute")
    }
    // sun_path: 108 bytes on Linux, 104 on macOS, NUL included.
    if (Buffer.byteLength(socketPath) > 103) return yield* fail(socketPath, "path", "the path is longer than 103 bytes")
    const createdDirectory = yield* directory(socketPath, path.dirname(socketPath))
    const existing = fs.lstatSync(socketPath, { throwIfNoEntry: false })
    if (existing !== undefined) {
      if (!existing.isSocket()) return yield* fail(socketPath, "path", "a file that is not a socket is in the way")
      if ((yield* probe(socketPath)) === "live") {
        return yield* fail(socketPath, "in_use", "another mcp-worker host is listening there")
      }
      yield* Effect.sync(() => fs.rmSync(socketPath, { force: true }))
    }
    return { path: socketPath, createdDirectory }
  })

/** @internal */
export const restrict = (prepared: Prepared): Effect.Effect<void, ListenError> =>
  Effect.try({
    try: () => fs.chmodSync(prepared.path, 0o600),
    catch: (error) => new ListenError({ path: prepared.path, reason: "listen", detail: `chmod: ${errnoOf(error)}` })
  })

/** And the directory, if the listener made it and it is empty. @internal */
export const remove = (prepared: Prepared): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* Effect.sync(() => fs.rmSync(prepared.path, { force: true }))
    if (prepared.createdDirectory) yield* Effect.ignore(Effect.try(() => fs.rmdirSync(path.dirname(prepared.path))))
  })

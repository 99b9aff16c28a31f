/**
 * `saveTo` on the owner's side: the file a result goes to. The result is written to a temporary file next to the
 * target as it arrives, hashed on the way, and renamed into place only once it is whole, so that the target is
 * either untouched or complete; a save that is given up removes its temporary file. A spill (`onTooLarge`) writes the
 * same way to a new file: made 0600, and linked into place only if nothing has that name yet.
 *
 * Node built-ins only, synchronous: writing as the bytes are read keeps nothing in memory (the pipe is not read
 * while a piece is written), and a rename or unlink is one call.
 *
 * @internal
 */
import type * as Operations from "@mcp-worker/core/Operations"
import * as Either from "effect/Either"
import { createHash, type Hash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { decodeStringStart, type ResponseScanner } from "./responseScanner.js"

/** How much of the first text the summary previews, in UTF-16 code units. */
export const previewUnits = 1024

/** The raw bytes kept of the first text: enough for `previewUnits` units written as `\uXXXX` escapes. */
export const previewBytes = previewUnits * 6 + 2

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export { checkSavePath, checkSpillDirectory } from "./resultPaths.js"

// A new file goes into place by a hard link, which fails if the name exists; a file system without links gets a
// rename, once no file has the name.
const placeNew = (temp: string, target: string): void => {
  try {
    fs.linkSync(temp, target)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === "EEXIST" || fs.existsSync(target)) throw new Error(`a file named ${target} exists already`)
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error
    fs.renameSync(temp, target)
    return
  }
  try {
    fs.unlinkSync(temp)
  } catch {
    // the result is in place under its name; only the second name of it is left
  }
}

/**
 * One pending save: its temporary file, open, and the hash of what was written to it.
 *
 * @internal
 */
export class ResponseSave {
  /** The JSON-RPC id of the request whose result this is, once the request was sent. */
  id: string | number | undefined
  /** Neither committed nor discarded. */
  live = true
  summary: Operations.SavedResult | undefined
  private hash: Hash = createHash("sha256")
  private bytes = 0
  private failure: string | undefined

  private constructor(
    readonly target: string,
    readonly temp: string,
    private fd: number,
    /** A new file (a spill): the target must not exist, and nobody else may read it. */
    private readonly exclusive: boolean
  ) {}

  /** Creates the temporary file next to `target`; `exclusive`: for a new file, readable by this user alone. */
  static open(target: string, exclusive = false): Either.Either<ResponseSave, string> {
    const temp = path.join(
      path.dirname(target),
      `.${path.basename(target)}.${process.pid}-${randomBytes(6).toString("hex")}.part`
    )
    try {
      return Either.right(new ResponseSave(target, temp, fs.openSync(temp, "wx", exclusive ? 0o600 : 0o666), exclusive))
    } catch (error) {
      return Either.left(`could not create a file next to ${exclusive ? "the spill" : "saveTo"}: ${errorText(error)}`)
    }
  }

  /** Appends the next bytes of the result. A write that fails ends the save; the failure is reported at commit. */
  write(bytes: Buffer): void {
    if (!this.live || this.failure !== undefined) return
    try {
      let done = 0
      while (done < bytes.length) {
        done += fs.writeSync(this.fd, bytes, done, bytes.length - done, this.bytes + done)
      }
      this.hash.update(bytes)
      this.bytes += bytes.length
    } catch (error) {
      this.failure = `could not write the result to ${this.target}: ${errorText(error)}`
    }
  }

  /** What was written belongs to another message: start over. */
  reset(): void {
    if (!this.live || this.bytes === 0) return
    this.hash = createHash("sha256")
    this.bytes = 0
    try {
      fs.ftruncateSync(this.fd)
    } catch (error) {
      this.failure = `could not write the result to ${this.target}: ${errorText(error)}`
    }
  }

  /** The result ended: the file is renamed into place and summed up, or the failure is returned. */
  commit(scanner: ResponseScanner): Either.Either<Operations.SavedResult, string> {
    if (!this.live) return Either.left("the save was given up")
    if (this.failure !== undefined) {
      const failure = this.failure
      this.discard()
      return Either.left(failure)
    }
    try {
      fs.closeSync(this.fd)
      this.fd = -1
      if (this.exclusive) placeNew(this.temp, this.target)
      else fs.renameSync(this.temp, this.target)
    } catch (error) {
      this.discard()
      return Either.left(`could not move the result into place at ${this.target}: ${errorText(error)}`)
    }
    this.live = false
    this.summary = {
      path: this.target,
      bytes: this.bytes,
      sha256: this.hash.digest("hex"),
      isError: scanner.isErrorText === "true",
      preview: scanner.textRaw === undefined ? null : decodeStringStart(scanner.textRaw, previewUnits)
    }
    return Either.right(this.summary)
  }

  /** Gives up the save: its temporary file is removed. Harmless after a commit or a discard. */
  discard(): void {
    if (!this.live) return
    this.live = false
    try {
      if (this.fd !== -1) fs.closeSync(this.fd)
    } catch {
      // already closed
    }
    this.fd = -1
    try {
      fs.unlinkSync(this.temp)
    } catch {
      // already gone
    }
  }
}

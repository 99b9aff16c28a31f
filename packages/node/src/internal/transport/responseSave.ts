// Renamed into place once whole: the target is untouched or complete. Synchronous, so nothing piles up.
import type * as Operations from "@mcp-worker/core/Operations"
import * as Either from "effect/Either"
import { createHash, type Hash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { decodeStringStart, type ResponseScanner } from "./responseScanner.js"

/** UTF-16 code units. */
export const previewUnits = 1024

/** `previewUnits` units as `\uXXXX` escapes. */
export const previewBytes = previewUnits * 6 + 2

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export { checkSavePath, checkSpillDirectory } from "./resultPaths.js"

// A link refuses an existing name; without links, a rename.
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
    // only the temp name is left
  }
}

/** @internal */
export class ResponseSave {
  id: string | number | undefined
  live = true
  summary: Operations.SavedResult | undefined
  private hash: Hash = createHash("sha256")
  private bytes = 0
  private failure: string | undefined

  private constructor(
    readonly target: string,
    readonly temp: string,
    private fd: number,
    /** Readable by this user alone. */
    private readonly exclusive: boolean
  ) {}

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

  /** Reported at commit. */
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

  /** What was written belongs to another message. */
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

  /** Harmless after a commit or a discard. */
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

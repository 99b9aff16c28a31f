/**
 * A spill (`onTooLarge`) on the owner's side: the response to the request in flight is read as usual while it stays
 * within `maxResultBytes`; once a line passes the limit, its file is made, what arrived of the line so far goes
 * through the response scanner into it, and the rest of the line streams there as it arrives, exactly as a `saveTo`
 * does. Nothing is written for a result within the limit.
 *
 * @internal
 */
import type * as Operations from "@mcp-worker/core/Operations"
import * as Either from "effect/Either"
import * as path from "node:path"
import { ResponseScanner } from "./responseScanner.js"
import { previewBytes, ResponseSave } from "./responseSave.js"

/**
 * One armed spill: where its file would go, and its file once a line passed the limit.
 *
 * @internal
 */
export class ResponseSpill {
  /** Neither given up by the owner nor closed with the transport. */
  live = true
  summary: Operations.SavedResult | undefined
  private save: ResponseSave | undefined

  constructor(readonly target: string) {}

  static make(directory: string, name: string): ResponseSpill {
    return new ResponseSpill(path.join(directory, name))
  }

  /**
   * A line passed the limit: its file is made (a new one, 0600), and the pieces that arrived of the line so far are
   * scanned into it. `Left` is why the file could not be made; the line is then skipped as any oversized one.
   */
  start(pieces: ReadonlyArray<Buffer>): Either.Either<{ save: ResponseSave; scanner: ResponseScanner }, string> {
    this.save?.discard()
    const opened = ResponseSave.open(this.target, true)
    if (Either.isLeft(opened)) return Either.left(opened.left)
    const save = opened.right
    this.save = save
    const scanner = new ResponseScanner((bytes) => save.write(bytes), previewBytes)
    for (const piece of pieces) scanner.feed(piece, 0, piece.length)
    return Either.right({ save, scanner })
  }

  /** The line ended as this request's result: its file is moved into place and summed up, or why not. */
  commit(scanner: ResponseScanner): Either.Either<Operations.SavedResult, string> {
    if (this.save === undefined) return Either.left("the spill was never started")
    const committed = this.save.commit(scanner)
    if (Either.isRight(committed)) this.summary = committed.right
    this.live = false
    return committed
  }

  /** Gives the spill up: a file not yet in place is removed; one in place is the caller's, and stays. */
  discard(): void {
    this.live = false
    this.save?.discard()
  }
}

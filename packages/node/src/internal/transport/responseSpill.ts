// Past `maxResultBytes` the line streams to a file as a `saveTo` does.
import type * as Operations from "@mcp-worker/core/Operations"
import * as Either from "effect/Either"
import * as path from "node:path"
import { ResponseScanner } from "./responseScanner.js"
import { previewBytes, ResponseSave } from "./responseSave.js"

/** @internal */
export class ResponseSpill {
  live = true
  summary: Operations.SavedResult | undefined
  private save: ResponseSave | undefined

  constructor(readonly target: string) {}

  static make(directory: string, name: string): ResponseSpill {
    return new ResponseSpill(path.join(directory, name))
  }

  /** `Left`: skipped as any oversized line. */
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

  commit(scanner: ResponseScanner): Either.Either<Operations.SavedResult, string> {
    if (this.save === undefined) return Either.left("the spill was never started")
    const committed = this.save.commit(scanner)
    if (Either.isRight(committed)) this.summary = committed.right
    this.live = false
    return committed
  }

  /** A file already in place is the caller's, and stays. */
  discard(): void {
    this.live = false
    this.save?.discard()
  }
}

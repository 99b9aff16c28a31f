/**
 * The owner's part in a spill (`onTooLarge`): which calls spill and where — a `callTool` without `saveTo`, into its
 * own directory, else its worker's — the file's name, and the answer once the transport wrote a result there.
 */
import * as Either from "effect/Either"
import { InvalidInput } from "../../McpWorkerError.js"
import type * as Owner from "../../Owner.js"
import * as ResultFile from "../../ResultFile.js"
import type { Connection } from "./state.js"

/** What the owner needs of a request to arm its spill. @internal */
export interface SpillRequest {
  readonly requestId: string
  readonly method: string
  readonly saveTo?: string | undefined
  readonly spill?: string | false | undefined
}

/**
 * Arms the spill of a request that has one, before it is sent; `undefined` when it has none. A transport that cannot
 * spill (HTTP) refuses the request unsent.
 *
 * @internal
 */
export const startSpill = (
  connection: Connection,
  request: SpillRequest,
  params: Record<string, unknown>
): Either.Either<Owner.ResponseSpill, InvalidInput> | undefined => {
  if (request.method !== "tools/call" || request.saveTo !== undefined || request.spill === false) return undefined
  const directory = request.spill ?? connection.spill
  if (directory === undefined) return undefined
  const { spillResponse } = connection.transport
  if (spillResponse === undefined) {
    const message = "spill is for stdio servers"
    return Either.left(
      new InvalidInput({ where: "arguments", path: "options.onTooLarge.spill", message, delivery: "not_sent" })
    )
  }
  return Either.right(spillResponse(directory, ResultFile.fileName(params.name, request.requestId)))
}

/**
 * The answer of a request whose result was spilled, in its wire form (`ResultFile.answerOf` reads it in the caller's
 * thread), or `undefined` when it was not (its result arrived as usual). The spill is disarmed either way.
 *
 * @internal
 */
export const spilledAnswer = (spill: Owner.ResponseSpill): ReadonlyArray<unknown> | undefined => {
  const summary = spill.summary()
  spill.discard()
  return summary === undefined ? undefined : ResultFile.encodeSpilled(summary, spill.limit)
}

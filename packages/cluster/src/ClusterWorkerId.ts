/**
 * The id of a worker on a cluster: the owning runner's worker id and the shard group of the runner process that
 * opened it, `mcpw_<22>.<group>`. The group is new at every start of a runner process, so an id can only ever
 * reach the process that opened its worker: once that process is gone, no other runner (nor the same address
 * started again) serves the group, and the id is gone with its worker.
 *
 * @since 0.1.0
 */
import * as WorkerId from "@mcp-worker/core/WorkerId"
import * as Option from "effect/Option"

/**
 * A worker id that names its runner's shard group.
 *
 * @since 0.1.0
 * @category models
 */
export type ClusterWorkerId = WorkerId.WorkerId

/**
 * A cluster worker id taken apart: the id of the worker in its runner's own registry, and that runner's group.
 *
 * @since 0.1.0
 * @category models
 */
export interface Parts {
  readonly local: WorkerId.WorkerId
  readonly group: string
}

/**
 * The prefix of every runner group: `mcpw-` and 16 lowercase hex digits (64 random bits).
 *
 * @since 0.1.0
 * @category constants
 */
export const groupPrefix = "mcpw-"

const groupPattern = /^mcpw-[0-9a-f]{16}$/

/**
 * A fresh shard group for one start of a runner process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeGroup = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8))
  let hex = ""
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0")
  return groupPrefix + hex
}

/**
 * Whether a string is a runner group as `makeGroup` makes them.
 *
 * @since 0.1.0
 * @category guards
 */
export const isGroup = (u: unknown): u is string => typeof u === "string" && groupPattern.test(u)

/**
 * The cluster id of a worker opened in the runner whose group is `group`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (local: WorkerId.WorkerId, group: string): ClusterWorkerId => `${local}.${group}` as ClusterWorkerId

/**
 * Takes a cluster worker id apart; `None` for anything else (a plain worker id included).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (input: unknown): Option.Option<Parts> => {
  if (typeof input !== "string") return Option.none()
  const dot = input.lastIndexOf(".")
  if (dot < 0) return Option.none()
  const local = input.slice(0, dot)
  const group = input.slice(dot + 1)
  return WorkerId.isWorkerId(local) && groupPattern.test(group) ? Option.some({ local, group }) : Option.none()
}

/**
 * The runner group an entity id names, for the entity's `ShardGroup` annotation. An id that names none maps to a
 * group no runner serves, so a message to it is never delivered anywhere.
 *
 * @since 0.1.0
 * @category parsing
 */
export const groupOf = (input: string): string => {
  const parts = parse(input)
  return Option.isSome(parts) ? parts.value.group : `${groupPrefix}none`
}

/**
 * Every server of a config document at once, as thin functions over a surface's own `open` and `close`.
 *
 * `openAll` opens each entry concurrently and answers per entry: its id, or why it did not open. An entry that
 * fails leaves nothing behind (an `OpenFailed` means no thread and no process of the attempt is left), and it never
 * fails the others or the whole. References are filled in per entry just before its `open`, in the caller's thread,
 * so a missing variable is that entry's `InvalidInput` (its path pointing into the file) and nothing else's. If
 * `openAll` itself is interrupted, the entries it already opened are closed: it never hands back half a document.
 *
 * `closeAll` closes every opened id, each with its own confirmed cleanup, and answers per entry as well.
 *
 * @since 0.1.0
 */
import type * as CallerOptions from "@mcp-worker/caller/Options"
import type * as CallerSurface from "@mcp-worker/caller/Surface"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as McpConfig from "./McpConfig.js"
import type { InvalidInput } from "../McpWorkerError.js"
import type { ServerConfigInput } from "../ServerConfig.js"
import type { WorkerId } from "../WorkerId.js"
import type { WorkerStatus } from "../WorkerStatus.js"

/**
 * An entry that opened: its worker id.
 *
 * @since 0.1.0
 * @category models
 */
export type Opened = CallerSurface.Opened<WorkerId>

/**
 * An entry that did not open, and why: the surface's `open` failure, or an `InvalidInput` for the entry itself (a
 * reference that cannot be filled in, a value `open` refuses), its path pointing into the file.
 *
 * @since 0.1.0
 * @category models
 */
export type NotOpened<E> = CallerSurface.NotOpened<E | InvalidInput>

/**
 * What became of one entry.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenResult<E> = Opened | NotOpened<E>

/**
 * What `openAll` answers: every entry of the document, by name.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenAllResult<E> = Readonly<Record<string, OpenResult<E>>>

/**
 * An entry whose worker closed, with its final status (`cleanup.activeProcesses === 0`).
 *
 * @since 0.1.0
 * @category models
 */
export type Closed = CallerSurface.Closed<WorkerStatus>

/**
 * An entry whose close failed (the id is kept by the surface, so `close` can be tried again).
 *
 * @since 0.1.0
 * @category models
 */
export type NotClosed<E> = CallerSurface.NotClosed<WorkerId, E>

/**
 * What became of one worker in `closeAll`.
 *
 * @since 0.1.0
 * @category models
 */
export type CloseResult<E> = Closed | NotClosed<E>

/**
 * The two operations `openAll` and `closeAll` are made of, as every surface has them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Surface<OpenOptions, OpenError, CloseOptions, CloseError> {
  readonly open: (config: ServerConfigInput, options?: OpenOptions) => Effect.Effect<WorkerId, OpenError>
  readonly close: (id: string, options?: CloseOptions) => Effect.Effect<WorkerStatus, CloseError>
}

/**
 * Options of `openAll`: what references are filled in from, and the options of each `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAllOptions<OpenOptions> extends McpConfig.ResolveOptions, CallerOptions.OpenAll<OpenOptions> {}

/**
 * Opens every entry of a document concurrently; never fails: each entry's result says whether it opened.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openAll = <OpenOptions extends object, OpenError, CloseOptions, CloseError>(
  surface: Surface<OpenOptions, OpenError, CloseOptions, CloseError>,
  document: McpConfig.Document,
  options?: OpenAllOptions<OpenOptions>
): Effect.Effect<OpenAllResult<OpenError>> => {
  const names = Object.keys(document.servers)
  const opened = new Map<string, WorkerId>()
  const openOne = (name: string): Effect.Effect<readonly [string, OpenResult<OpenError>]> => {
    const path = McpConfig.pathOf(document, name)
    const config = McpConfig.resolve(document, name, options)
    if (Either.isLeft(config)) return Effect.succeed([name, { _tag: "Failed", error: config.left }] as const)
    return Effect.uninterruptibleMask((restore) =>
      restore(surface.open(config.right, namedOptions(entryOptions(options, name), name))).pipe(
        Effect.tap((id) => Effect.sync(() => opened.set(name, id))),
        Effect.match({
          onFailure: (error): OpenResult<OpenError> => ({ _tag: "Failed", error: rerootError(error, path) }),
          onSuccess: (id): OpenResult<OpenError> => ({ _tag: "Opened", id })
        })
      )
    ).pipe(Effect.map((result) => [name, result] as const))
  }
  return Effect.forEach(names, openOne, { concurrency: options?.concurrency ?? "unbounded" }).pipe(
    Effect.map(fromEntries),
    // Interrupted part way: what did open is closed again, so the caller is never left with ids it was not given.
    Effect.onInterrupt(() =>
      Effect.forEach(opened.values(), (id) => Effect.exit(surface.close(id)), {
        concurrency: "unbounded",
        discard: true
      })
    ),
    Effect.withSpan("McpWorkers.openAll", { attributes: { entries: names.length } })
  )
}

/**
 * Closes every worker of an `openAll` result (or of a record of ids), each with its own confirmed cleanup, all at
 * once; never fails: each entry's result says whether it closed. Entries that did not open are left out.
 *
 * @since 0.1.0
 * @category constructors
 */
export const closeAll = <OpenOptions, OpenError, CloseOptions, CloseError>(
  surface: Surface<OpenOptions, OpenError, CloseOptions, CloseError>,
  workers: Readonly<Record<string, OpenResult<unknown> | WorkerId | string>>,
  options?: CloseOptions
): Effect.Effect<Readonly<Record<string, CloseResult<CloseError>>>> => {
  const targets = Object.entries(workers).flatMap(([name, entry]): Array<readonly [string, string]> =>
    typeof entry === "string" ? [[name, entry]] : entry._tag === "Opened" ? [[name, entry.id]] : []
  )
  return Effect.forEach(
    targets,
    ([name, id]) =>
      surface.close(id, options).pipe(
        Effect.match({
          onFailure: (error): CloseResult<CloseError> => ({ _tag: "Failed", id: id as WorkerId, error }),
          onSuccess: (status): CloseResult<CloseError> => ({ _tag: "Closed", status })
        }),
        Effect.map((result) => [name, result] as const)
      ),
    { concurrency: "unbounded" }
  ).pipe(Effect.map(fromEntries), Effect.withSpan("McpWorkers.closeAll", { attributes: { workers: targets.length } }))
}

/**
 * The ids of the entries that opened, by name.
 *
 * @since 0.1.0
 * @category accessors
 */
export const ids = (result: OpenAllResult<unknown>): Readonly<Record<string, WorkerId>> =>
  fromEntries(
    Object.entries(result).flatMap(([name, entry]) => (entry._tag === "Opened" ? [[name, entry.id] as const] : []))
  )

/**
 * The failures of the entries that did not open, by name.
 *
 * @since 0.1.0
 * @category accessors
 */
export const failures = <E>(result: OpenAllResult<E>): Readonly<Record<string, E | InvalidInput>> =>
  fromEntries(
    Object.entries(result).flatMap(([name, entry]) => (entry._tag === "Failed" ? [[name, entry.error] as const] : []))
  )

// internal

// An entry is named in its host's metrics by its name in the document, unless its options name it otherwise (C80).
const namedOptions = <O extends object>(options: O | undefined, name: string): O => ({ name, ...options }) as O

const entryOptions = <O extends object>(options: OpenAllOptions<O> | undefined, name: string): O | undefined => {
  const own = options?.entries !== undefined && Object.hasOwn(options.entries, name) ? options.entries[name] : undefined
  if (own === undefined) return options?.open
  return options?.open === undefined ? own : { ...options.open, ...own }
}

const rerootError = <E>(error: E, path: string): E =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "InvalidInput"
    ? (McpConfig.reroot(error as unknown as InvalidInput, path) as unknown as E)
    : error

// Names are a document's own keys; defineProperty keeps a key such as "__proto__" an ordinary entry.
const fromEntries = <A>(entries: Iterable<readonly [string, A]>): Record<string, A> => {
  const out: Record<string, A> = {}
  for (const [key, value] of entries) {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return out
}

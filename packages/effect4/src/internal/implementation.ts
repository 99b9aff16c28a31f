// Loaded on first use, so a thread that only imports types pays nothing.
import type * as Client from "../../lib/effect3/bundle/client.mjs"
import type * as Implementation from "../../lib/effect3/bundle/implementation.mjs"

export type {
  EntryResult,
  Handler,
  HostOptions,
  LogEntry,
  OpenOptions,
  RequestName,
  ServerRequest,
  Surface,
  Timeout
} from "../../lib/effect3/bundle/implementation.mjs"
export type { ScopedClient } from "../../lib/effect3/bundle/client.mjs"

let loaded: Promise<typeof Implementation> | undefined

/** @internal */
export const load = (): Promise<typeof Implementation> =>
  (loaded ??= import("../../lib/effect3/bundle/implementation.mjs"))

let loadedClient: Promise<typeof Client> | undefined

/** Its own bundle, so hosts and remote threads never load it. @internal */
export const loadClient = (): Promise<typeof Client> => (loadedClient ??= import("../../lib/effect3/bundle/client.mjs"))

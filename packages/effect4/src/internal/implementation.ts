// The Effect 3 implementation, bundled privately into this package (scripts/bundle.mjs): loaded once per thread,
// on first use, so a thread that only imports the types pays nothing.
import type * as Implementation from "../../lib/effect3/implementation.mjs"

export type {
  Handler,
  HostOptions,
  LogEntry,
  RequestName,
  ScopedClient,
  ServerRequest,
  Surface
} from "../../lib/effect3/implementation.mjs"

let loaded: Promise<typeof Implementation> | undefined

/** @internal */
export const load = (): Promise<typeof Implementation> => (loaded ??= import("../../lib/effect3/implementation.mjs"))

/**
 * Effect's `Effect` and `Stream` as the type lambda the surface table (`@mcp-worker/caller/Surface`) is mapped with,
 * for both Effect faces: the Effect 4 face's module is made from this one.
 */
import type * as Surface from "@mcp-worker/caller/Surface"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"

export interface EffectRuntime extends Surface.Runtime {
  readonly effect: Effect.Effect<this["A"], this["E"]>
  readonly stream: Stream.Stream<this["A"], this["E"]>
}

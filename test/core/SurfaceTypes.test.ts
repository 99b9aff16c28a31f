// The surface table's types are checked when the tests compile (`npm run typecheck`, a share of `npm test`): a
// face's `SurfaceTypes` that left a slot out would give that slot `unknown` and its methods would accept anything.
import type * as Surface from "@mcp-worker/caller/Surface"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import { describe, expectTypeOf, it } from "vitest"

/** The slots a face's types leave as `unknown` (or `any`). */
type LooseSlots<T> = { [K in keyof T]: unknown extends T[K] ? K : never }[keyof T]

interface MissingStatus {
  readonly config: { readonly command: string }
  readonly workerId: string
  readonly notification: { readonly method: string }
  readonly openOptions: object
  readonly closeOptions: object
  readonly eventsOptions: object
  readonly document: object
  readonly openAllOptions: object
  readonly describeOptions: object
  readonly requestOptions: object
  readonly binding: object
  readonly error: { readonly _tag: "InvalidInput" }
}

describe("the surface table's types", () => {
  it("the Effect face declares every slot, none of them unknown", () => {
    expectTypeOf<LooseSlots<McpWorkers.SurfaceTypes>>().toEqualTypeOf<never>()
    expectTypeOf<keyof McpWorkers.SurfaceTypes>().toEqualTypeOf<keyof Surface.Types>()
  })

  it("a face's types that leave a slot out do not compile into a table", () => {
    // @ts-expect-error `status` is missing
    expectTypeOf<Surface.Lifecycle<MissingStatus>>().not.toBeNever()
  })
})

import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import fc from "fast-check"
import { ClusterWorkerId } from "../../packages/cluster/src/index.js"
import * as WorkerId from "../../packages/core/src/WorkerId.js"

describe("ClusterWorkerId", () => {
  it("a group is new at every start, and an id carries its runner's group", () => {
    const groups = new Set(Array.from({ length: 200 }, () => ClusterWorkerId.makeGroup()))
    assert.strictEqual(groups.size, 200)
    for (const group of groups) assert.isTrue(ClusterWorkerId.isGroup(group))
    const local = WorkerId.make()
    const group = ClusterWorkerId.makeGroup()
    const id = ClusterWorkerId.make(local, group)
    assert.deepStrictEqual(ClusterWorkerId.parse(id), Option.some({ local, group }))
    assert.strictEqual(ClusterWorkerId.groupOf(id), group)
  })

  it("property: anything that is not such an id parses to None and maps to a group no runner serves", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.constant(WorkerId.make()), fc.constant(`${WorkerId.make()}.mcpw-XYZ`)),
        (s) => {
          assert.isTrue(Option.isNone(ClusterWorkerId.parse(s)))
          assert.isFalse(ClusterWorkerId.isGroup(ClusterWorkerId.groupOf(s)))
        }
      )
    )
  })
})

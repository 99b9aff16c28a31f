// C44: a grant is exactly the text the host issued. Its tag's last character carries padding bits, so a grant
// changed only there decodes to the same bytes: the host compares the text, and refuses every such variant.
import { assert, describe, it } from "@effect/vitest"
import * as Grants from "../../packages/node/src/internal/listen/grants.js"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

describe("C44: grants", () => {
  it("a grant with any one character changed names nothing, the padding bits of its tag included", () => {
    const grants = Grants.make()
    for (let n = 0; n < 20; n++) {
      const issued = Grants.issue(grants, `mcpw_${n}`, undefined, Date.now())
      assert.isTrue(issued._tag === "Right")
      const grant = issued._tag === "Right" ? issued.right : ""
      assert.strictEqual(Grants.resolve(grants, grant, Date.now())?.workerId, `mcpw_${n}`)
      const accepted = [grant.length - 1, grant.length - 2, "mcpg_".length + 21].flatMap((at) =>
        [...alphabet]
          .filter((char) => char !== grant[at])
          .map((char) => grant.slice(0, at) + char + grant.slice(at + 1))
          .filter((variant) => Grants.resolve(grants, variant, Date.now()) !== undefined)
      )
      assert.deepStrictEqual(accepted, [])
    }
  })
})

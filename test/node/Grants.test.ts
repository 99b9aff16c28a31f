// C44: a grant is exactly the text the host issued. Its tag's last character carries padding bits, so a grant
// changed only there decodes to the same bytes: the host compares the text, and refuses every such variant.
import { assert, describe, it } from "@effect/vitest"
import { InvalidInput } from "@mcp-worker/core/McpWorkerError"
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

// C16: a peer's params are JSON text of a plain object; the refusal is core's own `InvalidInput` (not the caller
// check's), unsent and naming `params`.
describe("C16: a listener's params", () => {
  const target: Grants.Target = { workerId: "mcpw_x", grant: undefined }
  const payload = (params: string) => ({ id: "mcpw_x", params })

  it("text that is not JSON, or not an object's, is refused unsent, naming params", () => {
    const notJson = Grants.checked(target, "callTool", payload("{"))
    assert.strictEqual(Object.getPrototypeOf(notJson), InvalidInput.prototype)
    assert.deepInclude(notJson, { where: "arguments", path: "params", delivery: "not_sent" })
    assert.match(notJson!.message, /is not valid JSON text/)
    const notObject = Grants.checked(target, "callTool", payload("[1]"))
    assert.strictEqual(Object.getPrototypeOf(notObject), InvalidInput.prototype)
    assert.deepInclude(notObject, { path: "params", message: "the request params must be a plain object" })
    assert.isUndefined(Grants.checked(target, "callTool", payload('{"name":"inc","arguments":{}}')))
  })
})

import type { JsonObject } from "@mcp-worker/core/JsonValue"
import { WorkerBusy } from "@mcp-worker/core/McpWorkerError"
import type { CallToolOptions } from "@mcp-worker/core/Operations"
import * as ToolBinding from "@mcp-worker/core/agentHost/ToolBinding"
import * as ToolDeclarations from "@mcp-worker/core/agentHost/ToolDeclarations"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

interface Call {
  readonly id: string
  readonly name: string
  readonly args: JsonObject | undefined
  readonly options: unknown
}

const tools = {
  tools: [
    { name: "get-sum", inputSchema: { type: "object" } },
    { name: "echo", inputSchema: { type: "object" } },
    { name: "then", inputSchema: { type: "object" } }
  ]
}

describe("ToolBinding", () => {
  it.effect("Effect methods are callTool with the real name, the arguments and the options, unchanged", () =>
    Effect.gen(function* () {
      const calls: Array<Call> = []
      const callTool: ToolBinding.EffectCallTool = (id, name, args, options) => {
        calls.push({ id, name, args, options })
        return name === "echo"
          ? Effect.fail(new WorkerBusy({ workerId: id, requestId: "r1", delivery: "not_sent" }))
          : Effect.succeed({ content: [{ type: "text", text: "3" }] })
      }
      const bound = ToolBinding.effect(callTool, "w1", tools)
      assert.deepStrictEqual(Object.keys(bound), ["get_sum", "echo", "then_"])
      const onProgress = () => {}
      const result = yield* bound.get_sum({ a: 1, b: 2 }, { timeout: "1 second", onProgress })
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "3" }] })
      // The same error, not wrapped.
      const busy = yield* Effect.either(bound.echo())
      assert.isTrue(Either.isLeft(busy) && busy.left instanceof WorkerBusy)
      yield* bound.then_({}, { saveTo: "/tmp/x.json" })
      assert.deepStrictEqual(calls, [
        { id: "w1", name: "get-sum", args: { a: 1, b: 2 }, options: { timeout: "1 second", onProgress } },
        { id: "w1", name: "echo", args: undefined, options: undefined },
        { id: "w1", name: "then", args: {}, options: { saveTo: "/tmp/x.json" } }
      ])
    })
  )

  it("Promise methods return callTool's Promise, rejections included", async () => {
    const controller = new AbortController()
    const seen: Array<unknown> = []
    const callTool: ToolBinding.PromiseCallTool<CallToolOptions & { readonly signal?: AbortSignal }> = async (
      id,
      name,
      args,
      options
    ) => {
      seen.push([id, name, args, options])
      if (name === "echo") throw new WorkerBusy({ workerId: id, requestId: "r2", delivery: "not_sent" })
      return { content: [] }
    }
    const bound = ToolBinding.promise(callTool, "w2", ["get-sum", "echo"])
    assert.deepStrictEqual(await bound.get_sum({ a: 1 }, { signal: controller.signal }), { content: [] })
    const error = await bound.echo({}).then(
      () => undefined,
      (e: unknown) => e
    )
    assert.instanceOf(error, WorkerBusy)
    assert.deepStrictEqual(seen, [
      ["w2", "get-sum", { a: 1 }, { signal: controller.signal }],
      ["w2", "echo", {}, undefined]
    ])
  })

  it("the binding has the methods of the declarations and nothing else", () => {
    const names = ["a-b", "a_b", "toString", "__proto__", "then", "x y"]
    const bound = ToolBinding.effect(() => Effect.succeed({ content: [] }), "w", names)
    assert.deepStrictEqual(
      Object.keys(bound),
      ToolDeclarations.methodNames(names).map(([method]) => method)
    )
    assert.isTrue(Object.isFrozen(bound))
    assert.isNull(Object.getPrototypeOf(bound))
    assert.strictEqual(typeof (bound as any).then, "undefined")
    const declarations = ToolDeclarations.render(
      names.map((name) => ({ name, inputSchema: { type: "object" } })) as any
    )
    for (const method of Object.keys(bound)) assert.include(declarations, `${method}(args`)
  })

  it("namesOf reads names from a tools/list result, its tools or names, skipping entries without one", () => {
    assert.deepStrictEqual(ToolBinding.namesOf({ tools: [{ name: "a" }, { title: "no name" }, null] } as any), ["a"])
    assert.deepStrictEqual(ToolBinding.namesOf(["x", { name: "y" }]), ["x", "y"])
  })
})

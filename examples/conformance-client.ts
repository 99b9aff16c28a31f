/**
 * The client the MCP conformance suite drives (`npm run conformance`): the runner starts a test server for one
 * scenario, then runs this file with the server's URL as the last argument and the scenario's name in
 * `MCP_CONFORMANCE_SCENARIO`. Every scenario goes through the public API only: one worker opened by URL in an owner
 * thread, the scenario's requests, then close.
 *
 * Run one by hand: MCP_CONFORMANCE_SCENARIO=tools_call npx tsx examples/conformance-client.ts http://localhost:3000/mcp
 */
import type * as JsonValue from "@mcp-worker/core/JsonValue"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"

type Scenario = (workers: McpWorkers["Type"], id: string) => Effect.Effect<void, unknown>

const scenarios: Record<string, Scenario> = {
  // The handshake is the whole test: open initializes, close ends the session.
  initialize: () => Effect.void,
  tools_call: (workers, id) =>
    Effect.gen(function* () {
      const { tools } = yield* workers.listTools(id)
      yield* Console.log("tools:", tools.map((tool) => tool.name).join(", "))
      const result = yield* workers.callTool(id, "add_numbers", { a: 5, b: 3 })
      yield* Console.log("add_numbers:", JSON.stringify(result.content))
    }),
  // The server ends the call's stream before answering; the answer comes on the GET stream the client reopens
  // after the `retry` the server asked for.
  "sse-retry": (workers, id) =>
    Effect.gen(function* () {
      yield* workers.listTools(id)
      const result = yield* workers.callTool(id, "test_reconnection")
      yield* Console.log("test_reconnection:", JSON.stringify(result.content))
    }),
  // The server elicits during the call; the handler below accepts with no fields, and the client fills in the
  // schema's defaults.
  "elicitation-sep1034-client-defaults": (workers, id) =>
    Effect.gen(function* () {
      const result = yield* workers.callTool(id, "test_client_elicitation_defaults")
      yield* Console.log("test_client_elicitation_defaults:", JSON.stringify(result.content))
    })
}

// The auth scenarios pass what a configured client would know in `MCP_CONFORMANCE_CONTEXT`: its credentials.
const context: Record<string, unknown> = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")

// A call a scenario's context asks for.
interface ToolCall {
  readonly name: string
  readonly arguments: JsonValue.JsonObject
}
const scenarioName = process.env.MCP_CONFORMANCE_SCENARIO ?? ""

// The client credentials scenarios: a config's `auth`, the whole flow in the owner.
const authOf = () =>
  !scenarioName.startsWith("auth/client-credentials") || typeof context.client_id !== "string"
    ? undefined
    : typeof context.private_key_pem === "string"
      ? {
          type: "client_credentials" as const,
          clientId: context.client_id,
          privateKey: context.private_key_pem,
          algorithm: context.signing_algorithm === "ES256" ? ("ES256" as const) : ("RS256" as const)
        }
      : typeof context.client_secret === "string"
        ? { type: "client_credentials" as const, clientId: context.client_id, clientSecret: context.client_secret }
        : undefined

// The interactive scenarios: the host's OAuth client. The suite's authorization endpoint redirects at once, so the
// "user" here follows the authorization URL and reads the code from the redirect.
const oauth: NodeMcpWorkers.OAuthProvider = {
  redirectUrl: "http://127.0.0.1:3000/callback",
  clientMetadata: {
    client_name: "mcp-worker conformance client",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"]
  },
  clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
  ...(typeof context.client_id === "string" && !scenarioName.startsWith("auth/client-credentials")
    ? {
        clientInformation: {
          client_id: context.client_id,
          ...(typeof context.client_secret === "string" ? { client_secret: context.client_secret } : {})
        }
      }
    : {}),
  authorize: ({ authorizationUrl }) =>
    Effect.tryPromise(async () => {
      const response = await fetch(authorizationUrl, { redirect: "manual" })
      await response.body?.cancel()
      const location = response.headers.get("location")
      const params = location === null ? null : new URL(location).searchParams
      const code = params?.get("code") ?? null
      if (code === null) throw new Error(`no code in the redirect (HTTP ${response.status})`)
      // The redirect's issuer, for the owner to check against the authorization server's (RFC 9207, C58).
      const iss = params?.get("iss") ?? undefined
      return iss === undefined ? code : { code, iss }
    })
}

// The 2026-07-28 scenarios that need nothing of their own: every tool the server lists, called once with the
// arguments the scenario's context names for it, else none (the server checks what reached it: the _meta envelope,
// the headers, the echoed requestState).
const everyTool: Scenario = (workers, id) =>
  Effect.gen(function* () {
    const { tools } = yield* workers.listTools(id)
    const calls = Array.isArray(context.toolCalls) ? (context.toolCalls as ReadonlyArray<ToolCall>) : []
    for (const tool of tools) {
      const args = calls.find((call) => call.name === tool.name)?.arguments ?? {}
      const outcome = yield* Effect.either(workers.callTool(id, tool.name, args))
      yield* Console.log(
        `${tool.name}:`,
        outcome._tag === "Right" ? JSON.stringify(outcome.right.content) : outcome.left
      )
    }
  })

// The auth scenarios: the flow happens during open (and again when a call needs more scope); calls prove the token.
const authorized: Scenario = (workers, id) =>
  Effect.gen(function* () {
    const { tools } = yield* workers.listTools(id)
    yield* Console.log("tools:", tools.map((tool) => tool.name).join(", "))
    if (tools[0] !== undefined) yield* workers.callTool(id, tools[0].name, {})
  })

// The client auth scenarios, listed once for this client and scripts/conformance.mjs.
const scenarioList = JSON.parse(fs.readFileSync(new URL("./conformance-scenarios.json", import.meta.url), "utf8")) as {
  readonly auth: ReadonlyArray<string>
}
for (const name of scenarioList.auth) {
  scenarios[name] = authorized
}

const program = Effect.gen(function* () {
  const name = scenarioName
  const url = process.argv.at(-1) ?? ""
  const scenario =
    scenarios[name] ?? (process.env.MCP_CONFORMANCE_PROTOCOL_VERSION === "2026-07-28" ? everyTool : undefined)
  if (scenario === undefined || !URL.canParse(url)) {
    return yield* Effect.fail(
      `usage: MCP_CONFORMANCE_SCENARIO=<${Object.keys(scenarios).join("|")}> conformance-client.ts <server-url>`
    )
  }
  const workers = yield* McpWorkers
  const auth = authOf()
  // The runner names the revision a scenario runs at; 2026-07-28 pins the modern era (C51), anything else is auto.
  const protocol = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION === "2026-07-28" ? ("2026-07-28" as const) : undefined
  const id = yield* workers.open({
    type: "http",
    url,
    ...(auth !== undefined ? { auth } : {}),
    ...(protocol !== undefined ? { protocol } : {})
  })
  yield* scenario(workers, id).pipe(Effect.ensuring(Effect.ignore(workers.close(id))))
})

program.pipe(
  Effect.provide(
    NodeMcpWorkers.layer({
      handlers: {
        elicitation: () => Effect.succeed({ action: "accept", content: {} }),
        sampling: () =>
          Effect.succeed({ role: "assistant", content: { type: "text", text: "conformance" }, model: "conformance" }),
        roots: () => Effect.succeed({ roots: [] })
      },
      oauth
    })
  ),
  NodeRuntime.runMain
)

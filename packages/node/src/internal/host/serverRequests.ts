/** Shared by the host registry and an `McpClient`. @internal */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import type { Handlers, OAuthProvider } from "../../NodeMcpWorkers.js"
import type { Asker } from "../shared/connection.js"

type Answerer = (workerId: string, params: unknown) => Effect.Effect<unknown, unknown>

const fieldsOf = (params: unknown): Readonly<Record<string, unknown>> =>
  typeof params === "object" && params !== null ? (params as Record<string, unknown>) : {}

const authorizeWith =
  (oauth: OAuthProvider): Answerer =>
  (workerId, params) => {
    const { authorizationUrl } = fieldsOf(params)
    return typeof authorizationUrl !== "string"
      ? Effect.fail("no authorization URL")
      : Effect.map(oauth.authorize({ workerId, authorizationUrl }), (answer) =>
          typeof answer === "string"
            ? { code: answer }
            : { code: answer.code, ...(typeof answer.iss === "string" ? { iss: answer.iss } : {}) }
        )
  }

const tokensWith =
  (oauth: OAuthProvider): Answerer =>
  (_workerId, params) => {
    const { serverUrl } = fieldsOf(params)
    if (typeof serverUrl !== "string" || oauth.tokens === undefined) return Effect.succeed({})
    return Effect.map(oauth.tokens(serverUrl), (tokens) => (tokens === undefined || tokens === null ? {} : { tokens }))
  }

const saveTokensWith =
  (oauth: OAuthProvider): Answerer =>
  (_workerId, params) => {
    const { serverUrl, tokens } = fieldsOf(params)
    if (typeof serverUrl !== "string" || oauth.saveTokens === undefined) return Effect.succeed({})
    return Effect.as(oauth.saveTokens(serverUrl, tokens), {})
  }

const handlerOf = (
  handlers: Handlers,
  oauth: OAuthProvider | undefined,
  method: OwnerProtocol.ServerMethod
): Answerer | undefined => {
  if (method === "oauth/authorize") return oauth === undefined ? undefined : authorizeWith(oauth)
  if (method === "oauth/tokens") return oauth === undefined ? undefined : tokensWith(oauth)
  if (method === "oauth/saveTokens") return oauth === undefined ? undefined : saveTokensWith(oauth)
  const handler =
    method === "elicitation/create"
      ? handlers.elicitation
      : method === "sampling/createMessage"
        ? handlers.sampling
        : handlers.roots
  return handler === undefined ? undefined : (workerId, params) => handler({ workerId, method, params })
}

/** A failing handler answers the server with an error. @internal */
export const answer = (
  holder: {
    readonly workerId: string
    readonly handlers: Handlers
    readonly oauth?: OAuthProvider | undefined
    readonly timeoutMs: number
    readonly reply: (answer: typeof OwnerProtocol.ServerReplyMessage.Encoded) => void
    readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
    /** C151 */
    readonly ask?: Asker | undefined
  },
  message: typeof OwnerProtocol.ServerRequestMessage.Type
): void => {
  const { method, serverRequestId } = message
  const { reply, workerId } = holder
  const refuse = (text: string) =>
    Effect.sync(() => reply({ _tag: "ServerReply", serverRequestId, error: { code: -32603, message: text } }))
  const asked = holder.ask?.(method)
  const handler: Answerer | undefined =
    asked !== undefined ? (_workerId, params) => asked(params) : handlerOf(holder.handlers, holder.oauth, method)
  if (handler === undefined) {
    holder.runFork(refuse(`the client has no handler for ${method}`))
    return
  }
  holder.runFork(
    Effect.suspend(() => handler(workerId, JsonValue.decodeUnsafe(message.params))).pipe(
      Effect.timeoutFail({ duration: holder.timeoutMs, onTimeout: () => "timeout" as const }),
      Effect.flatMap((result) =>
        Either.match(JsonValue.encode(result, { where: "arguments", root: "result" }), {
          onLeft: () => refuse(`the client's ${method} handler answered with something that is not JSON data`),
          onRight: (text) => Effect.sync(() => reply({ _tag: "ServerReply", serverRequestId, result: text }))
        })
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("a server request handler failed").pipe(
          Effect.annotateLogs({ workerId, method }),
          Effect.zipRight(refuse(`the client's ${method} handler failed`)),
          Effect.when(() => !Cause.isInterruptedOnly(cause))
        )
      )
    )
  )
}

/** The owner gets plain data only. @internal */
export const oauthSettings = (
  provider: OAuthProvider | undefined,
  where: string
): Either.Either<{ readonly provider: OAuthProvider; readonly settings: string } | undefined, Error> => {
  if (provider === undefined) return Either.right(undefined)
  if (!URL.canParse(provider.redirectUrl)) {
    return Either.left(new Error(`${where}: options.oauth.redirectUrl must be an absolute URL`))
  }
  const settings = JsonValue.encode(
    {
      redirectUrl: provider.redirectUrl,
      clientMetadata: provider.clientMetadata ?? {},
      ...(provider.clientMetadataUrl !== undefined ? { clientMetadataUrl: provider.clientMetadataUrl } : {}),
      ...(provider.clientInformation !== undefined ? { clientInformation: provider.clientInformation } : {})
    },
    { where: "config", root: "options.oauth" }
  )
  return Either.match(settings, {
    onLeft: (error) => Either.left(new Error(`${where}: ${error.path} ${error.message}`)),
    onRight: (text) => Either.right({ provider, settings: text })
  })
}

/** @internal */
export const listOf = (method: OwnerProtocol.NotificationMethod): "tools" | "resources" | "prompts" | undefined =>
  method === "notifications/tools/list_changed"
    ? "tools"
    : method === "notifications/resources/list_changed"
      ? "resources"
      : method === "notifications/prompts/list_changed"
        ? "prompts"
        : undefined

/** @internal */
export const mergedCleanup = (
  confirmed: CleanupSummary,
  summary: CleanupSummary | undefined,
  started: number
): CleanupSummary => ({
  ...confirmed,
  signalled: {
    term: confirmed.signalled.term + (summary?.signalled.term ?? 0),
    kill: confirmed.signalled.kill + (summary?.signalled.kill ?? 0)
  },
  escaped: confirmed.escaped + (summary?.escaped ?? 0),
  durationMs: Date.now() - started
})

// Authorization of HTTP servers (C34) through the whole library: the host registry, real owner threads, a remote
// thread, and a real OAuth-protected server with its own token endpoint (test/fixtures/oauth.server.ts).
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as McpClient from "@mcp-worker/node/McpClient"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { type HttpFixture, type OAuthFixtureLog, startHttpFixture } from "../fixtures/servers.js"
import { structured, tag } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const secret = `CANARY-secret-${tag()}`

const fixture = (...flags: Array<string>) =>
  Effect.acquireRelease(
    Effect.promise(() => startHttpFixture("oauth", `--secret=${secret}`, ...flags)),
    (server: HttpFixture) => Effect.promise(() => server.stop())
  )

const logOf = (server: HttpFixture) =>
  Effect.promise(() => server.admin("GET", "/admin/log") as Promise<OAuthFixtureLog>)

const admin = (server: HttpFixture, path: string) => Effect.promise(() => server.admin("POST", path))

const credentials = (server: HttpFixture, clientSecret = secret) => ({
  url: server.url,
  auth: { type: "client_credentials" as const, clientId: "fixture-client", clientSecret }
})

/** Every log line, for the secret checks. */
const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, message }) => {
    lines.push(JSON.stringify({ message, annotations: Object.fromEntries(annotations) }))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

const noSecret = (texts: ReadonlyArray<string>) => {
  for (const text of texts) {
    assert.notInclude(text, secret)
    assert.notInclude(text, "fixture-token-")
  }
}

describe("HTTP authorization (C34)", () => {
  it.scopedLive("C34: client credentials: a token at the first 401, renewed before it expires mid-session", () => {
    const logs = capture()
    return Effect.gen(function* () {
      const server = yield* fixture("--ttl=2")
      const workers = yield* McpWorkers
      const id = yield* workers.open(credentials(server))
      assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
      const first = yield* logOf(server)
      assert.strictEqual(first.tokens, 1)
      // The first request went without a token: that 401 is how the server names its authorization server.
      assert.strictEqual(first.unauthorized, 1)
      // Past the token's lifetime: the owner renews it before sending, so the server never refuses the call.
      yield* Effect.sleep("2100 millis")
      assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 2)
      const second = yield* logOf(server)
      assert.strictEqual(second.tokens, 2)
      assert.strictEqual(second.unauthorized, 1)
      assert.strictEqual(second.calls, 2)
      assert.strictEqual(second.sessions, 1)
      const status = yield* workers.status(id)
      assert.strictEqual(status.state, "ready")
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.sessionTerminated, true)
      noSecret([JSON.stringify(status), JSON.stringify(closed), ...logs.lines])
    }).pipe(Effect.provide(NodeMcpWorkers.layer()), Effect.provide(logs.layer))
  })

  it.scopedLive(
    "C34: a token refused mid-session is renewed once and the call sent once; a remote thread calls on",
    () =>
      Effect.gen(function* () {
        const server = yield* fixture()
        const workers = yield* McpWorkers
        const id = yield* workers.open(credentials(server))
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
        yield* admin(server, "/admin/revoke")
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 2)
        const log = yield* logOf(server)
        assert.strictEqual(log.tokens, 2)
        assert.strictEqual(log.unauthorized, 2)
        // The refused request never reached the server; the one sent after the refresh did, once.
        assert.strictEqual(log.calls, 2)
        const refused = log.requests.filter((request) => request.status === 401)
        assert.deepStrictEqual(
          refused.map((request) => request.token),
          [null, 1]
        )
        // Another thread, knowing only the id, uses the session with the token the owner renewed.
        const outcome = yield* runInThread(entry(), { scenario: "inc", data: { id } })
        assert.isTrue(outcome.ok)
        if (outcome.ok) assert.strictEqual(outcome.value.count, 3)
        const after = yield* logOf(server)
        assert.strictEqual(after.tokens, 2)
        assert.strictEqual(after.requests.at(-1)?.token, 2)
        assert.strictEqual(after.sessions, 1)
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive("C34: a refresh that fails fails the worker unauthorized; the call was not sent", () =>
    Effect.gen(function* () {
      const server = yield* fixture()
      const workers = yield* McpWorkers
      const id = yield* workers.open(credentials(server))
      yield* workers.callTool(id, "inc")
      yield* admin(server, "/admin/revoke")
      yield* admin(server, "/admin/refuse")
      const error = yield* Effect.flip(workers.callTool(id, "inc"))
      assert.strictEqual(error._tag, "WorkerFailed")
      if (error._tag !== "WorkerFailed") return
      assert.strictEqual(error.kind, "unauthorized")
      assert.strictEqual(error.delivery, "not_sent")
      const status = yield* workers.status(id)
      assert.strictEqual(status.state, "failed")
      assert.strictEqual(status.lastFailure?.kind, "unauthorized")
      const later = yield* Effect.flip(workers.callTool(id, "inc"))
      assert.strictEqual(later._tag === "WorkerFailed" && later.delivery, "not_sent")
      const log = yield* logOf(server)
      assert.strictEqual(log.calls, 1)
      assert.isAtLeast(log.tokenRefused, 1)
      noSecret([error.message, JSON.stringify(status), later.message])
      assert.strictEqual((yield* workers.close(id)).state, "closed")
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive("C34: a server that refuses every token: one new token per refused request, never a loop", () =>
    Effect.gen(function* () {
      const server = yield* fixture()
      const workers = yield* McpWorkers
      const id = yield* workers.open(credentials(server))
      yield* workers.callTool(id, "inc")
      const before = yield* logOf(server)
      yield* admin(server, "/admin/reject")
      const error = yield* Effect.flip(workers.callTool(id, "inc"))
      assert.strictEqual(error._tag === "WorkerFailed" && error.kind, "unauthorized")
      assert.strictEqual(error._tag === "WorkerFailed" && error.delivery, "not_sent")
      const after = yield* logOf(server)
      assert.strictEqual(after.tokens - before.tokens, 1)
      assert.strictEqual(after.unauthorized - before.unauthorized, 2)
      assert.strictEqual(after.calls, 1)
      noSecret([error.message])
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive("C34: credentials the authorization server refuses: OpenFailed at stage authorization", () =>
    Effect.gen(function* () {
      const server = yield* fixture()
      const workers = yield* McpWorkers
      const wrong = `CANARY-wrong-${tag()}`
      const error = yield* Effect.flip(workers.open(credentials(server, wrong)))
      assert.strictEqual(error._tag, "OpenFailed")
      if (error._tag === "OpenFailed") assert.strictEqual(error.stage, "authorization")
      assert.notInclude(error.message, wrong)
      assert.strictEqual((yield* logOf(server)).sessions, 0)
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive(
    "C58: a 2025-03-26 server, with no protected resource metadata, whose root metadata names an issuer on its own origin is reached; another origin is refused",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const legacy = yield* fixture("--legacy-issuer=/oauth")
        const id = yield* workers.open(credentials(legacy))
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
        assert.strictEqual((yield* logOf(legacy)).tokens, 1)
        yield* workers.close(id)
        // The same server naming an issuer elsewhere: the metadata is not used, and no token is asked for.
        const elsewhere = yield* fixture("--legacy-issuer=http://authorization.invalid/")
        const error = yield* Effect.flip(workers.open(credentials(elsewhere)))
        assert.strictEqual(error._tag, "OpenFailed")
        if (error._tag === "OpenFailed") {
          assert.strictEqual(error.stage, "authorization")
          assert.include(error.message, "Issuer mismatch")
        }
        const log = yield* logOf(elsewhere)
        assert.strictEqual(log.tokens, 0)
        assert.strictEqual(log.sessions, 0)
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive(
    "C58: a 403 insufficient_scope: the new token asks for the scopes asked before and the one the server names; the call runs once",
    () =>
      Effect.gen(function* () {
        // Every request needs mcp:basic (the 401 says so); calling inc needs mcp:write too.
        const server = yield* fixture("--scope-tool=inc")
        const workers = yield* McpWorkers
        const id = yield* workers.open(credentials(server))
        const opened = yield* logOf(server)
        assert.deepStrictEqual(
          opened.oauth.map(({ endpoint, scope }) => ({ endpoint, scope })),
          [{ endpoint: "token", scope: "mcp:basic" }]
        )
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
        const log = yield* logOf(server)
        // The step-up keeps mcp:basic, which every request needs: a token of mcp:write alone would be refused.
        assert.deepStrictEqual(
          log.oauth.map(({ grant, scope }) => ({ grant, scope })),
          [
            { grant: "client_credentials", scope: "mcp:basic" },
            { grant: "client_credentials", scope: "mcp:basic mcp:write" }
          ]
        )
        assert.strictEqual(log.forbidden, 1)
        // The refused call never reached the server; the one sent with the new token did, once.
        assert.strictEqual(log.calls, 1)
        assert.deepStrictEqual(
          log.requests.filter((request) => request.status === 403).map((request) => request.token),
          [1]
        )
        assert.strictEqual(log.requests.at(-1)?.token, 2)
        // The new token serves what the old one did: no more authorization.
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 2)
        const after = yield* logOf(server)
        assert.deepInclude(after, { tokens: 2, forbidden: 1, calls: 2, sessions: 1 })
        assert.strictEqual((yield* workers.status(id)).state, "ready")
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive(
    "C58: a step-up the authorization server does not grant: the refusal stands, the worker fails unauthorized, the call not sent",
    () =>
      Effect.gen(function* () {
        const server = yield* fixture("--scope-tool=inc", "--grant-at-most=mcp:basic")
        const workers = yield* McpWorkers
        const id = yield* workers.open(credentials(server))
        const error = yield* Effect.flip(workers.callTool(id, "inc"))
        assert.strictEqual(error._tag, "WorkerFailed")
        if (error._tag === "WorkerFailed") {
          assert.strictEqual(error.kind, "unauthorized")
          assert.strictEqual(error.delivery, "not_sent")
        }
        const log = yield* logOf(server)
        // One re-authorization, with the union; refused again, never a loop, and the call never ran.
        assert.deepStrictEqual(
          log.oauth.map(({ scope }) => scope),
          ["mcp:basic", "mcp:basic mcp:write"]
        )
        assert.strictEqual(log.forbidden, 2)
        assert.strictEqual(log.calls, 0)
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive(
    "C34: bearer: a fixed token is sent and cannot be renewed; refused, the worker fails unauthorized",
    () =>
      Effect.gen(function* () {
        const server = yield* fixture()
        const token = yield* Effect.promise(() =>
          fetch(new URL("/token", server.url), {
            method: "POST",
            headers: { authorization: `Basic ${Buffer.from(`fixture-client:${secret}`).toString("base64")}` },
            body: new URLSearchParams({ grant_type: "client_credentials" })
          }).then((response) => response.json() as Promise<{ access_token: string }>)
        )
        const workers = yield* McpWorkers
        const id = yield* workers.open({ url: server.url, auth: { type: "bearer", token: token.access_token } })
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
        assert.strictEqual((yield* logOf(server)).unauthorized, 0)
        yield* admin(server, "/admin/revoke")
        const error = yield* Effect.flip(workers.callTool(id, "inc"))
        assert.strictEqual(error._tag === "WorkerFailed" && error.kind, "unauthorized")
        assert.strictEqual(error._tag === "WorkerFailed" && error.delivery, "not_sent")
        const log = yield* logOf(server)
        assert.strictEqual(log.tokens, 1)
        assert.strictEqual(log.unauthorized, 1)
        assert.strictEqual(log.calls, 1)
        noSecret([error.message, JSON.stringify(yield* workers.status(id))])
        const refused = yield* Effect.flip(workers.open({ url: server.url, auth: { type: "bearer", token: "nope" } }))
        assert.strictEqual(refused._tag === "OpenFailed" && refused.stage, "authorization")
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive("C34, C33: McpClient authorizes the same way in the calling thread", () =>
    Effect.gen(function* () {
      const server = yield* fixture()
      const client = yield* McpClient.make(credentials(server))
      assert.strictEqual(structured(yield* client.callTool("inc")).count, 1)
      yield* admin(server, "/admin/revoke")
      assert.strictEqual(structured(yield* client.callTool("inc")).count, 2)
      assert.strictEqual((yield* logOf(server)).tokens, 2)
    })
  )

  describe("the host's interactive OAuth client", () => {
    // The "user": follows the authorization URL and reads the code from the redirect, as a consenting user would.
    const follow = (authorizationUrl: string) =>
      Effect.promise(async () => {
        const response = await fetch(authorizationUrl, { redirect: "manual" })
        await response.body?.cancel()
        return new URL(response.headers.get("location") ?? "").searchParams.get("code") ?? ""
      })

    const provider = (authorize: NodeMcpWorkers.OAuthProvider["authorize"]): NodeMcpWorkers.OAuthProvider => ({
      redirectUrl: "http://127.0.0.1:9/callback",
      clientInformation: { client_id: "fixture-client", client_secret: secret },
      authorize
    })

    it.scopedLive("C34: the user authorizes once; the owner exchanges the code, refreshes after a refusal", () => {
      const logs = capture()
      const asked: Array<{ workerId: string; authorizationUrl: string }> = []
      const codes: Array<string> = []
      const oauth = provider((request) =>
        Effect.tap(
          Effect.suspend(() => {
            asked.push(request)
            return follow(request.authorizationUrl)
          }),
          (code) => void codes.push(code)
        )
      )
      return Effect.gen(function* () {
        const server = yield* fixture()
        const workers = yield* McpWorkers
        const id = yield* workers.open({ url: server.url })
        assert.strictEqual(asked.length, 1)
        assert.strictEqual(asked[0]!.workerId, id)
        const url = new URL(asked[0]!.authorizationUrl)
        assert.strictEqual(url.searchParams.get("code_challenge_method"), "S256")
        assert.strictEqual(url.searchParams.get("resource"), server.url)
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
        yield* admin(server, "/admin/revoke")
        // A refusal mid-session is cured with the refresh token: the user is not asked again.
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 2)
        assert.strictEqual(asked.length, 1)
        const log = yield* logOf(server)
        assert.deepInclude(log, { codes: 1, refreshes: 1, tokens: 2, calls: 2, sessions: 1 })
        const status = yield* workers.status(id)
        const closed = yield* workers.close(id)
        const texts = [JSON.stringify(status), JSON.stringify(closed), ...logs.lines]
        noSecret(texts)
        for (const text of texts) {
          assert.notInclude(text, codes[0]!)
          assert.notInclude(text, "fixture-refresh-")
        }
      }).pipe(Effect.provide(NodeMcpWorkers.layer({ oauth })), Effect.provide(logs.layer))
    })

    it.scopedLive(
      "C34: tokens kept by the host's client: a second worker on the same server does not ask the user",
      () => {
        const kept = new Map<string, unknown>()
        let asked = 0
        const oauth: NodeMcpWorkers.OAuthProvider = {
          ...provider(({ authorizationUrl }) => Effect.suspend(() => (asked++, follow(authorizationUrl)))),
          tokens: (serverUrl) => Effect.sync(() => kept.get(serverUrl)),
          saveTokens: (serverUrl, tokens) => Effect.sync(() => void kept.set(serverUrl, tokens))
        }
        return Effect.gen(function* () {
          const server = yield* fixture()
          const workers = yield* McpWorkers
          const first = yield* workers.open({ url: server.url })
          assert.strictEqual(asked, 1)
          assert.deepStrictEqual([...kept.keys()], [server.url])
          const second = yield* workers.open({ url: server.url })
          assert.strictEqual(asked, 1)
          assert.strictEqual(structured(yield* workers.callTool(second, "inc")).count, 1)
          // The kept token is refused once revoked: the second worker refreshes it, and keeps the new one.
          yield* admin(server, "/admin/revoke")
          assert.strictEqual(structured(yield* workers.callTool(second, "inc")).count, 2)
          assert.strictEqual(asked, 1)
          const log = yield* logOf(server)
          assert.deepInclude(log, { codes: 1, refreshes: 1, sessions: 2 })
          yield* workers.close(first)
          yield* workers.close(second)
        }).pipe(Effect.provide(NodeMcpWorkers.layer({ oauth })))
      }
    )

    it.scopedLive("C34, C33: McpClient takes the same OAuth client, run in the calling thread", () =>
      Effect.gen(function* () {
        const server = yield* fixture()
        let asked = 0
        const oauth = provider(({ authorizationUrl }) => Effect.suspend(() => (asked++, follow(authorizationUrl))))
        const client = yield* McpClient.make({ url: server.url }, { oauth })
        assert.strictEqual(structured(yield* client.callTool("inc")).count, 1)
        assert.strictEqual(asked, 1)
        assert.deepInclude(yield* logOf(server), { codes: 1, tokens: 1 })
      })
    )

    it.scopedLive(
      "C58: the resource moves to another authorization server: a 401 reads its metadata again, and the worker registers there, never presenting the first server's client id",
      () => {
        const asked: Array<string> = []
        // No client registered beforehand: the owner registers one with each authorization server (RFC 7591).
        const oauth: NodeMcpWorkers.OAuthProvider = {
          redirectUrl: "http://127.0.0.1:9/callback",
          authorize: ({ authorizationUrl }) =>
            Effect.suspend(() => {
              asked.push(authorizationUrl)
              return follow(authorizationUrl)
            })
        }
        return Effect.gen(function* () {
          const server = yield* fixture()
          const workers = yield* McpWorkers
          const id = yield* workers.open({ url: server.url })
          assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
          const before = yield* logOf(server)
          const first = before.oauth.filter((request) => request.endpoint === "register")
          assert.deepStrictEqual(
            first.map((request) => request.server),
            ["as1"]
          )
          const firstClient = first[0]!.clientId!
          yield* admin(server, "/admin/migrate")
          // The token of the first server is refused outright: the call goes again with one of the second's.
          assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 2)
          const log = yield* logOf(server)
          const registered = log.oauth.filter((request) => request.endpoint === "register")
          assert.deepStrictEqual(
            registered.map((request) => request.server),
            ["as1", "as2"]
          )
          const secondClient = registered[1]!.clientId!
          assert.notStrictEqual(secondClient, firstClient)
          const atSecond = log.oauth.filter((request) => request.server === "as2" && request.endpoint !== "register")
          assert.deepStrictEqual(
            atSecond.map(({ endpoint, clientId, grant }) => ({ endpoint, clientId, grant })),
            [
              { endpoint: "authorize", clientId: secondClient, grant: null },
              { endpoint: "token", clientId: secondClient, grant: "authorization_code" }
            ]
          )
          assert.notInclude(
            log.oauth.filter((request) => request.server === "as2").map((request) => request.clientId),
            firstClient
          )
          // The user was asked once by each authorization server, with the client id that server issued.
          assert.deepStrictEqual(
            asked.map((url) => {
              const parsed = new URL(url)
              return { path: parsed.pathname, client: parsed.searchParams.get("client_id") }
            }),
            [
              { path: "/authorize", client: firstClient },
              { path: "/as2/authorize", client: secondClient }
            ]
          )
          // The refused request never reached the server; the one sent with the new token did, once.
          assert.deepInclude(log, { calls: 2, sessions: 1, registrations: 2 })
          assert.strictEqual(log.unauthorized - before.unauthorized, 1)
          assert.strictEqual(log.requests.at(-1)?.status, 200)
          assert.strictEqual((yield* workers.status(id)).state, "ready")
          assert.strictEqual((yield* workers.close(id)).cleanup?.sessionTerminated, true)
        }).pipe(Effect.provide(NodeMcpWorkers.layer({ oauth })))
      }
    )

    it.scopedLive(
      "C58: a step-up with a refresh token kept: the user is asked again for the union, not refreshed into the old scopes",
      () => {
        const asked: Array<string> = []
        const oauth = provider((request) =>
          Effect.suspend(() => {
            asked.push(new URL(request.authorizationUrl).searchParams.get("scope") ?? "")
            return follow(request.authorizationUrl)
          })
        )
        return Effect.gen(function* () {
          const server = yield* fixture("--scope-tool=inc")
          const workers = yield* McpWorkers
          const id = yield* workers.open({ url: server.url })
          assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
          assert.deepStrictEqual(asked, ["mcp:basic", "mcp:basic mcp:write"])
          const log = yield* logOf(server)
          // Two codes redeemed, no refresh: refreshing could only have brought mcp:basic back.
          assert.deepStrictEqual(
            log.oauth.filter(({ endpoint }) => endpoint === "token").map(({ grant }) => grant),
            ["authorization_code", "authorization_code"]
          )
          assert.strictEqual(log.forbidden, 1)
          assert.strictEqual(log.calls, 1)
        }).pipe(Effect.provide(NodeMcpWorkers.layer({ oauth })))
      }
    )

    it.scopedLive(
      "C34: no authorization within the open's budget, or a refusal: OpenFailed at stage authorization",
      () =>
        Effect.gen(function* () {
          const server = yield* fixture()
          // The budget covers the owner's start and discovery too: 5 s leaves those room on a busy machine, and the
          // user is seen to be asked before it ends.
          let askedAt: number | undefined
          const started = Date.now()
          const never = yield* Effect.flip(
            Effect.flatMap(McpWorkers, (workers) => workers.open({ url: server.url }, { timeout: "5 seconds" })).pipe(
              Effect.provide(
                NodeMcpWorkers.layer({
                  oauth: provider(() =>
                    Effect.zipRight(
                      Effect.sync(() => {
                        askedAt = Date.now()
                      }),
                      Effect.never
                    )
                  )
                })
              )
            )
          )
          assert.isDefined(askedAt)
          assert.isAtLeast(Date.now() - started, 4_900)
          assert.strictEqual(never._tag, "OpenFailed")
          if (never._tag === "OpenFailed") assert.strictEqual(never.stage, "authorization")
          const refused = yield* Effect.flip(
            Effect.flatMap(McpWorkers, (workers) => workers.open({ url: server.url })).pipe(
              Effect.provide(NodeMcpWorkers.layer({ oauth: provider(() => Effect.fail("the user said no")) }))
            )
          )
          assert.strictEqual(refused._tag === "OpenFailed" && refused.stage, "authorization")
          // Without a host client, a server that wants a user's authorization cannot be opened.
          const nobody = yield* Effect.flip(
            Effect.flatMap(McpWorkers, (workers) => workers.open({ url: server.url })).pipe(
              Effect.provide(NodeMcpWorkers.layer())
            )
          )
          assert.strictEqual(nobody._tag === "OpenFailed" && nobody.stage, "authorization")
          const log = yield* logOf(server)
          assert.strictEqual(log.tokens, 0)
          assert.strictEqual(log.sessions, 0)
        })
    )
  })
})

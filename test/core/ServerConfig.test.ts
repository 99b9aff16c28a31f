import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as fc from "fast-check"
import * as util from "node:util"

const canary = "CANARY-7f3a9c"

const environment = { GITHUB_TOKEN: `${canary}-gh`, API_KEY: `${canary}-env`, EMPTY: "" }

const ok = (input: unknown, env: Record<string, string | undefined> = environment) => {
  const result = ServerConfig.normalize(input, env, { isProxy: util.types.isProxy })
  if (Either.isLeft(result)) return assert.fail(`rejected at ${result.left.path}: ${result.left.message}`)
  return result.right
}

const stdio = (input: unknown, env?: Record<string, string | undefined>) => {
  const config = ok(input, env)
  if (config._tag !== "Stdio") return assert.fail("expected a stdio config")
  return config
}

const http = (input: unknown) => {
  const config = ok(input)
  if (config._tag !== "Http") return assert.fail("expected an http config")
  return config
}

const rejected = (
  input: unknown,
  path: string,
  message?: RegExp,
  env: Record<string, string | undefined> = environment
) => {
  const result = ServerConfig.normalize(input, env)
  if (Either.isRight(result)) return assert.fail(`expected a rejection at ${path}`)
  const error = result.left
  assert.strictEqual(error._tag, "InvalidInput")
  assert.strictEqual(error.where, "config")
  assert.strictEqual(error.delivery, "not_sent")
  assert.strictEqual(error.path, path, error.message)
  if (message !== undefined) assert.match(error.message, message)
  assert.notInclude(error.message, canary)
  return error
}

const revealed = (record: Readonly<Record<string, Redacted.Redacted<string>>>) =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [k, Redacted.value(v)]))

// Structural equality with secrets compared by value (two Redacted objects always look alike to deepStrictEqual).
const plain = (config: ServerConfig.ServerConfig) =>
  config._tag === "Stdio" ? { ...config, env: revealed(config.env) } : { ...config, headers: revealed(config.headers) }

const roundTrip = (config: ServerConfig.ServerConfig) => {
  const text = ServerConfig.toWire(config)
  const back = Either.getOrThrow(ServerConfig.fromWire(text))
  assert.deepStrictEqual(plain(back), plain(config))
  assert.deepStrictEqual(
    Object.keys(back._tag === "Stdio" ? back.env : back.headers),
    Object.keys(config._tag === "Stdio" ? config.env : config.headers)
  )
  assert.strictEqual(ServerConfig.toWire(back), text)
  return text
}

describe("ServerConfig", () => {
  describe("accepted shapes", () => {
    it("stdio, every field", () => {
      const config = stdio({
        command: "node",
        args: ["server.js", "--flag", ""],
        env: { API_KEY: "literal" },
        envFrom: ["GITHUB_TOKEN"],
        cwd: "/tmp",
        timeoutMs: 10_000,
        maxResultBytes: 1024,
        protocol: "legacy",
        maxInputRounds: 3
      })
      assert.deepStrictEqual(plain(config), {
        _tag: "Stdio",
        command: "node",
        args: ["server.js", "--flag", ""],
        env: { GITHUB_TOKEN: `${canary}-gh`, API_KEY: "literal" },
        cwd: "/tmp",
        timeoutMs: 10_000,
        maxResultBytes: 1024,
        protocol: "legacy",
        maxInputRounds: 3
      })
      assert.deepStrictEqual(ServerConfig.describe(config), { transport: "stdio" })
    })

    it("stdio, minimal", () => {
      assert.deepStrictEqual(plain(stdio({ command: "server" })), {
        _tag: "Stdio",
        command: "server",
        args: [],
        env: {},
        cwd: undefined,
        timeoutMs: undefined,
        maxResultBytes: undefined,
        protocol: undefined,
        maxInputRounds: undefined
      })
      assert.strictEqual(ServerConfig.maxResultBytesOf(stdio({ command: "server" })), 64 * 1024 * 1024)
    })

    it("http, every field", () => {
      const config = http({
        url: "https://example.com/mcp",
        headers: { Authorization: `Bearer ${canary}` },
        transport: "streamable-http",
        timeoutMs: 5000
      })
      assert.deepStrictEqual(plain(config), {
        _tag: "Http",
        url: "https://example.com/mcp",
        headers: { Authorization: `Bearer ${canary}` },
        auth: undefined,
        transport: "streamable-http",
        timeoutMs: 5000,
        maxResultBytes: undefined,
        protocol: undefined,
        maxInputRounds: undefined
      })
      assert.deepStrictEqual(ServerConfig.describe(config), { transport: "streamable-http" })
      const auto = http({ url: "http://127.0.0.1:8080/mcp" })
      assert.strictEqual(auto.transport, undefined)
      assert.deepStrictEqual(ServerConfig.describe(auto), { transport: "http" })
      assert.deepStrictEqual(ServerConfig.describe(http({ url: "http://h/sse", transport: "sse" })), {
        transport: "sse"
      })
    })

    it("mcpServers entries: stdio, http and sse, editor keys ignored", () => {
      const entry = stdio({
        type: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-everything"],
        env: { DEBUG: "1" },
        cwd: ".",
        disabled: false,
        autoApprove: ["echo"],
        alwaysAllow: [],
        description: "everything",
        name: "everything",
        timeout: 60,
        trust: true,
        includeTools: ["echo"],
        excludeTools: ["add"]
      })
      assert.strictEqual(entry.command, "npx")
      assert.deepStrictEqual(revealed(entry.env), { DEBUG: "1" })
      const streamable = http({ type: "http", url: "https://example.com/mcp", headers: { "X-Key": "k" } })
      assert.strictEqual(streamable.transport, "streamable-http")
      const sse = http({ type: "sse", url: "https://example.com/sse" })
      assert.strictEqual(sse.transport, "sse")
      assert.strictEqual(http({ type: "sse", url: "https://e.com/sse", transport: "sse" }).transport, "sse")
    })

    it("a whole mcpServers document with exactly one entry", () => {
      const config = stdio({ mcpServers: { github: { command: "gh-mcp", envFrom: ["GITHUB_TOKEN"] } } })
      assert.deepStrictEqual(revealed(config.env), { GITHUB_TOKEN: `${canary}-gh` })
      assert.strictEqual(http({ mcpServers: { remote: { type: "sse", url: "https://e.com/sse" } } }).transport, "sse")
      rejected({ mcpServers: {} }, "config.mcpServers", /exactly one/)
      rejected({ mcpServers: { a: { command: "a" }, b: { command: "b" } } }, "config.mcpServers", /exactly one/)
      rejected({ mcpServers: [] }, "config.mcpServers")
      rejected({ mcpServers: { "my server": "cmd" } }, 'config.mcpServers["my server"]', /object/)
      rejected({ mcpServers: { gh: { command: "x", args: [1] } } }, "config.mcpServers.gh.args[0]", /string/)
      rejected({ mcpServers: { gh: { command: "x" } }, globalShortcut: "x" }, "config.globalShortcut")
    })
  })

  describe("rejections, each at its exact path", () => {
    const cases: ReadonlyArray<readonly [string, unknown, string, RegExp?]> = [
      ["not an object", "node server.js", "config", /object/],
      ["an array", [], "config", /object/],
      ["neither command nor url", { args: [] }, "config", /command.*url/],
      ["both command and url", { command: "x", url: "https://e.com" }, "config.url", /command or a url/],
      ["url first, then command", { url: "https://e.com", command: "x" }, "config.url"],
      ["unknown type", { type: "websocket", url: "wss://e.com" }, "config.type", /"stdio", "http" or "sse"/],
      ["type of the wrong kind", { type: 1, command: "x" }, "config.type"],
      ["type stdio with a url", { type: "stdio", url: "https://e.com" }, "config.url", /type "stdio"/],
      ["type stdio without a command", { type: "stdio" }, "config.command", /required/],
      ["type http without a url", { type: "http" }, "config.url", /required/],
      ["type sse with a command", { type: "sse", command: "x", url: "https://e.com" }, "config.command"],
      ["empty command", { command: "" }, "config.command", /empty/],
      ["command not a string", { command: ["node"] }, "config.command", /an array/],
      ["command with NUL", { command: "a\u0000b" }, "config.command", /NUL/],
      ["args not an array", { command: "x", args: "a b" }, "config.args", /array of strings/],
      ["a number in args", { command: "x", args: ["a", 1] }, "config.args[1]", /a number/],
      ["null in args", { command: "x", args: [null] }, "config.args[0]", /null/],
      ["NUL in args", { command: "x", args: ["ok", "a\u0000"] }, "config.args[1]", /NUL/],
      ["env not an object", { command: "x", env: ["A=1"] }, "config.env"],
      ["env value not a string", { command: "x", env: { API_KEY: 1 } }, "config.env.API_KEY", /a number/],
      ["env value NaN", { command: "x", env: { API_KEY: NaN } }, "config.env.API_KEY", /NaN/],
      ["env value undefined", { command: "x", env: { API_KEY: undefined } }, "config.env.API_KEY", /undefined/],
      ["env value with NUL", { command: "x", env: { K: `${canary}\u0000` } }, "config.env.K", /NUL/],
      ["env name with =", { command: "x", env: { "A=B": "v" } }, 'config.env["A=B"]', /name/],
      ["empty env name", { command: "x", env: { "": "v" } }, 'config.env[""]', /name/],
      ["envFrom not an array", { command: "x", envFrom: "API_KEY" }, "config.envFrom"],
      ["envFrom with a number", { command: "x", envFrom: ["API_KEY", 3] }, "config.envFrom[1]"],
      ["envFrom with a bad name", { command: "x", envFrom: ["A=B"] }, "config.envFrom[0]", /name/],
      ["empty cwd", { command: "x", cwd: "" }, "config.cwd", /empty/],
      ["cwd not a string", { command: "x", cwd: 1 }, "config.cwd"],
      ["timeoutMs 0", { command: "x", timeoutMs: 0 }, "config.timeoutMs", /1 to 2147483647/],
      ["timeoutMs negative", { command: "x", timeoutMs: -5 }, "config.timeoutMs"],
      ["timeoutMs fractional", { command: "x", timeoutMs: 1.5 }, "config.timeoutMs"],
      ["timeoutMs too large", { command: "x", timeoutMs: 2147483648 }, "config.timeoutMs"],
      ["timeoutMs a string", { url: "https://e.com", timeoutMs: "1000" }, "config.timeoutMs", /a string/],
      ["timeoutMs NaN", { command: "x", timeoutMs: NaN }, "config.timeoutMs", /NaN/],
      ["timeoutMs Infinity", { command: "x", timeoutMs: Infinity }, "config.timeoutMs", /Infinity/],
      ["maxResultBytes 0", { command: "x", maxResultBytes: 0 }, "config.maxResultBytes", /1 to 524288000/],
      ["maxResultBytes negative", { url: "https://e.com", maxResultBytes: -1 }, "config.maxResultBytes"],
      ["maxResultBytes fractional", { command: "x", maxResultBytes: 1.5 }, "config.maxResultBytes"],
      ["maxResultBytes too large", { command: "x", maxResultBytes: 524288001 }, "config.maxResultBytes"],
      ["maxResultBytes a string", { command: "x", maxResultBytes: "64MB" }, "config.maxResultBytes", /a string/],
      ["unknown key", { command: "x", comand: "y" }, "config.comand", /not a known/],
      ["unknown weird key", { command: "x", "a b": 1 }, 'config["a b"]', /not a known/],
      ["http key on stdio", { command: "x", headers: {} }, "config.headers", /HTTP/],
      ["stdio key on http", { url: "https://e.com", env: {} }, "config.env", /stdio/],
      ["envFrom on http", { url: "https://e.com", envFrom: [] }, "config.envFrom", /stdio/],
      ["relative url", { url: "/mcp" }, "config.url", /absolute/],
      ["ftp url", { url: "ftp://e.com/x" }, "config.url", /ftp:/],
      ["file url", { url: "file:///etc/passwd" }, "config.url", /file:/],
      ["ws url", { url: "ws://e.com/mcp" }, "config.url", /ws:/],
      ["empty url", { url: "" }, "config.url"],
      ["url not a string", { url: { href: "https://e.com" } }, "config.url"],
      ["unknown transport", { url: "https://e.com", transport: "websocket" }, "config.transport"],
      [
        "transport contradicting type",
        { type: "sse", url: "https://e.com", transport: "streamable-http" },
        "config.transport",
        /contradicts/
      ],
      ["headers not an object", { url: "https://e.com", headers: "Authorization: x" }, "config.headers"],
      [
        "header value not a string",
        { url: "https://e.com", headers: { "X-A": true } },
        'config.headers["X-A"]',
        /a boolean/
      ],
      [
        "header value with CRLF",
        { url: "https://e.com", headers: { A: `${canary}\r\nX: y` } },
        "config.headers.A",
        /CR/
      ],
      [
        "header name invalid",
        { url: "https://e.com", headers: { "Bad Name": "v" } },
        'config.headers["Bad Name"]',
        /header name/
      ],
      [
        "header name repeated",
        { url: "https://e.com", headers: { Auth: "a", auth: "b" } },
        "config.headers.auth",
        /repeats/
      ],
      ["a function anywhere", { command: "x", env: { K: () => canary } }, "config.env.K", /a function/],
      ["a Date", { command: "x", timeoutMs: new Date() }, "config.timeoutMs", /a Date instance/],
      [
        "a proxy-free cycle",
        (() => {
          const c: Record<string, unknown> = { command: "x" }
          c.env = { c }
          return c
        })(),
        "config.env.c",
        /cycle/
      ]
    ]
    for (const [name, input, path, message] of cases) {
      it(name, () => {
        rejected(input, path, message)
      })
    }

    it("proxies are rejected when isProxy is given", () => {
      const result = ServerConfig.normalize(
        { command: "x", args: new Proxy([], {}) },
        {},
        { isProxy: util.types.isProxy }
      )
      assert.isTrue(Either.isLeft(result) && result.left.path === "config.args")
    })

    it("no message ever quotes an env or header value", () => {
      const inputs: ReadonlyArray<unknown> = [
        { command: "x", env: { A: canary }, bogus: canary },
        { command: "x", env: { A: canary, B: 7 } },
        { url: canary },
        { url: `ftp://${canary}` },
        { url: "https://e.com", headers: { A: canary, "B C": canary } },
        { url: "https://e.com", headers: { A: canary }, transport: canary },
        { command: canary, url: canary },
        { type: canary, command: "x" }
      ]
      for (const input of inputs) {
        const result = ServerConfig.normalize(input, environment)
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) {
          assert.notInclude(result.left.message, canary)
          assert.notInclude(result.left.path, canary)
        }
      }
    })
  })

  describe("envFrom (C18)", () => {
    it("resolves names from the given environment; env wins for the same name", () => {
      const config = stdio({
        command: "x",
        envFrom: ["GITHUB_TOKEN", "API_KEY", "EMPTY"],
        env: { API_KEY: "explicit" }
      })
      assert.deepStrictEqual(revealed(config.env), { GITHUB_TOKEN: `${canary}-gh`, API_KEY: "explicit", EMPTY: "" })
    })

    it("a missing variable is an InvalidInput naming the variable, never a value", () => {
      const error = rejected({ command: "x", envFrom: ["API_KEY", "NOT_SET_ANYWHERE"] }, "config.envFrom[1]")
      assert.include(error.message, "NOT_SET_ANYWHERE")
      assert.match(error.message, /not set/)
      rejected({ command: "x", envFrom: ["UNDEF"] }, "config.envFrom[0]", /UNDEF/, { UNDEF: undefined })
    })

    it("only own variables count: inherited names such as toString or __proto__ are missing", () => {
      rejected({ command: "x", envFrom: ["toString"] }, "config.envFrom[0]", /toString/)
      rejected({ command: "x", envFrom: ["__proto__"] }, "config.envFrom[0]", /__proto__/)
      rejected({ command: "x", envFrom: ["constructor"] }, "config.envFrom[0]", /constructor/)
    })

    it("works against process.env and leaves it unchanged", () => {
      const name = "MCP_WORKER_TEST_ENVFROM"
      process.env[name] = canary
      try {
        const before = { ...process.env }
        const config = stdio({ command: "x", envFrom: [name], env: { EXTRA: "1" } }, process.env)
        assert.strictEqual(Redacted.value(config.env[name]), canary)
        assert.deepStrictEqual({ ...process.env }, before)
        assert.isUndefined(process.env.EXTRA)
      } finally {
        delete process.env[name]
      }
    })
  })

  describe("secrets (C24)", () => {
    const config = stdio({ command: "x", env: { API_KEY: `${canary}-literal` }, envFrom: ["GITHUB_TOKEN"] })
    const remote = http({ url: "https://e.com", headers: { Authorization: `Bearer ${canary}` } })

    it("env and header values are held in Redacted", () => {
      assert.isTrue(Redacted.isRedacted(config.env.API_KEY))
      assert.strictEqual(String(config.env.API_KEY), "<redacted>")
      assert.strictEqual(Redacted.value(config.env.API_KEY), `${canary}-literal`)
      assert.isTrue(Redacted.isRedacted(remote.headers.Authorization))
    })

    it("printing or serializing a normalized config shows no secret", () => {
      for (const value of [config, remote]) {
        assert.notInclude(JSON.stringify(value), canary)
        assert.notInclude(util.inspect(value, { depth: 10 }), canary)
        assert.notInclude(String(Object.values(value)), canary)
        assert.notInclude(JSON.stringify(ServerConfig.describe(value)), canary)
      }
    })

    it("secretsOf lists every env and header value", () => {
      assert.sameMembers([...ServerConfig.secretsOf(config)], [`${canary}-literal`, `${canary}-gh`])
      assert.sameMembers([...ServerConfig.secretsOf(remote)], [`Bearer ${canary}`])
    })

    it("a __proto__ env name is plain data, nothing is polluted", () => {
      const input = JSON.parse(`{"command":"x","env":{"__proto__":"${canary}"}}`)
      const normalized = stdio(input)
      assert.isTrue(Object.hasOwn(normalized.env, "__proto__"))
      assert.strictEqual(Object.getPrototypeOf(normalized.env), Object.prototype)
      assert.strictEqual(Redacted.value(normalized.env["__proto__"]), canary)
      roundTrip(normalized)
    })
  })

  describe("auth (C34)", () => {
    const authOf = (input: unknown) => {
      const auth = http({ url: "https://e.com/mcp", auth: input }).auth
      if (auth === undefined) return assert.fail("expected an auth")
      return auth
    }

    it("bearer: the token as is or from the caller's environment, held in Redacted", () => {
      const given = authOf({ type: "bearer", token: `${canary}-token` })
      assert.strictEqual(given.type, "bearer")
      if (given.type !== "bearer") return
      assert.isTrue(Redacted.isRedacted(given.token))
      assert.strictEqual(Redacted.value(given.token), `${canary}-token`)
      const fromEnv = authOf({ type: "bearer", token: { env: "API_KEY" } })
      assert.strictEqual(fromEnv.type === "bearer" && Redacted.value(fromEnv.token), `${canary}-env`)
    })

    it("client_credentials: the method follows the secret given, every secret Redacted", () => {
      const basic = authOf({ type: "client_credentials", clientId: "c", clientSecret: { env: "GITHUB_TOKEN" } })
      assert.deepInclude(basic, {
        type: "client_credentials",
        clientId: "c",
        tokenEndpointAuthMethod: "client_secret_basic"
      })
      if (basic.type !== "client_credentials" || basic.clientSecret === undefined) return assert.fail("no secret")
      assert.strictEqual(Redacted.value(basic.clientSecret), `${canary}-gh`)
      const jwt = authOf({ type: "client_credentials", clientId: "c", privateKey: `${canary}-pem`, algorithm: "ES256" })
      assert.deepInclude(jwt, { tokenEndpointAuthMethod: "private_key_jwt", algorithm: "ES256" })
      const post = authOf({
        type: "client_credentials",
        clientId: "c",
        clientSecret: "s",
        scope: "read write",
        tokenEndpointAuthMethod: "client_secret_post"
      })
      assert.deepInclude(post, { tokenEndpointAuthMethod: "client_secret_post", scope: "read write" })
      assert.deepInclude(authOf({ type: "client_credentials", clientId: "c" }), { tokenEndpointAuthMethod: "none" })
    })

    it("secrets never print, are listed by secretsOf and round-trip through the wire form", () => {
      const config = http({
        url: "https://e.com/mcp",
        auth: { type: "client_credentials", clientId: "c", clientSecret: `${canary}-secret`, scope: "s" }
      })
      assert.notInclude(JSON.stringify(config), canary)
      assert.notInclude(util.inspect(config, { depth: 10 }), canary)
      assert.sameMembers([...ServerConfig.secretsOf(config)], [`${canary}-secret`])
      const text = roundTrip(config)
      assert.include(text, `${canary}-secret`)
      const bearer = http({ url: "https://e.com/mcp", auth: { type: "bearer", token: { env: "API_KEY" } } })
      assert.sameMembers([...ServerConfig.secretsOf(bearer)], [`${canary}-env`])
      roundTrip(bearer)
    })

    const cases: ReadonlyArray<readonly [string, unknown, string, RegExp?]> = [
      ["not an object", "token", "config.auth", /object/],
      ["unknown type", { type: "basic" }, "config.auth.type", /"bearer" or "client_credentials"/],
      ["bearer without a token", { type: "bearer" }, "config.auth.token", /required/],
      ["an empty token", { type: "bearer", token: "" }, "config.auth.token", /empty/],
      ["a token with a newline", { type: "bearer", token: `${canary}\n` }, "config.auth.token", /CR, LF/],
      ["a token of the wrong kind", { type: "bearer", token: 3 }, "config.auth.token", /a number/],
      ["an unknown key in { env }", { type: "bearer", token: { name: "X" } }, "config.auth.token.name"],
      ["an unset variable", { type: "bearer", token: { env: "NOPE" } }, "config.auth.token.env", /not set/],
      ["an empty variable", { type: "bearer", token: { env: "EMPTY" } }, "config.auth.token.env", /not set/],
      ["an unknown auth key", { type: "bearer", token: "t", scope: "x" }, "config.auth.scope", /not a known/],
      ["no clientId", { type: "client_credentials" }, "config.auth.clientId", /client id/],
      [
        "a method without its secret",
        { type: "client_credentials", clientId: "c", tokenEndpointAuthMethod: "client_secret_post" },
        "config.auth.clientSecret",
        /required/
      ],
      [
        "private_key_jwt without a key",
        { type: "client_credentials", clientId: "c", clientSecret: "s", tokenEndpointAuthMethod: "private_key_jwt" },
        "config.auth.privateKey",
        /required/
      ],
      [
        "an unknown method",
        { type: "client_credentials", clientId: "c", tokenEndpointAuthMethod: "tls" },
        "config.auth.tokenEndpointAuthMethod"
      ],
      [
        "an unknown algorithm",
        { type: "client_credentials", clientId: "c", privateKey: "k", algorithm: "none" },
        "config.auth.algorithm"
      ],
      ["auth on a stdio server", { command: "x", auth: { type: "bearer", token: "t" } }, "config.auth", /HTTP/]
    ]
    for (const [name, input, path, message] of cases) {
      it(`rejects ${name} at ${path}`, () => {
        const config =
          typeof input === "object" && input !== null && "command" in input
            ? input
            : { url: "https://e.com/mcp", auth: input }
        rejected(config, path, message)
      })
    }
  })

  describe("wire form", () => {
    it("round-trips every shape exactly, secrets wrapped again", () => {
      const configs = [
        stdio({
          command: "node",
          args: ["a", "", "é😀"],
          env: { A: "1", B: "" },
          envFrom: ["GITHUB_TOKEN"],
          cwd: "/w",
          timeoutMs: 1
        }),
        stdio({ command: "node" }),
        http({
          url: "https://e.com/mcp",
          headers: { Authorization: "Bearer x" },
          transport: "sse",
          timeoutMs: 2147483647
        }),
        http({ type: "http", url: "http://localhost:1/x" }),
        http({ url: "http://localhost:1/x" })
      ]
      for (const config of configs) {
        const text = roundTrip(config)
        const back = Either.getOrThrow(ServerConfig.fromWire(text))
        for (const value of Object.values(back._tag === "Stdio" ? back.env : back.headers)) {
          assert.isTrue(Redacted.isRedacted(value))
        }
      }
      // The wire form carries the secrets revealed: it is only for the owner thread.
      assert.include(ServerConfig.toWire(configs[0]), `${canary}-gh`)
    })

    it("a broken wire text is an InvalidInput", () => {
      const broken = ServerConfig.fromWire("{not json")
      assert.isTrue(Either.isLeft(broken) && broken.left.path === "config")
      const wrong = ServerConfig.fromWire(JSON.stringify({ command: "x", envFrom: ["API_KEY"] }))
      assert.isTrue(Either.isLeft(wrong) && wrong.left.path === "config.envFrom[0]")
    })

    const envName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/)
    const text = fc.string({ unit: "grapheme", maxLength: 12 }).filter((s) => !s.includes("\u0000"))
    const validStdio = fc.record(
      {
        command: text.filter((s) => s.length > 0),
        args: fc.array(text, { maxLength: 6 }),
        env: fc.dictionary(fc.oneof(envName, fc.constantFrom("__proto__", "constructor")), text, { maxKeys: 6 }),
        envFrom: fc.uniqueArray(envName, { maxLength: 4 }),
        cwd: text.filter((s) => s.length > 0),
        timeoutMs: fc.integer({ min: 1, max: ServerConfig.maxTimeoutMs }),
        maxResultBytes: fc.integer({ min: 1, max: ServerConfig.maxMaxResultBytes })
      },
      { requiredKeys: ["command"] }
    )

    it.prop(
      "random valid stdio configs normalize and round-trip through the wire",
      [validStdio, fc.dictionary(envName, text)],
      ([input, extraEnvironment]) => {
        const env: Record<string, string> = { ...extraEnvironment }
        for (const name of input.envFrom ?? []) if (!Object.hasOwn(env, name)) env[name] = `value-of-${name}`
        const config = stdio(JSON.parse(JSON.stringify(input)), env)
        assert.strictEqual(config.command, input.command)
        assert.deepStrictEqual(config.args, input.args ?? [])
        assert.strictEqual(config.cwd, input.cwd)
        assert.strictEqual(config.timeoutMs, input.timeoutMs)
        assert.strictEqual(config.maxResultBytes, input.maxResultBytes)
        const expectedEnv: Record<string, string> = {}
        for (const name of input.envFrom ?? []) expectedEnv[name] = env[name]
        const explicit = input.env === undefined ? {} : JSON.parse(JSON.stringify(input.env))
        for (const name of Object.keys(explicit)) {
          Object.defineProperty(expectedEnv, name, {
            value: explicit[name],
            enumerable: true,
            writable: true,
            configurable: true
          })
        }
        assert.deepStrictEqual(revealed(config.env), Object.fromEntries(Object.entries(expectedEnv)))
        roundTrip(config)
      },
      // CPU-bound: on a machine whose cores are busy it takes several times its quiet ≈ 5 s.
      { fastCheck: { numRuns: 2_000 }, timeout: 120_000 }
    )

    // One line of text, as a header or a token endpoint takes it. Marked, so that no field the config prints in the
    // clear (its url, its tag, a scope) can hold the same text by chance and read as a leak.
    const secretText = text.filter((s) => !/[\r\n\u0000]/.test(s)).map((s) => `secret:${s}`)
    const validAuth = fc.oneof(
      fc.record({ type: fc.constant("bearer" as const), token: secretText }),
      fc
        .record(
          {
            type: fc.constant("client_credentials" as const),
            clientId: text.filter((s) => s.length > 0),
            clientSecret: secretText,
            scope: text.filter((s) => s.length > 0),
            tokenEndpointAuthMethod: fc.constantFrom("client_secret_basic" as const, "client_secret_post" as const)
          },
          { requiredKeys: ["type", "clientId", "clientSecret"] }
        )
        .filter((auth) => auth.clientSecret !== auth.clientId && auth.clientSecret !== auth.scope)
    )

    it.prop(
      "C34: random valid auth configs normalize, hold every secret Redacted and round-trip through the wire",
      [validAuth],
      ([auth]) => {
        const config = http({ url: "https://e.com/mcp", auth: JSON.parse(JSON.stringify(auth)) })
        const secrets = auth.type === "bearer" ? [auth.token] : [auth.clientSecret]
        assert.sameMembers([...ServerConfig.secretsOf(config)], secrets)
        for (const secret of secrets) assert.notInclude(util.inspect(config, { depth: 10 }), `'${secret}'`)
        const back = Either.getOrThrow(ServerConfig.fromWire(ServerConfig.toWire(config)))
        assert.strictEqual(ServerConfig.toWire(back), ServerConfig.toWire(config))
        assert.sameMembers([...ServerConfig.secretsOf(back)], secrets)
      },
      { fastCheck: { numRuns: 500 } }
    )
  })
})

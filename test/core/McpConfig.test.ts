import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as fc from "fast-check"
import * as Jsonc from "../../packages/core/src/internal/config/jsonc.js"

const canary = "CANARY-51d2e0"

const environment = { GITHUB_TOKEN: `${canary}-gh`, API_KEY: `${canary}-key`, HOME: "/home/me" }

const read = (content: unknown, format: McpConfig.Format): McpConfig.Document => {
  const result = McpConfig.read(content, format)
  if (Either.isLeft(result)) return assert.fail(`rejected at ${result.left.path}: ${result.left.message}`)
  return result.right
}

const rejected = (content: unknown, format: McpConfig.Format, path: string, message?: RegExp) => {
  const result = McpConfig.read(content, format)
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

// Typed loosely: each test knows which kind of entry it resolves.
const resolved = (
  document: McpConfig.Document,
  name: string,
  options?: McpConfig.ResolveOptions
): Record<string, any> => {
  const result = McpConfig.resolve(document, name, options)
  if (Either.isLeft(result)) return assert.fail(`rejected at ${result.left.path}: ${result.left.message}`)
  return result.right
}

const unresolved = (document: McpConfig.Document, name: string, path: string, options?: McpConfig.ResolveOptions) => {
  const result = McpConfig.resolve(document, name, options)
  if (Either.isRight(result)) return assert.fail(`expected a rejection at ${path}`)
  assert.strictEqual(result.left.path, path, result.left.message)
  assert.notInclude(result.left.message, canary)
  return result.left
}

describe("McpConfig readers", () => {
  it("reads Claude Desktop's file: its settings ignored, strings taken literally", () => {
    const text = JSON.stringify({
      globalShortcut: "Ctrl+Space",
      mcpServers: {
        filesystem: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/work"] },
        "My GitHub": { command: "gh-mcp", env: { GITHUB_TOKEN: "literal" } }
      }
    })
    const document = read(text, "claude-desktop")
    assert.deepStrictEqual(Object.keys(document.servers), ["filesystem", "my_github"])
    assert.deepStrictEqual(document.paths, {
      filesystem: "mcpServers.filesystem",
      my_github: 'mcpServers["My GitHub"]'
    })
    // Claude Desktop does not expand references: the argument reaches the server as written.
    assert.deepStrictEqual(resolved(document, "filesystem", { environment }), {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/work"]
    })
    assert.deepStrictEqual(resolved(document, "my_github"), { command: "gh-mcp", env: { GITHUB_TOKEN: "literal" } })
  })

  it("reads Cursor's file: ${env:…} kept as a reference until the entry is resolved", () => {
    const document = read(
      {
        mcpServers: {
          github: {
            command: "docker",
            args: ["run", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server"],
            env: { GITHUB_TOKEN: "${env:GITHUB_TOKEN}" }
          },
          remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${env:API_KEY}" } },
          home: { command: "${userHome}${/}bin${pathSeparator}tool", cwd: "${workspaceFolder}" }
        }
      },
      "cursor"
    )
    assert.notInclude(JSON.stringify(document), canary)
    assert.strictEqual(
      (document.servers.github as ServerConfig.StdioConfigInput).env?.GITHUB_TOKEN,
      "${env:GITHUB_TOKEN}"
    )
    assert.deepStrictEqual(resolved(document, "github", { environment }), {
      command: "docker",
      args: ["run", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server"],
      env: { GITHUB_TOKEN: environment.GITHUB_TOKEN }
    })
    assert.deepStrictEqual(resolved(document, "remote", { environment }), {
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: `Bearer ${environment.API_KEY}` }
    })
    assert.deepStrictEqual(
      resolved(document, "home", { variables: { userHome: "/home/me", workspaceFolder: "/work/project" } }),
      { command: "/home/me/bin/tool", cwd: "/work/project" }
    )
    const missing = unresolved(document, "github", "mcpServers.github.env.GITHUB_TOKEN", { environment: {} })
    assert.match(missing.message, /GITHUB_TOKEN.*not set/)
    unresolved(document, "home", "mcpServers.home.command", { variables: {} })
  })

  it("the resolved config goes through ServerConfig.normalize, secrets in Redacted", () => {
    const document = read(
      { mcpServers: { remote: { url: "https://x.example/mcp", headers: { "X-Key": "${env:API_KEY}" } } } },
      "cursor"
    )
    const config = Either.getOrThrow(ServerConfig.normalize(resolved(document, "remote", { environment }), {}))
    assert.strictEqual(config._tag, "Http")
    if (config._tag !== "Http") return
    assert.isTrue(Redacted.isRedacted(config.headers["X-Key"]))
    assert.strictEqual(Redacted.value(config.headers["X-Key"]), environment.API_KEY)
    assert.notInclude(String(config.headers["X-Key"]), canary)
  })

  it("reads VS Code's mcp.json: comments, trailing commas, inputs, types", () => {
    const text = `{
      // Inputs are asked for by the editor; here the caller gives them.
      "inputs": [
        { "type": "promptString", "id": "api-key", "description": "API key", "password": true },
        { "type": "promptString", "id": "region", "default": "eu" },
      ],
      "servers": {
        /* a local one */
        "Fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "dev": { "watch": "src/**" } },
        "remote": { "type": "http", "url": "https://\${input:region}.example.com/mcp", "headers": { "Authorization": "Bearer \${input:api-key}" } },
        "legacy": { "type": "sse", "url": "https://old.example.com/sse" },
      },
    }`
    const document = read(text, "vscode")
    assert.deepStrictEqual(Object.keys(document.servers), ["fetch", "remote", "legacy"])
    assert.deepStrictEqual(document.inputs?.["api-key"], { description: "API key", default: undefined, password: true })
    // `dev` is the editor's own (restart on change): left out.
    assert.deepStrictEqual(resolved(document, "fetch"), { type: "stdio", command: "uvx", args: ["mcp-server-fetch"] })
    assert.deepStrictEqual(resolved(document, "remote", { inputs: { "api-key": Redacted.make(`${canary}-input`) } }), {
      type: "http",
      url: "https://eu.example.com/mcp",
      headers: { Authorization: `Bearer ${canary}-input` }
    })
    unresolved(document, "remote", "servers.remote.headers.Authorization")
    const legacy = Either.getOrThrow(ServerConfig.normalize(resolved(document, "legacy"), {}))
    assert.strictEqual(legacy._tag === "Http" ? legacy.transport : undefined, "sse")
  })

  it("reads a project .mcp.json: ${NAME} and ${NAME:-default}", () => {
    const document = read(
      JSON.stringify({
        mcpServers: {
          api: { type: "http", url: "${API_BASE:-https://api.example.com}/mcp", headers: { "X-Key": "${API_KEY}" } },
          tool: { type: "stdio", command: "tool", args: ["--home", "${HOME}"] }
        }
      }),
      "mcp-json"
    )
    assert.deepStrictEqual(resolved(document, "api", { environment }), {
      type: "http",
      url: "https://api.example.com/mcp",
      headers: { "X-Key": environment.API_KEY }
    })
    assert.deepStrictEqual(
      resolved(document, "api", { environment: { ...environment, API_BASE: "http://localhost:9" } }).url,
      "http://localhost:9/mcp"
    )
    assert.deepStrictEqual(resolved(document, "tool", { environment }).args, ["--home", "/home/me"])
  })

  it("a document written by hand: references in the document's own form, ${$} a literal $", () => {
    const document = Either.getOrThrow(
      McpConfig.make({
        servers: { a: { command: "x", args: ["${$}{not a reference}", "${env:HOME}", "${env:NOPE:-fallback}"] } }
      })
    )
    assert.deepStrictEqual(resolved(document, "a", { environment }).args, [
      "${not a reference}",
      "/home/me",
      "fallback"
    ])
  })

  it("leaves disabled entries out", () => {
    const document = read({ mcpServers: { on: { command: "a" }, off: { command: "b", disabled: true } } }, "cursor")
    assert.deepStrictEqual(Object.keys(document.servers), ["on"])
    rejected(
      { mcpServers: { off: { command: "b", disabled: true } } },
      "cursor",
      "mcpServers",
      /no server that is not disabled/
    )
  })

  it("normalizes names: case, punctuation and a leading digit", () => {
    assert.strictEqual(McpConfig.normalizeName("My-Server"), "my_server")
    assert.strictEqual(McpConfig.normalizeName("  GitHub (work)  "), "github_work")
    assert.strictEqual(McpConfig.normalizeName("1password"), "_1password")
    assert.strictEqual(McpConfig.normalizeName("Ｆｕｌｌ"), "full")
    assert.strictEqual(McpConfig.normalizeName("---"), "")
  })
})

describe("McpConfig refusals", () => {
  it("an unknown entry key, with its path", () => {
    rejected(
      { mcpServers: { github: { command: "x", colour: "red" } } },
      "cursor",
      "mcpServers.github.colour",
      /not a known config key/
    )
  })

  it("an entry with neither command nor url", () => {
    rejected({ mcpServers: { github: { args: ["x"] } } }, "claude-desktop", "mcpServers.github", /needs a command/)
  })

  it("a wrong value, with its path", () => {
    rejected({ mcpServers: { github: { command: 7 } } }, "cursor", "mcpServers.github.command")
    rejected({ mcpServers: { github: { command: "x", args: ["a", 1] } } }, "cursor", "mcpServers.github.args[1]")
    rejected({ servers: { web: { type: "http", url: "ftp://x" } } }, "vscode", "servers.web.url")
    rejected({ mcpServers: { github: "npx x" } }, "cursor", "mcpServers.github", /must be an object/)
  })

  it("a document of zero entries", () => {
    rejected({ mcpServers: {} }, "claude-desktop", "mcpServers", /holds no server/)
    rejected("{}", "cursor", "mcpServers", /is required/)
    rejected("[]", "cursor", "", /must be an object/)
  })

  it("names that collide once normalized", () => {
    const error = rejected(
      { mcpServers: { GitHub: { command: "a" }, github: { command: "b" } } },
      "cursor",
      "mcpServers.github",
      /same server name as "GitHub"/
    )
    assert.include(error.message, '"github"')
    rejected(
      { mcpServers: { "my-server": { command: "a" }, my_server: { command: "b" } } },
      "cursor",
      "mcpServers.my_server"
    )
    rejected({ mcpServers: { "!!!": { command: "a" } } }, "cursor", 'mcpServers["!!!"]', /no letter or digit/)
  })

  it("syntax errors say where, and never quote the file", () => {
    const error = rejected(
      `{\n  "mcpServers": {\n    "a": { "command": "${canary}" ,, }\n  }\n}`,
      "cursor",
      "",
      /line 3, column/
    )
    assert.notInclude(error.message, canary)
    rejected(`{ "mcpServers": { "a": { "command": "x" }, } }`, "cursor", "", /trailing comma/)
    rejected(`{ "servers": { "a": { "command": "x" } } /* open`, "vscode", "", /comment is not closed/)
    rejected(`{ "mcpServers": { "a": { "command": "x" }, "a": { "command": "y" } } }`, "cursor", "", /repeated/)
    rejected(`// comment\n{}`, "mcp-json", "", /comments and trailing commas are not allowed/)
  })

  it("references the format does not have", () => {
    rejected(
      { mcpServers: { a: { command: "x", args: ["${config:editor.x}"] } } },
      "cursor",
      "mcpServers.a.args[0]",
      /does not define/
    )
    rejected({ mcpServers: { a: { command: "x", args: ["${input:key}"] } } }, "cursor", "mcpServers.a.args[0]")
    rejected(
      { servers: { a: { command: "x", args: ["${input:key}"] } } },
      "vscode",
      "servers.a.args[0]",
      /do not declare/
    )
    rejected(
      { mcpServers: { a: { command: "x", args: ["${not closed"] } } },
      "mcp-json",
      "mcpServers.a.args[0]",
      /not closed/
    )
    rejected({ mcpServers: { a: { command: "x", env: { K: "${1BAD}" } } } }, "mcp-json", "mcpServers.a.env.K")
  })

  it("keys of a format that mcp-worker cannot honour are refused, not ignored", () => {
    rejected(
      { mcpServers: { a: { command: "x", envFile: ".env" } } },
      "cursor",
      "mcpServers.a.envFile",
      /not supported/
    )
    rejected(
      { servers: { a: { command: "x", sandboxEnabled: true } } },
      "vscode",
      "servers.a.sandboxEnabled",
      /sandbox/
    )
    rejected({ mcpServers: { a: { url: "https://x", headersHelper: "x" } } }, "mcp-json", "mcpServers.a.headersHelper")
  })

  it("the wrong servers key for the format", () => {
    rejected({ mcpServers: { a: { command: "x" } } }, "vscode", "mcpServers", /reads servers/)
    rejected({ servers: { a: { command: "x" } } }, "cursor", "servers", /reads mcpServers/)
    rejected({ mcpServers: { a: { command: "x" } }, extra: 1 }, "cursor", "extra")
  })

  it("a reference is checked with its value when resolved", () => {
    const document = read({ mcpServers: { a: { url: "${env:URL}" } } }, "cursor")
    unresolved(document, "a", "mcpServers.a.url", { environment: {} })
    assert.deepStrictEqual(resolved(document, "a", { environment: { URL: "https://x.example" } }), {
      url: "https://x.example"
    })
  })
})

// Names whose normalized forms are distinct identifiers, so the expected keys are known.
const name = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/)
const text = fc.string({ maxLength: 12 }).filter((s) => !s.includes("\u0000") && !s.includes("$"))
const envName = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,6}$/)

const stdioEntry = fc.record(
  {
    command: text.filter((s) => s.length > 0),
    args: fc.array(text, { maxLength: 3 }),
    env: fc.dictionary(envName, text, { maxKeys: 3 }),
    cwd: text.filter((s) => s.length > 0)
  },
  { requiredKeys: ["command"] }
)

const httpEntry = fc.record(
  {
    url: fc.webUrl({ validSchemes: ["http", "https"] }),
    headers: fc.dictionary(
      fc.stringMatching(/^X-[a-z]{1,6}$/),
      text.filter((s) => !/[\r\n]/.test(s)),
      {
        maxKeys: 3
      }
    )
  },
  { requiredKeys: ["url"] }
)

const entries = fc.uniqueArray(fc.tuple(name, fc.oneof(stdioEntry, httpEntry)), {
  minLength: 1,
  maxLength: 5,
  selector: ([key]) => key
})

const formats: ReadonlyArray<McpConfig.Format> = ["claude-desktop", "cursor", "vscode", "mcp-json"]

describe("McpConfig properties", () => {
  it("generated documents read back to the configs they hold, in every format", () => {
    fc.assert(
      fc.property(entries, fc.constantFrom(...formats), fc.boolean(), (list, format, asText) => {
        const servers = Object.fromEntries(list)
        const file = format === "vscode" ? { servers } : { mcpServers: servers }
        const document = read(asText ? JSON.stringify(file, null, 2) : file, format)
        assert.deepStrictEqual(Object.keys(document.servers), Object.keys(servers))
        for (const key of Object.keys(servers)) assert.deepStrictEqual(resolved(document, key), servers[key])
      }),
      { numRuns: 300 }
    )
  })

  it("references resolve to the caller's values, and the document never holds them", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          envName,
          fc.string({ maxLength: 8 }).filter((s) => !s.includes("\u0000")),
          { minKeys: 1, maxKeys: 4 }
        ),
        (values) => {
          const names = Object.keys(values)
          const env = Object.fromEntries(names.map((n) => [n, `\${env:${n}}`]))
          const document = read(
            { mcpServers: { s: { command: "x", args: names.map((n) => `-${"${env:" + n + "}"}-`), env } } },
            "cursor"
          )
          const secrets = Object.fromEntries(names.map((n) => [n, `${canary}${values[n]}`]))
          assert.notInclude(JSON.stringify(document), canary)
          const config = resolved(document, "s", { environment: secrets }) as ServerConfig.StdioConfigInput
          assert.deepStrictEqual(config.env, secrets)
          assert.deepStrictEqual(
            config.args,
            names.map((n) => `-${secrets[n]}-`)
          )
        }
      )
    )
  })

  it("junk never throws: it reads, or it is refused with a path", () => {
    const junkEntry = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.dictionary(
        fc.constantFrom("command", "url", "args", "env", "headers", "type", "cwd", "disabled", "envFile"),
        fc.jsonValue({ maxDepth: 2 })
      )
    )
    const junk = fc.oneof(
      fc.string(),
      fc.jsonValue({ maxDepth: 4 }),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.dictionary(fc.string({ maxLength: 6 }), junkEntry).map((servers) => ({ mcpServers: servers })),
      fc.dictionary(fc.string({ maxLength: 6 }), junkEntry).map((servers) => ({ servers, inputs: [] })),
      fc.string().map((s) => `{"mcpServers": {"a": {"command": "x", "args": [${JSON.stringify(s)}]}} ${s}`)
    )
    fc.assert(
      fc.property(junk, fc.constantFrom(...formats), (content, format) => {
        const result = McpConfig.read(content, format)
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "InvalidInput")
          assert.isString(result.left.path)
          assert.isAbove(result.left.message.length, 0)
        } else {
          for (const key of Object.keys(result.right.servers)) {
            assert.match(key, /^[a-z0-9_]+$/)
            McpConfig.resolve(result.right, key, { environment: {} })
          }
        }
      }),
      { numRuns: 500 }
    )
  })

  it("JSON text parses as JSON.parse would, also pretty-printed with comments and trailing commas", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const printed = JSON.stringify(value, null, 2)
        const expected = JSON.parse(printed)
        assert.deepStrictEqual(Either.getOrThrow(Jsonc.parse(printed, { comments: false })), expected)
        // A comment at the end of every line and a comma before every closing bracket: JSONC, same value.
        const comment = (text: string) => text.replaceAll("\n", " // note\n") + " /* end */"
        const trailing = printed.replaceAll(/([^[{,\s])(\s*\n\s*)([\]}])/g, "$1,$2$3")
        assert.deepStrictEqual(Either.getOrThrow(Jsonc.parse(comment(printed), { comments: true })), expected)
        assert.deepStrictEqual(Either.getOrThrow(Jsonc.parse(comment(trailing), { comments: true })), expected)
        if (trailing !== printed) assert.isTrue(Either.isLeft(Jsonc.parse(trailing, { comments: false })))
      })
    )
  })
})

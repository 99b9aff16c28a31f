// What the install test needs from the repository as a user would meet it: the README's install commands and first
// programs (read from the README itself, never copied), the packed tarballs, and new projects outside the repository.
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../..", import.meta.url))

export const readJson = (file: string): any => JSON.parse(Fs.readFileSync(file, "utf8"))

/** An install command as the README labels it. */
export type Command = "Effect 3" | "Effect 4" | "across machines"

/** A first program as the README names it in its first line. */
export type Program = "Effect 3" | "no Effect" | "Effect 4" | "cluster"

const installSection = (): string => {
  const readme = Fs.readFileSync(Path.join(root, "README.md"), "utf8")
  const start = readme.indexOf("\n## Install\n")
  if (start === -1) throw new Error("README.md has no Install section")
  const end = readme.indexOf("\n## ", start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
}

const blocks = (section: string, language: string): Array<string> =>
  [...section.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((match) => match[1]!)

// A command's label is its comment up to the first "(", ":" or ",": "# Effect 4 (Node >= 22.19): …" → "Effect 4".
const labelOf = (comment: string): string => comment.replace(/^#\s*/, "").split(/[(:,]/)[0]!.trim()

/** The README's Install section's commands block. */
export const readmeCommandsBlock = (): string => blocks(installSection(), "sh")[0]!

/** The README's install command of each face, as arguments after `npm`. */
export const readmeCommands = (): Record<string, Array<string>> => {
  const commands: Record<string, Array<string>> = {}
  let label: string | undefined
  for (const line of readmeCommandsBlock().split("\n")) {
    if (line.startsWith("#")) label = labelOf(line)
    else if (line.startsWith("npm install ") && label !== undefined) commands[label] = line.trim().split(/\s+/).slice(1)
  }
  return commands
}

/** The README's first program of each face, keyed by its first line (`// Effect 3`). */
export const readmePrograms = (): Record<string, string> =>
  Object.fromEntries(blocks(installSection(), "js").map((code) => [code.split("\n")[0]!.replace(/^\/\/\s*/, ""), code]))

/** `name@range` → [name, range]; a scoped name keeps its leading `@`. */
export const splitSpec = (spec: string): [string, string | undefined] => {
  const at = spec.indexOf("@", 1)
  return at === -1 ? [spec, undefined] : [spec.slice(0, at), spec.slice(at + 1)]
}

export interface Run {
  readonly stdout: string
  readonly stderr: string
}

/** Runs a program to its end; a failure, or not ending within `timeoutMs`, is a defect that shows its output. */
export const run = (
  file: string,
  args: ReadonlyArray<string>,
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }
): Effect.Effect<Run> =>
  Effect.async<Run, Error>((resume) => {
    const child = execFile(
      file,
      args,
      { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resume(
          error === null
            ? Effect.succeed({ stdout, stderr })
            : Effect.fail(
                new Error(`${file} ${args.join(" ")} in ${options.cwd}: ${error.message}\n${stdout}\n${stderr}`)
              )
        )
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  }).pipe(Effect.orDie)

const writable = (dir: string, on: boolean) => {
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = Path.join(entry.parentPath ?? (entry as any).path, entry.name)
    if (entry.isSymbolicLink()) continue
    Fs.chmodSync(file, on ? Fs.statSync(file).mode | 0o200 : Fs.statSync(file).mode & ~0o222)
  }
  Fs.chmodSync(dir, on ? Fs.statSync(dir).mode | 0o200 : Fs.statSync(dir).mode & ~0o222)
}

/** `chmod -R a-w` of a tree, given back (`u+w`) when the scope closes, so that it can be removed. */
export const readOnly = (dir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => writable(dir, false)),
    () => Effect.sync(() => writable(dir, true))
  )

/** Every file of a tree with its size and modification time: equal before and after means nothing was written. */
export const snapshot = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => {
      const stat = Fs.lstatSync(Path.join(dir, name))
      return `${name} ${stat.size} ${stat.mtimeMs}`
    })
    .sort()

/** A new directory outside the repository, removed (writable again first) when the scope closes. */
export const temporaryDirectory = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))),
    (dir) =>
      Effect.sync(() => {
        writable(dir, true)
        Fs.rmSync(dir, { recursive: true, force: true })
      })
  )

/** Processes whose command line names `dir`: a server or a program of the test's project still running. */
export const processesUnder = (dir: string): Array<string> => {
  const found: Array<string> = []
  for (const entry of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (/\) Z /.test(Fs.readFileSync(`/proc/${entry}/stat`, "utf8"))) continue
      const cmdline = Fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")
      if (cmdline.includes(dir)) found.push(`${entry}: ${cmdline}`)
    } catch {
      // ended while we looked
    }
  }
  return found
}

/** How a README block is checked, as the HTML comment before it says (`<!-- readme: run Effect 3 -->`). */
export type Check =
  | { readonly _tag: "run"; readonly face: string }
  | { readonly _tag: "typecheck" }
  | { readonly _tag: "install" }
  | { readonly _tag: "shell" }
  | { readonly _tag: "output" }
  | { readonly _tag: "fragment"; readonly of: string; readonly given: string }

// What a README fragment is part of, and the program it is compiled in: its imports first, then what the program
// would have defined before it (`given`), then its own lines inside the program's body.
const fragmentPrograms: Record<string, (body: string) => string> = {
  "an Effect 3 program": (body) =>
    [
      'import { Config, Effect, Either, LogLevel, Stream } from "effect"',
      'import * as McpConfig from "@mcp-worker/core/McpConfig"',
      'import { McpWorkers } from "@mcp-worker/core/McpWorkers"',
      'import * as OpenAll from "@mcp-worker/core/OpenAll"',
      'import * as McpGrants from "@mcp-worker/node/McpGrants"',
      'import { NodeMcpWorkers } from "@mcp-worker/node"',
      'import * as fs from "node:fs"',
      "export const fragment = Effect.gen(function* () {",
      "  const workers = yield* McpWorkers",
      body,
      "})"
    ].join("\n"),
  "a Promise client program": (body) =>
    [
      'import * as ResultFile from "@mcp-worker/core/ResultFile"',
      'import { makePromiseClient } from "@mcp-worker/node/PromiseClient"',
      'import type { PromiseClient } from "@mcp-worker/node/PromiseClient"',
      'import * as fs from "node:fs"',
      "declare const mcp: PromiseClient",
      "export const fragment = async () => {",
      body,
      "}"
    ].join("\n")
}

const fragmentKinds = Object.keys(fragmentPrograms)

/** A README fragment as a whole program: what the type-check of the README compiles for it. */
export const fragmentProgram = (block: Block): string => {
  if (block.check?._tag !== "fragment") throw new Error(`README line ${block.line} is not a fragment`)
  const lines = block.code.split("\n")
  const imports = lines.filter((line) => line.startsWith("import "))
  const body = lines.filter((line) => !line.startsWith("import ")).join("\n")
  const program = fragmentPrograms[block.check.of]!(body).split("\n")
  // Its own imports first (they may name what the program's imports name too: theirs win).
  const programImports = program.filter(
    (line) => line.startsWith("import ") && !imports.some((own) => sameBinding(own, line))
  )
  const rest = program.filter((line) => !line.startsWith("import "))
  return [...imports, ...programImports, block.check.given, ...rest].join("\n")
}

const bindingsOf = (line: string): Array<string> =>
  (/import\s+(?:type\s+)?(.*?)\s+from/.exec(line)?.[1] ?? "")
    .replace(/[{}]/g, "")
    .split(",")
    .map((name) =>
      name
        .trim()
        .replace(/^type\s+/, "")
        .replace(/^\*\s+as\s+/, "")
        .split(/\s+as\s+/)
        .pop()!
    )
    .filter((name) => name !== "")

const sameBinding = (a: string, b: string): boolean => bindingsOf(a).some((name) => bindingsOf(b).includes(name))

/** A fenced block of the README, with its section (the `## ` heading above it) and its check. */
export interface Block {
  readonly line: number
  readonly section: string
  readonly language: string
  readonly code: string
  readonly check: Check | undefined
  readonly marker: string | undefined
}

const checkOf = (marker: string): Check | undefined => {
  // A fragment may name what it uses and does not define: `fragment of … ; given: declare const id: string`.
  const [head, given] = marker.split(/;\s*given:/, 2) as [string, string | undefined]
  const [kind, ...rest] = head.trim().split(/\s+/)
  const argument = rest.join(" ")
  if (kind === "run" && argument !== "") return { _tag: "run", face: argument }
  if (kind === "fragment" && rest[0] === "of" && fragmentKinds.includes(rest.slice(1).join(" ")))
    return { _tag: "fragment", of: rest.slice(1).join(" "), given: given?.trim() ?? "" }
  if (given !== undefined) return undefined
  if ((kind === "typecheck" || kind === "install" || kind === "shell" || kind === "output") && argument === "") {
    return { _tag: kind }
  }
  return undefined
}

/** Every fenced block of README.md, in order: the one extractor the README's checks read. */
export const readmeBlocks = (text = Fs.readFileSync(Path.join(root, "README.md"), "utf8")): Array<Block> => {
  const lines = text.split("\n")
  const found: Array<Block> = []
  let section = ""
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.startsWith("## ")) section = line.slice(3).trim()
    const fence = /^```(\S*)$/.exec(line)
    if (fence === null) continue
    const end = lines.indexOf("```", i + 1)
    const marker = /^<!-- readme: (.*) -->$/.exec(lines[i - 1] ?? "")?.[1]
    found.push({
      line: i + 1,
      section,
      language: fence[1]!,
      code: lines.slice(i + 1, end).join("\n") + "\n",
      marker,
      check: marker === undefined ? undefined : checkOf(marker)
    })
    i = end
  }
  return found
}

/** The `npm install` lines of a README `install` block, each as arguments after `npm`. */
export const installLines = (code: string): Array<Array<string>> =>
  code
    .split("\n")
    .filter((line) => line.startsWith("npm install "))
    .map((line) => line.trim().split(/\s+/).slice(1))

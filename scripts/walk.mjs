// `npm run walk`: which of this project's source files run code on every `callTool`, measured rather than read. Four
// paths: a remote thread's call (the Effect face, `NodeMcpWorkers.layerRemote`, and the Effect-free client) and a
// sandbox process's call over the listener's socket, by grant (`NodeMcpWorkers.layerConnect`, and the client with
// `connect`). V8 precise coverage with call counts runs in every thread and process on the path (scripts/walk/);
// a file counts when one of its functions ran once per call over `calls` calls after `warmup` (net of an idle window
// of the same length, in each of `rounds` rounds), mapped back to packages/*/src through each bundle's source map (the owner's own, as shipped).
// Each file is listed with the threads it ran in (`caller`, `host`, `owner`); `--functions` lists its functions.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { fileURLToPath, pathToFileURL } from "node:url"
import { SourceMapConsumer } from "source-map"
import { bundleHost } from "./bundle.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const warmup = 20
const calls = 20
const rounds = 2
// No optimizing tier: a function the optimizer inlines (`ok` of caller/McpWorkerError.ts, after some hundred calls)
// stops counting its calls. The host passes them on to the caller's process; its threads share its V8.
const v8Flags = ["--no-opt", "--no-maglev"]
// Longer than the owner's batching of its counts for the host (`observeEveryMs` in node/internal/thread/owner.ts).
const settleMs = 1000
const paths = [
  { name: "remote thread, Effect face (layerRemote)", plane: "thread", variant: "effect" },
  { name: "remote thread, Effect-free client (makeClient)", plane: "thread", variant: "caller" },
  { name: "sandbox process over the socket, Effect face (layerConnect)", plane: "process", variant: "effect" },
  {
    name: "sandbox process over the socket, Effect-free client (makeClient({ connect }))",
    plane: "process",
    variant: "caller"
  }
]

// The fixtures' helpers find the fixture bundles from their own module: in a bundle elsewhere, from their real place.
const fixturesInPlace = {
  name: "walk-fixtures-in-place",
  setup(build) {
    build.onLoad({ filter: /test[\\/]fixtures[\\/]servers\.ts$/ }, (args) => ({
      contents: fs
        .readFileSync(args.path, "utf8")
        .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
      loader: "ts"
    }))
  }
}

/** A script's text, line starts and source map, read once. */
const loadScript = (url) => {
  const file = fileURLToPath(url)
  const text = fs.readFileSync(file, "utf8")
  const lineStarts = [0]
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1)
  const mapName = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1]
  const mapFile = mapName === undefined ? undefined : path.resolve(path.dirname(file), mapName)
  const consumer =
    mapFile === undefined ? undefined : new SourceMapConsumer(JSON.parse(fs.readFileSync(mapFile, "utf8")))
  return { file, lineStarts, mapFile, consumer }
}

const lineOf = (lineStarts, offset) => {
  let low = 0
  let high = lineStarts.length - 1
  while (low < high) {
    const middle = (low + high + 1) >> 1
    if (lineStarts[middle] <= offset) low = middle
    else high = middle - 1
  }
  return low
}

/** Where a function's start comes from: `{ ours }` (`<package>/<path under src>`), `{ dependency }`, or `{}`. */
const sourceOf = (script, offset) => {
  if (offset === null) return { dependency: "(not in its file)" }
  if (script.consumer === undefined) return { dependency: "(no source map)" }
  const line = lineOf(script.lineStarts, offset)
  const position = { line: line + 1, column: offset - script.lineStarts[line] }
  const { source } = script.consumer.originalPositionFor(position)
  // The owner's map keeps only positions in this project's sources: the rest is its dependencies.
  if (source === null) return { dependency: "(the owner's, unmapped)" }
  const absolute = path.resolve(path.dirname(script.mapFile), source)
  const ours = /^packages\/([^/]+)\/src\/(.+\.ts)$/.exec(path.relative(root, absolute).split(path.sep).join("/"))
  if (ours !== null) return { ours: `${ours[1]}/${ours[2]}` }
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\/[^]*$/.exec(absolute.split(path.sep).join("/"))
  return inModules === null ? {} : { dependency: inModules[1] }
}

/** Each source file with the threads it ran in, and the dependencies' functions by package. */
const attribute = (byThread, scripts) => {
  const files = new Map()
  const dependencies = new Map()
  for (const [thread, functions] of Object.entries(byThread)) {
    for (const { url, offset, name } of functions) {
      if (!scripts.has(url)) scripts.set(url, loadScript(url))
      const { ours, dependency } = sourceOf(scripts.get(url), offset)
      if (ours !== undefined) files.set(ours, [...(files.get(ours) ?? []), { thread, name: name || "(anonymous)" }])
      if (dependency !== undefined) dependencies.set(dependency, (dependencies.get(dependency) ?? 0) + 1)
    }
  }
  return { files, dependencies }
}

// `--functions`: each file's functions that ran on every call, by thread; else the threads.
const ranIn = (functions) =>
  process.argv.includes("--functions")
    ? functions.map(({ thread, name }) => `${thread}:${name}`).join(" ")
    : [...new Set(functions.map(({ thread }) => thread))].sort().join(", ")

const print = (name, { files, dependencies }) => {
  const sorted = [...files.keys()].sort()
  const byPackage = Object.entries(Object.groupBy(sorted, (file) => file.split("/")[0]))
  const lines = [
    `${name}: ${sorted.length} source files (${byPackage.map(([pkg, list]) => `${list.length} of ${pkg}`).join(", ")})`,
    ...sorted.map((file) => `  ${file.padEnd(48)} ${ranIn(files.get(file))}`),
    `  dependencies, functions run per call: ${[...dependencies].map(([pkg, n]) => `${pkg} ${n}`).join(", ") || "none"}`,
    ""
  ]
  process.stdout.write(lines.join("\n") + "\n")
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-walk-"))
fs.chmodSync(dir, 0o700)
const bundleOf = (name) => path.join(dir, `${name}.mjs`)
try {
  await bundleHost({
    entryPoints: ["host", "caller"].map((name) => ({ in: path.join(root, "scripts/walk", `${name}.mjs`), out: name })),
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    sourcemap: true,
    plugins: [fixturesInPlace]
  })
  const input = {
    caller: pathToFileURL(bundleOf("caller")).href,
    socket: path.join(dir, "host.sock"),
    paths,
    warmup,
    calls,
    rounds,
    settleMs
  }
  const started = performance.now()
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [...v8Flags, bundleOf("host"), JSON.stringify(input)],
    {
      maxBuffer: 64 * 1024 * 1024
    }
  )
  process.stderr.write(stderr)
  const results = JSON.parse(stdout.trim().split("\n").at(-1))
  process.stdout.write(
    `Each file has a function that ran ${calls} times more over ${calls} calls (after ${warmup}) than while idle, in each of ${rounds} rounds.\n\n`
  )
  const maps = new Map()
  for (const { name } of paths) print(name, attribute(results[name], maps))
  process.stdout.write(`measured in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}

// The checks `npm run docs` makes around @effect/docgen: which modules are public (the exports map), which exports
// lack `@since` or `@category` (docgen itself files the latter under "utils" without a word), and how many
// `@example` tags docgen must report having compiled.
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
// @ts-expect-error plain ESM build script without types
import { exampleCount, missingTags, publicModules } from "../../scripts/publicApi.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-public-api-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const write = (relative: string, text: string): string => {
  const file = path.join(scratch, relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}

const doc = (...tags: ReadonlyArray<string>) => `/**\n * What it is.\n *\n${tags.map((t) => ` * ${t}\n`).join("")} */\n`

describe("publicModules", () => {
  it("follows the exports map: a pattern opens modules, null closes them, ./internal/ is never API", () => {
    write(
      "pkg/package.json",
      JSON.stringify({
        exports: {
          ".": "./dist/index.js",
          "./*": "./dist/*.js",
          "./Closed": null,
          "./internal/wiring": "./dist/internal/wiring.js",
          "./internal/*": null
        }
      })
    )
    for (const module of ["index", "Open", "Closed", "internal/wiring", "internal/state"]) {
      write(`pkg/src/${module}.ts`, "export {}\n")
    }
    const modules = publicModules(path.join(scratch, "pkg"))
    assert.deepStrictEqual(modules.public, ["Open.ts", "index.ts"])
    assert.deepStrictEqual(modules.private, ["Closed.ts", "internal/state.ts", "internal/wiring.ts"])
  })

  it("reads this repository's packages: every top-level module public, nothing under internal/", () => {
    const core = publicModules(path.join(root, "packages/core"))
    assert.include(core.public, "McpWorkers.ts")
    assert.include(core.public, "index.ts")
    assert.include(core.private, "internal/owner/owner.ts")
    assert.isTrue(core.public.every((module: string) => !module.startsWith("internal/")))
    assert.isTrue(core.private.every((module: string) => module.startsWith("internal/")))
  })
})

describe("missingTags", () => {
  it("names each export without @since or @category, as docgen reads their comments", () => {
    const file = write(
      "tags/Module.ts",
      [
        doc("@since 0.1.0", "@category models"),
        "export const complete = 1\n",
        doc("@since 0.1.0"),
        "export const noCategory = 2\n",
        doc("@category models"),
        "export interface NoSince {}\n",
        "export type Bare = string\n",
        doc("@since 0.1.0", "@category"),
        "export const emptyCategory = 3\n",
        doc("@since 0.1.0", "@category constructors"),
        "export function overloaded(a: string): string\n",
        "export function overloaded(a: number): number\n",
        "export function overloaded(a: unknown) { return a }\n",
        doc("@since 0.1.0", "@internal"),
        "export const hidden = 4\n",
        // docgen reads a re-export's comment inside the braces; one above the statement does not count
        doc("@since 0.1.0", "@category models"),
        'export { outside } from "./other.js"\n',
        `export {\n  ${doc("@since 0.1.0", "@category models").replaceAll("\n", "\n  ")}inside\n} from "./other.js"\n`,
        // docgen files `export * as` under "exports" itself
        doc("@since 0.1.0"),
        'export * as Other from "./other.js"\n'
      ].join("")
    )
    const rel = (line: string) => line.slice(file.length)
    assert.deepStrictEqual(missingTags([file]).map(rel), [
      "#noCategory: missing @category",
      "#NoSince: missing @since",
      "#Bare: missing @since, @category",
      "#emptyCategory: missing @category",
      "#outside: missing @since, @category"
    ])
  })

  it("finds nothing missing in the public modules of caller, core, node and cluster", () => {
    const files = ["caller", "core", "node", "cluster"].flatMap((name) => {
      const dir = path.join(root, "packages", name)
      return publicModules(dir).public.map((module: string) => path.join(dir, "src", module))
    })
    assert.isAbove(files.length, 20)
    assert.deepStrictEqual(missingTags(files), [])
  })
})

describe("exampleCount", () => {
  it("counts the @example tags of doc comments, wherever they sit", () => {
    const file = write(
      "examples/Module.ts",
      [
        "/**\n * A module.\n *\n * @example\n * ```ts\n * const a = 1\n * ```\n *\n * @since 0.1.0\n */\n",
        "/**\n * @example\n * ```ts\n * new Thing()\n * ```\n *\n * @since 0.1.0\n * @category models\n */\n",
        "export class Thing {}\n",
        'export const text = "no @example here"\n'
      ].join("")
    )
    assert.strictEqual(exampleCount([file]), 2)
  })
})

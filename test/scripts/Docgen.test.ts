// `npm run docs` fails when an @example does not compile, and when docgen shows an example it never compiled (one on
// a class itself): the real docgen over a small package staged as the real ones are.
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
// @ts-expect-error plain ESM build script without types
import { run, stage } from "../../scripts/docgen.mjs"
// @ts-expect-error plain ESM build script without types
import { problemsOf, writeReference } from "../../scripts/docsHtml.mjs"
// @ts-expect-error plain ESM build script without types
import { publicModules } from "../../scripts/publicApi.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
// inside the repository (ignored), so that the examples find node_modules and @types/node as the real ones do
fs.mkdirSync(path.join(root, ".docgen"), { recursive: true })
const scratch = fs.mkdtempSync(path.join(root, ".docgen", "test-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

// docgen starts tsc and tsx for the examples: seconds of CPU each, whatever the machine's load
const docgenBudget = 180_000

interface Verdict {
  readonly output: string
  readonly checked: number
  readonly problem: string | undefined
}

const probe = (name: string, module: string): Promise<Verdict> => {
  const packageDir = path.join(scratch, name)
  fs.mkdirSync(path.join(packageDir, "src"), { recursive: true })
  fs.writeFileSync(
    path.join(packageDir, "package.json"),
    JSON.stringify({ name: `@probe/${name}`, exports: { "./*": "./dist/*.js" } })
  )
  fs.writeFileSync(path.join(packageDir, "src", "Probe.ts"), module)
  return run(stage(packageDir, path.join(scratch, `${name}-staged`)))
}

const moduleDoc = "/**\n * A probe.\n *\n * @since 0.1.0\n */\n"
const documented = (example: string, category: string) =>
  `/**\n * What it is.\n *\n * @example\n * \`\`\`ts\n${example
    .split("\n")
    .map((line) => ` * ${line}`.trimEnd())
    .join("\n")}\n * \`\`\`\n *\n * @since 0.1.0\n * @category ${category}\n */\n`

describe("docgen", () => {
  it(
    "passes compiling examples, and fails one that does not compile",
    async () => {
      const [good, bad] = await Promise.all([
        probe(
          "good",
          moduleDoc +
            documented(
              'import { Effect } from "effect"\n\nexport const main = () => Effect.runPromise(Effect.succeed(1))',
              "constants"
            ) +
            "export const one = 1\n"
        ),
        probe(
          "bad",
          moduleDoc + documented('const wrong: number = "not a number"', "constants") + "export const one = 1\n"
        )
      ])
      assert.strictEqual(good.problem, undefined, good.output)
      assert.strictEqual(good.checked, 1)
      assert.match(bad.problem ?? "", /^docgen failed/)
      assert.match(bad.output, /error TS2322/)
    },
    docgenBudget
  )

  it(
    "fails an example it would show but never compile",
    async () => {
      const verdict = await probe(
        "class",
        moduleDoc +
          documented('const wrong: number = "never compiled"', "models") +
          "export class Thing {}\n" +
          documented("const right: number = 1", "constants") +
          "export const one = 1\n"
      )
      assert.strictEqual(verdict.checked, 1)
      assert.match(verdict.problem ?? "", /compiled 1 of the 2 @example tags/)
    },
    docgenBudget
  )

  // `npm run docs` renders every package's docgen output as HTML and fails on a missing page or a dead link: here
  // the real docgen over the Effect 4 face (staged in its workspace, beside its Effect 4), rendered and judged.
  it(
    "the HTML reference: a page per public module, linked from the index; a missing page and a dead link are found",
    async () => {
      const effect4 = path.join(root, "packages/effect4")
      fs.mkdirSync(path.join(effect4, ".docgen"), { recursive: true })
      const staging = fs.mkdtempSync(path.join(effect4, ".docgen", "test-"))
      try {
        const verdict = await run(stage(effect4, staging))
        assert.strictEqual(verdict.problem, undefined, verdict.output)
        const html = path.join(scratch, "html")
        const manifest = JSON.parse(fs.readFileSync(path.join(effect4, "package.json"), "utf8"))
        const modules: Array<string> = publicModules(effect4).public
        writeReference(
          [{ name: manifest.name, description: manifest.description, modules: path.join(staging, "docs/modules") }],
          html
        )
        const expected = [{ short: "effect4", modules }]
        assert.deepStrictEqual(problemsOf(html, expected).sort(), [])
        const index = fs.readFileSync(path.join(html, "index.html"), "utf8")
        for (const module of modules) assert.include(index, `href="effect4/${module}.html"`)
        const errors = fs.readFileSync(path.join(html, "effect4/McpWorkerError.ts.html"), "utf8")
        assert.include(errors, '<h2 id="workerbusy-class">WorkerBusy (class)</h2>')

        fs.rmSync(path.join(html, "effect4/Tasks.ts.html"))
        fs.appendFileSync(path.join(html, "effect4/index.html"), '<a href="McpWorkers.ts.html#no-such-id">x</a>')
        assert.deepStrictEqual(problemsOf(html, expected).sort(), [
          "effect4/Tasks.ts: no page",
          "effect4/index.html: McpWorkers.ts.html#no-such-id: no such id",
          "effect4/index.html: Tasks.ts.html: no such page",
          "index.html: effect4/Tasks.ts.html: no such page"
        ])
      } finally {
        fs.rmSync(staging, { recursive: true, force: true })
      }
    },
    docgenBudget
  )
})

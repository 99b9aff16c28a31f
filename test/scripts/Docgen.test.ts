// `npm run docs` fails when an @example does not compile, and when docgen shows an example it never compiled (one on
// a class itself): the real docgen over a small package staged as the real ones are.
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
// @ts-expect-error plain ESM build script without types
import { run, stage } from "../../scripts/docgen.mjs"

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
})

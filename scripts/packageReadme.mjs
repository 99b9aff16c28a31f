// A package's README, made at pack time from the repository's README.md (the one source): the package's description,
// the Install section's commands as they stand there, and the first programs that import the package, so that the
// registry page shows how to install and use it.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const section = (readme, title) => {
  const start = readme.indexOf(`\n## ${title}\n`)
  if (start === -1) throw new Error(`README.md has no ${title} section`)
  const end = readme.indexOf("\n## ", start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
}

const blocks = (text, language) =>
  [...text.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((match) => match[1])

/** The README's Install section: its commands block, and its first programs (each a js block). */
export const installOf = (readme) => {
  const install = section(readme, "Install")
  return { commands: blocks(install, "sh")[0], programs: blocks(install, "js") }
}

/** The README of the package whose package.json is `manifest`, from the repository's README text `readme`. */
export const packageReadme = (readme, manifest) => {
  const { commands, programs } = installOf(readme)
  if (commands === undefined) throw new Error("README.md's Install section has no commands block")
  const website = manifest.repository.url.replace(/^git\+/, "").replace(/\.git$/, "")
  const own = programs.filter((program) => program.includes(`from "${manifest.name}`))
  const fence = (language, code) => `\`\`\`${language}\n${code}\`\`\``
  return [
    `# ${manifest.name}`,
    `${manifest.description}.`,
    "## Install",
    fence("sh", commands),
    ...(own.length > 0 ? ["## First program", ...own.map((program) => fence("js", program))] : []),
    `The guide, every face's API and the contract: [the mcp-worker README](${website}#install).`
  ].join("\n\n")
}

/** Writes README.md into the package directory `dir`. */
export const writePackageReadme = (dir) => {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  fs.writeFileSync(path.join(dir, "README.md"), `${packageReadme(readme, manifest)}\n`)
}

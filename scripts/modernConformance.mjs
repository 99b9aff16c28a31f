// The 0.2.0-alpha line of @modelcontextprotocol/conformance, which tracks the 2026-07-28 revision: installed into a
// private prefix under .runtimes/ (its own SDK and zod line would clash with the root lock), and what it requires of
// that revision. Used by scripts/conformance.mjs and by test/node/ServeConformance.test.ts alike.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

// The line that tracks 2026-07-28; bump with a full run.
export const modernVersion = "0.2.0-alpha.12"
export const modernRevision = "2026-07-28"

/** The runner's entry, installed first when the prefix holds another version or none. */
export const installModernRunner = (root) => {
  const prefix = path.join(root, ".runtimes", `conformance-${modernVersion}`)
  const entry = path.join(prefix, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
  const installed = path.join(prefix, "node_modules/@modelcontextprotocol/conformance/package.json")
  const version = fs.existsSync(installed) ? JSON.parse(fs.readFileSync(installed, "utf8")).version : null
  if (version === modernVersion) return entry
  // No lock file and no scripts: this prefix holds one tool, not a project.
  const npm = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-package-lock",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `@modelcontextprotocol/conformance@${modernVersion}`
    ],
    { cwd: root, stdio: ["ignore", "inherit", "inherit"] }
  )
  if (npm.error) throw npm.error
  if (npm.status !== 0) throw new Error(`npm could not install @modelcontextprotocol/conformance@${modernVersion}`)
  return entry
}

/**
 * The scenarios of one kind ("Client" or "Server") the revision requires, from `list --requirements <revision>`: the
 * lines between that heading and the next blank line. The runner's "never scored" ones are not among them.
 */
export const requiredScenarios = (listing, kind) => {
  const section = listing.split(/\n\s*\n/).find((block) => block.trim().startsWith(`${kind} scenarios`)) ?? ""
  return [...section.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1])
}

/** Each scenario of a runner's `=== SUMMARY ===`, and whether all its checks passed. */
export const summaryOf = (output) =>
  new Map(
    [...(output.split("=== SUMMARY ===")[1] ?? "").matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm)].map(
      (match) => [match[2], match[1] === "✓"]
    )
  )

// The root suite's bundles (the owner runtime, the fixture servers) and this package's private bundle of the
// implementation; after the run, the check that no fixture server of this checkout is still alive.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
// @ts-expect-error plain ESM build script without types
import { bundleFixtures, bundleOwner } from "../../../scripts/bundle.mjs"
// @ts-expect-error plain ESM build script without types
import { bundleImplementation } from "../scripts/bundle.mjs"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures")

// Fixture servers of this checkout, by their command line (other checkouts on the machine run their own).
const ourServers = (): Array<string> => {
  const found: Array<string> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (/\) Z /.test(fs.readFileSync(`/proc/${entry}/stat`, "utf8"))) continue
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")
      if (cmdline.includes(fixtures)) found.push(`${entry}: ${cmdline.slice(0, 160)}`)
    } catch {
      // the process ended while we looked
    }
  }
  return found
}

let before = new Set<string>()

export async function setup() {
  if (process.platform === "linux") before = new Set(ourServers().map((line) => line.split(":")[0]!))
  await Promise.all([bundleOwner(), bundleFixtures()])
  await bundleImplementation()
}

export async function teardown() {
  if (process.platform !== "linux") return
  const fresh = () => ourServers().filter((line) => !before.has(line.split(":")[0]!))
  let left = fresh()
  for (let i = 0; i < 30 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    left = fresh()
  }
  if (left.length > 0) throw new Error(`the suite left processes running:\n${left.join("\n")}`)
}

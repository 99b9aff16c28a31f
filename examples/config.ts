/**
 * The config that starts the bundled example server. Plain JSON data, as an agent host would store it.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

export const exampleServer = {
  command: process.execPath,
  args: ["--import", "tsx", path.join(here, "server.ts")],
  cwd: path.resolve(here, "..")
}

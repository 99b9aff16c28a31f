// SqliteStorage.make from several processes on one fresh file at the same instant, the start of every cluster on
// one machine. Two processes switching a fresh file to WAL together deadlock, and SQLite fails one of them at once
// (SQLITE_BUSY) without waiting out the busy timeout: without the retry in `make`, some of these rounds fail.
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { sqliteFile, sqliteLoadable } from "./sqlite.js"

const loadable = sqliteLoadable()
const processes = 4
const rounds = 40

describe.skipIf(!loadable.ok)(
  `SqliteStorage.make, several processes at once${loadable.ok ? "" : ` (${loadable.reason})`}`,
  () => {
    it("every process opens every fresh file and writes to it", async () => {
      const { file, remove } = sqliteFile()
      const dir = path.dirname(file)
      try {
        const files = Array.from({ length: rounds }, (_, round) => path.join(dir, `round-${round}.db`))
        // Time enough for every process to load before the first round; a late one still opens, it only collides less.
        const startAt = Date.now() + 4_000
        const outputs = await Promise.all(
          Array.from({ length: processes }, () =>
            promisify(execFile)(
              process.execPath,
              ["--import", "tsx", "test/cluster/sqlite-opener.ts", String(startAt), ...files],
              { timeout: 60_000 }
            )
          )
        )
        const results = outputs.flatMap(({ stdout }) =>
          stdout
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line))
        )
        expect(results.filter((result) => !result.ok)).toEqual([])
        expect(results).toHaveLength(processes * rounds)
        for (const round of files) expect(fs.existsSync(round)).toBe(true)
      } finally {
        remove()
      }
    }, 90_000)
  }
)

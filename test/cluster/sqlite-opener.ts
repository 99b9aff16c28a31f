// One process of SqliteOpen.test.ts: opens each given fresh file with `SqliteStorage.make` at the given wall-clock
// instant (the same instant in every process), writes one row, closes it, and prints one JSON line per file.
//   node --import tsx test/cluster/sqlite-opener.ts <startAtMs> <file>...
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqliteStorage from "../../packages/cluster/src/SqliteStorage.js"

const [startAt, ...files] = process.argv.slice(2)
const roundMs = 60

const openOnce = (file: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* SqliteStorage.make({ filename: file })
      yield* sql.unsafe("CREATE TABLE IF NOT EXISTS opened (pid INTEGER)")
      yield* sql.unsafe(`INSERT INTO opened VALUES (${process.pid})`)
    })
  ).pipe(Effect.provide(Reactivity.layer))

for (const [round, file] of files.entries()) {
  const at = Number(startAt) + round * roundMs
  // A busy wait: a timer fires late by a few ms at random, and the point is to collide with the other processes.
  while (Date.now() < at) {}
  const exit = await Effect.runPromiseExit(openOnce(file))
  process.stdout.write(
    JSON.stringify(Exit.isSuccess(exit) ? { file, ok: true } : { file, ok: false, error: String(exit.cause) }) + "\n"
  )
}

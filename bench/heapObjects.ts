// The JavaScript objects of a V8 heap snapshot (`v8.writeHeapSnapshot`), counted: objects, arrays, strings, closures,
// numbers and bigints, without V8's code, shapes and internal structures, whose number grows as functions get hot
// whatever a program keeps. Read as bytes, not as JSON: a snapshot's arrays of numbers are most of it.
import * as fs from "node:fs"

const countedTypes = new Set([
  "object",
  "array",
  "string",
  "concatenated string",
  "sliced string",
  "closure",
  "number",
  "bigint",
  "symbol",
  "regexp",
  "native"
])

/** The integers of the JSON array that starts at `start` (its `[`), and where it ends. */
const integersAt = (bytes: Buffer, start: number): { values: Array<number>; end: number } => {
  const values: Array<number> = []
  let value = 0
  let inNumber = false
  let at = start + 1
  for (; at < bytes.length; at++) {
    const c = bytes[at]!
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48)
      inNumber = true
      continue
    }
    if (inNumber) values.push(value)
    value = 0
    inNumber = false
    if (c === 93) break
  }
  return { values, end: at }
}

/** How many JavaScript objects the snapshot holds, by type. */
export const countObjects = (file: string): Map<string, number> => {
  const bytes = fs.readFileSync(file)
  const nodesAt = bytes.indexOf('"nodes":[')
  const header = bytes.subarray(0, nodesAt).toString("utf8").trim().replace(/,$/, "")
  const meta = JSON.parse(`${header}}`).snapshot.meta as { node_fields: Array<string>; node_types: [Array<string>] }
  const nodes = integersAt(bytes, nodesAt + '"nodes":'.length).values
  const fields = meta.node_fields.length
  const types = meta.node_types[0]
  const counts = new Map<string, number>()
  for (let node = 0; node < nodes.length; node += fields) {
    const type = types[nodes[node]!]!
    if (countedTypes.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1)
  }
  return counts
}

/** The objects of `after` that `before` did not have, by type (negative where fewer), and their total. */
export const objectGrowth = (before: string, after: string) => {
  const [from, to] = [countObjects(before), countObjects(after)]
  const byType: Record<string, number> = {}
  let total = 0
  for (const type of new Set([...from.keys(), ...to.keys()])) {
    const growth = (to.get(type) ?? 0) - (from.get(type) ?? 0)
    if (growth !== 0) byType[type] = growth
    total += growth
  }
  return { total, byType }
}

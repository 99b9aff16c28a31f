// Source maps of the minified bundles that point into sources an install holds, instead of embedding them or naming
// files of this checkout's node_modules: mappings into a source the package ships (or a sibling package ships, at
// the same relative place in an install as in packages/) are kept, every other position is left unmapped. The maps
// shrink from megabytes to what this project's own code needs for stack traces (`--enable-source-maps`).
import * as fs from "node:fs"
import * as path from "node:path"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const digitOf = new Map([...alphabet].map((char, index) => [char, index]))

const decodeSegment = (text) => {
  const fields = []
  let value = 0
  let shift = 0
  for (const char of text) {
    const digit = digitOf.get(char)
    value += (digit & 31) << shift
    if (digit & 32) {
      shift += 5
      continue
    }
    fields.push(value & 1 ? -(value >>> 1) : value >>> 1)
    value = 0
    shift = 0
  }
  return fields
}

const encodeField = (field) => {
  let value = field < 0 ? (-field << 1) | 1 : field << 1
  let text = ""
  do {
    let digit = value & 31
    value >>>= 5
    if (value > 0) digit |= 32
    text += alphabet[digit]
  } while (value > 0)
  return text
}

/** Each generated line's segments with absolute fields: [column] or [column, source, line, column, name?]. */
const decode = (mappings) => {
  const state = [0, 0, 0, 0]
  return mappings.split(";").map((line) => {
    let column = 0
    return line
      .split(",")
      .filter((segment) => segment !== "")
      .map((segment) => {
        const fields = decodeSegment(segment)
        column += fields[0]
        if (fields.length === 1) return [column]
        for (let i = 1; i < fields.length; i++) state[i - 1] += fields[i]
        return fields.length === 5 ? [column, state[0], state[1], state[2], state[3]] : [column, ...state.slice(0, 3)]
      })
  })
}

const encode = (lines) => {
  const previous = [0, 0, 0, 0]
  return lines
    .map((segments) => {
      let column = 0
      return segments
        .map((segment) => {
          let text = encodeField(segment[0] - column)
          column = segment[0]
          for (let i = 1; i < segment.length; i++) {
            text += encodeField(segment[i] - previous[i - 1])
            previous[i - 1] = segment[i]
          }
          return text
        })
        .join(",")
    })
    .join(";")
}

/**
 * The map `text` to be written at `mapFile`, its `sources` relative to `from` (the map's own directory unless it was
 * copied): `place(absoluteSource)` answers where that file is in the package's install (an absolute path under the
 * package, or a sibling package's), or undefined to leave its positions unmapped. No `sourcesContent`; names no kept
 * position uses are dropped.
 */
export const pointIntoShippedSources = (text, mapFile, place, from = path.dirname(mapFile)) => {
  const map = JSON.parse(text)
  const placed = map.sources.map((source) => place(path.resolve(from, source)))
  const sources = []
  const sourceIndex = new Map()
  const names = []
  const nameIndex = new Map()
  const indexOf = (table, index, value) => {
    if (!index.has(value)) index.set(value, table.push(value) - 1)
    return index.get(value)
  }
  const lines = decode(map.mappings).map((segments) => {
    const kept = []
    for (const segment of segments) {
      const target = segment.length > 1 ? placed[segment[1]] : undefined
      if (target === undefined) {
        // An unmapped position ends the segment before it; a run of them needs only its first.
        if (kept.length > 0 && kept[kept.length - 1].length > 1) kept.push([segment[0]])
        continue
      }
      const source = indexOf(
        sources,
        sourceIndex,
        path.relative(path.dirname(mapFile), target).split(path.sep).join("/")
      )
      const name = segment.length === 5 ? [indexOf(names, nameIndex, map.names[segment[4]])] : []
      kept.push([segment[0], source, segment[2], segment[3], ...name])
    }
    return kept
  })
  const { version, file } = map
  return JSON.stringify({ version, ...(file !== undefined ? { file } : {}), sources, names, mappings: encode(lines) })
}

/** `pointIntoShippedSources` on the file at `mapFile`, in place. */
export const rewriteMapFile = (mapFile, place, from) =>
  fs.writeFileSync(mapFile, pointIntoShippedSources(fs.readFileSync(mapFile, "utf8"), mapFile, place, from))

/** `place` for a bundle shipped in packages/<name>: the sources of packages/<pkg>/src for each of `packages`. */
export const sourcesOf = (packagesDir, packages) => (absolute) => {
  for (const name of packages) {
    const src = path.join(packagesDir, name, "src") + path.sep
    if (absolute.startsWith(src) && fs.existsSync(absolute)) return absolute
  }
  return undefined
}

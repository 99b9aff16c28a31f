// `BENCH_PROFILE_DIR`: the rows that support it profile this thread (inspector sampling, 100 µs) over the spans they
// measure, one `<name>.cpuprofile` per span. Without a directory a span only runs.
import * as fs from "node:fs"
import * as inspector from "node:inspector/promises"
import * as path from "node:path"

export interface Profiler {
  readonly around: <A>(name: string, span: () => Promise<A>) => Promise<A>
}

export const make = (dir: string | undefined): Profiler => {
  if (dir === undefined) return { around: (_name, span) => span() }
  const session = new inspector.Session()
  session.connect()
  const ready = session
    .post("Profiler.enable")
    .then(() => session.post("Profiler.setSamplingInterval", { interval: 100 }))
  return {
    around: async (name, span) => {
      await ready
      await session.post("Profiler.start")
      try {
        return await span()
      } finally {
        const { profile } = await session.post("Profiler.stop")
        fs.writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile))
      }
    }
  }
}

// Every test file must give back what it took: no owner thread (a Worker shows as a MessagePort), no port,
// no child process and no socket may outlive the file.
import { afterAll } from "vitest"

const watched = ["MessagePort", "ProcessWrap", "PipeWrap", "TCPWrap", "TCPSocketWrap", "TCPServerWrap", "TTYWrap"]

const count = (): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const name of process.getActiveResourcesInfo()) {
    if (watched.includes(name)) counts[name] = (counts[name] ?? 0) + 1
  }
  return counts
}

// The worker's own stdio pipes open on first use; open them now so they count as baseline.
void [process.stdin, process.stdout, process.stderr]
const baseline = count()

const extra = (): Array<string> => {
  const now = count()
  return Object.entries(now)
    .filter(([name, n]) => n > (baseline[name] ?? 0))
    .map(([name, n]) => `${name}: ${n - (baseline[name] ?? 0)} more than at start`)
}

afterAll(async () => {
  let left = extra()
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    left = extra()
  }
  if (left.length > 0) throw new Error(`this file leaked resources: ${left.join(", ")}`)
})

/**
 * Host-death cleanup (C27): one small process per host registry that ends every stdio server tree the host started
 * when the host process dies without running any JavaScript (SIGKILL, the kernel's OOM killer).
 *
 * It is a POSIX shell reading a pipe from the host: the host tells it each job's marker before the server starts,
 * and its process group once known, and forgets a job once its close is confirmed. The pipe reaches EOF when the
 * host process dies, however it dies (the host holds the only write end: Node opens it close-on-exec, so no server
 * inherits it). Then the shell SIGKILLs each group whose leader still carries its marker and every process that
 * carries a marker (which finds descendants that left the group with `setsid`), three times over, and exits. It
 * touches no process that carries none of its markers. Without `/proc` (C100) it runs `psScript` instead.
 *
 * Cost: a shell blocked in `read` (about 1 MiB RSS with dash, no CPU while idle). It runs in a session of its own,
 * so a signal to the host's process group (Ctrl-C, a supervisor killing the group) does not take it down with the
 * host, and it ignores SIGINT, SIGHUP and SIGTERM: only EOF ends it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import * as NodeChildProcess from "node:child_process"
import type { ChildProcess } from "node:child_process"
import * as Platform from "../job/platform.js"
import * as Ps from "../job/ps.js"
import * as ProcessStart from "../job/start.js"

/**
 * The host's side of the reaper. Every method is a no-op when host-death cleanup is off (no POSIX shell, or it
 * could not be started).
 *
 * @internal
 */
export interface Reaper {
  /** A stdio job is about to start with this marker. Starts the reaper on first use. */
  readonly watch: (marker: string) => void
  /** The job's root process, which leads its process group. */
  readonly group: (marker: string, pgid: number) => void
  /** The job's processes are confirmed gone. */
  readonly forget: (marker: string) => void
  /** Whether host-death cleanup is on: `undefined` before the first stdio job. */
  readonly active: () => boolean | undefined
}

/** The argument that names the reaper in `ps` and `/proc/<pid>/cmdline`, followed by the host's pid. @internal */
export const processName = "mcp-worker-reaper"

// Lines: `+ <marker>`, `g <marker> <pgid>`, `- <marker>`. Markers and pgids are [A-Za-z0-9_-] and digits only.
const script = `
trap '' INT HUP TERM PIPE
markers=""
groups=""
while read -r op marker pgid; do
  case "$op" in
    +) markers="$markers $marker" ;;
    g) groups="$groups $marker:$pgid" ;;
    -)
      kept=""
      for m in $markers; do [ "$m" = "$marker" ] || kept="$kept $m"; done
      markers="$kept"
      kept=""
      for g in $groups; do [ "\${g%%:*}" = "$marker" ] || kept="$kept $g"; done
      groups="$kept"
      ;;
  esac
done
[ -n "$markers" ] || exit 0
patterns=""
for m in $markers; do patterns="$patterns -e ${ProcessStart.markerVariable}=$m"; done
round=0
while [ $round -lt 3 ]; do
  for g in $groups; do
    m="\${g%%:*}"
    p="\${g#*:}"
    grep -qzx -e "${ProcessStart.markerVariable}=$m" "/proc/$p/environ" 2>/dev/null && kill -KILL "-$p" 2>/dev/null
  done
  for f in $(grep -lzxF $patterns /proc/[0-9]*/environ 2>/dev/null); do
    p="\${f#/proc/}"
    kill -KILL "\${p%/environ}" 2>/dev/null
  done
  round=$((round + 1))
  sleep 0.05
done
exit 0
`

// The same reaper where there is no `/proc` (C27, C100): no environment can be read, so it keeps each job's group
// with its leader's start time (`lstart`, read when the group is told), and at EOF kills the groups whose leader
// still has that start time (the pid was not recycled) and every descendant of their members, found by parent pid in
// one `ps` listing (the same arguments as the job's scans, `job/ps.ts`). A descendant whose parent chain to its
// group was already broken before the host died is not found.
const psScript = `
trap '' INT HUP TERM PIPE
groups=""
while read -r op marker pgid; do
  case "$op" in
    g)
      started=$(ps -o lstart= -p "$pgid" 2>/dev/null | tr -d ' ')
      [ -z "$started" ] || groups="$groups $marker:$pgid:$started"
      ;;
    -)
      kept=""
      for g in $groups; do [ "\${g%%:*}" = "$marker" ] || kept="$kept $g"; done
      groups="$kept"
      ;;
  esac
done
leaders=""
for g in $groups; do
  rest="\${g#*:}"
  p="\${rest%%:*}"
  [ "$(ps -o lstart= -p "$p" 2>/dev/null | tr -d ' ')" = "\${rest#*:}" ] && leaders="$leaders $p"
done
[ -n "$leaders" ] || exit 0
round=0
while [ $round -lt 3 ]; do
  pids=$(ps ${Ps.psArguments.join(" ")} | awk -v groups="$leaders" '
    BEGIN { n = split(groups, g, " "); for (i = 1; i <= n; i++) group[g[i]] = 1 }
    $4 !~ /^Z/ && $1 > 1 { parent[$1] = $2; if ($3 in group) take[$1] = 1 }
    END {
      do { more = 0; for (p in parent) if (!(p in take) && (parent[p] in take)) { take[p] = 1; more = 1 } } while (more)
      for (p in take) print p
    }')
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
  round=$((round + 1))
  sleep 0.05
done
exit 0
`

const safe = /^[A-Za-z0-9_-]+$/

/**
 * The reaper of one host registry, started on first use and ended with the scope (its pipe is closed, so it exits
 * with nothing left to do once every job was forgotten).
 *
 * @internal
 */
export const make: Effect.Effect<Reaper, never, Scope.Scope> = Effect.gen(function* () {
  let child: ChildProcess | undefined
  let state: "idle" | "on" | "off" = "idle"
  const runFork = yield* FiberSet.makeRuntime<never>()

  const turnOff = (reason: string) => {
    if (state === "off") return
    state = "off"
    child = undefined
    // Said once, where it is seen: the host keeps working, but a SIGKILLed host would now leave its servers.
    runFork(
      Effect.logWarning("host-death cleanup is off: servers would outlive a host killed with SIGKILL").pipe(
        Effect.annotateLogs({ reason })
      )
    )
  }

  const start = () => {
    if (Platform.platform === "win32") return turnOff(`not available on ${process.platform}`)
    const source = Platform.platform === "linux" ? script : psScript
    let spawned: ChildProcess
    try {
      spawned = NodeChildProcess.spawn("/bin/sh", ["-c", source, processName, String(process.pid)], {
        // A session of its own: a signal to the host's process group must not end it with the host.
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
        env: ProcessStart.defaultEnvironment()
      })
    } catch {
      return turnOff("the shell could not be started")
    }
    child = spawned
    state = "on"
    spawned.once("error", () => turnOff("the shell could not be started"))
    spawned.once("exit", () => {
      if (child === spawned) turnOff("the reaper exited")
    })
    spawned.stdin!.on("error", () => turnOff("the reaper's pipe broke"))
    // Neither the process nor its pipe may keep the host alive.
    spawned.unref()
    ;(spawned.stdin as unknown as { unref?: () => void }).unref?.()
  }

  const send = (line: string) => {
    if (state === "idle") start()
    if (state === "on") child!.stdin!.write(line)
  }

  // The reaper ends on its own once its stdin closes; it is given a second to do so, and is not waited for beyond.
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      const running = child
      child = undefined
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return Effect.void
      return Effect.async<void>((resume) => {
        const onExit = () => resume(Effect.void)
        running.once("exit", onExit)
        running.stdin!.end()
        return Effect.sync(() => running.off("exit", onExit))
        // A finalizer runs uninterruptibly: the wait is made interruptible, or the timeout could not end it.
      }).pipe(Effect.interruptible, Effect.timeoutOption("1 second"), Effect.asVoid)
    })
  )

  return {
    watch: (marker) => {
      if (safe.test(marker)) send(`+ ${marker}\n`)
    },
    group: (marker, pgid) => {
      if (state === "on" && safe.test(marker) && Number.isInteger(pgid) && pgid > 1) send(`g ${marker} ${pgid}\n`)
    },
    forget: (marker) => {
      if (state === "on" && safe.test(marker)) send(`- ${marker}\n`)
    },
    active: () => (state === "idle" ? undefined : state === "on")
  }
})

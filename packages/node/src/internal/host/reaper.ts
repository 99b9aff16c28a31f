/**
 * C27: a shell reading a pipe only the host writes (close-on-exec): its EOF is the host's death. Markers find
 * descendants that left the group with `setsid`. ≈ 1 MiB, idle.
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

/** No-ops when host-death cleanup is off. @internal */
export interface Reaper {
  /** Before the job starts, so a host dying during the spawn is covered. */
  readonly watch: (marker: string) => void
  readonly group: (marker: string, pgid: number) => void
  readonly forget: (marker: string) => void
  /** `undefined` before the first stdio job. */
  readonly active: () => boolean | undefined
}

/** @internal */
export const processName = "mcp-worker-reaper"

// `safe` keeps the lines unquoted-safe.
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

// C100: without `/proc`, a leader's start time proves its pid was not recycled; descendants are found by parent pid.
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

/** @internal */
export const make: Effect.Effect<Reaper, never, Scope.Scope> = Effect.gen(function* () {
  let child: ChildProcess | undefined
  let state: "idle" | "on" | "off" = "idle"
  const runFork = yield* FiberSet.makeRuntime<never>()

  const turnOff = (reason: string) => {
    if (state === "off") return
    state = "off"
    child = undefined
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
        // A signal to the host's group must not end it with the host.
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
    spawned.unref()
    ;(spawned.stdin as unknown as { unref?: () => void }).unref?.()
  }

  const send = (line: string) => {
    if (state === "idle") start()
    if (state === "on") child!.stdin!.write(line)
  }

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
        // Finalizers are uninterruptible.
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

// Built-ins only: the owner's entry runs this before loading anything else.
import * as NodeChildProcess from "node:child_process"
import type { ChildProcess } from "node:child_process"
import type { Started } from "../../ProcessJob.js"

/** @internal */
export const markerVariable = "MCP_WORKER_JOB" as const

/** @internal */
export interface StartOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly cwd?: string | undefined
  readonly marker: string
}

/** @internal */
export interface StartedProcess extends Started {
  readonly stderr: () => Buffer
  readonly stderrEnded: Promise<void>
}

/** So redaction never sees a secret cut in half. @internal */
export const stderrKeepBytes = 8 * 1024

const noStderr = () => Buffer.alloc(0)

// C18
const inheritedVariables =
  process.platform === "win32"
    ? [
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
        "PROGRAMFILES"
      ]
    : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR"]

/** C18 @internal */
export const networkVariables = [
  "HTTP_PROXY",
  "http_proxy",
  "HTTPS_PROXY",
  "https_proxy",
  "NO_PROXY",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "npm_config_registry",
  "npm_config_cafile",
  "npm_config_ca",
  "npm_config_proxy",
  "npm_config_https_proxy",
  "npm_config_noproxy",
  "npm_config_strict_ssl"
] as const

// C24: a proxy URL can carry credentials.
const proxyVariables: ReadonlySet<string> = new Set([
  "HTTP_PROXY",
  "http_proxy",
  "HTTPS_PROXY",
  "https_proxy",
  "npm_config_proxy",
  "npm_config_https_proxy"
])

/** @internal */
export const networkSecrets = (env: Readonly<Record<string, string>>): Array<string> => {
  const secrets: Array<string> = []
  for (const key of proxyVariables) {
    const value = env[key]
    if (value === undefined || value.length === 0) continue
    secrets.push(value)
    const password = URL.canParse(value) ? new URL(value).password : ""
    if (password.length > 0) secrets.push(password, decoded(password))
  }
  return secrets
}

const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** @internal */
export const defaultEnvironment = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const key of [...inheritedVariables, ...networkVariables]) {
    const value = process.env[key]
    // Exported shell functions are code.
    if (value !== undefined && !value.startsWith("()")) env[key] = value
  }
  return env
}

/** A synchronous failure is reported through `started`. @internal */
export const start = (options: StartOptions): StartedProcess => {
  let child: ChildProcess | undefined
  let error: Error | undefined
  try {
    child = NodeChildProcess.spawn(options.command, [...options.args], {
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...options.env, [markerVariable]: options.marker },
      cwd: options.cwd,
      windowsHide: true
    })
  } catch (cause) {
    error = cause instanceof Error ? cause : new Error(String(cause))
  }
  const c = child
  const { command, cwd } = options
  if (c === undefined) {
    return {
      command,
      cwd,
      child,
      started: Promise.resolve(error),
      exited: Promise.resolve({ code: null, signal: null }),
      stderr: noStderr,
      stderrEnded: Promise.resolve()
    }
  }
  // Its 'error' comes later.
  const started = new Promise<Error | undefined>((resolve) => {
    const onSpawn = () => {
      c.off("error", onError)
      resolve(undefined)
    }
    const onError = (cause: Error) => {
      c.off("spawn", onSpawn)
      c.stdin?.destroy()
      c.stdout?.destroy()
      c.stderr?.destroy()
      resolve(cause)
    }
    c.once("spawn", onSpawn)
    c.once("error", onError)
  })
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    c.once("exit", (code, signal) => resolve({ code, signal }))
  )
  // C28: Node discards unread stdio at exit, and a dying server says why on stderr.
  let stderr: Buffer = Buffer.alloc(0)
  const stream = c.stderr!
  stream.on("data", (chunk: Buffer) => {
    stderr = stderr.length === 0 ? chunk : Buffer.concat([stderr, chunk])
    if (stderr.length > stderrKeepBytes) stderr = stderr.subarray(stderr.length - stderrKeepBytes)
  })
  const stderrEnded = new Promise<void>((resolve) => {
    stream.once("end", resolve).once("close", resolve)
  })
  return { command, cwd, child, started, exited, stderr: () => stderr, stderrEnded }
}

/** @internal */
export const startFromWire = (config: string, marker: string): StartedProcess | undefined => {
  const wire = JSON.parse(config) as {
    command?: unknown
    args?: ReadonlyArray<string>
    env?: Record<string, string>
    cwd?: string
  }
  if (typeof wire.command !== "string") return undefined
  return start({
    command: wire.command,
    args: wire.args ?? [],
    env: { ...defaultEnvironment(), ...wire.env },
    cwd: wire.cwd,
    marker
  })
}

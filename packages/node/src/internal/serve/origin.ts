// C145: DNS rebinding reaches the port, but `Host` or `Origin` gives it away.

const loopback: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"])

// A host that does not parse is no loopback name.
const hostnameOf = (host: string): string | undefined => {
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::\d{1,5})?$/.exec(host.trim().toLowerCase())
  return match?.[1]
}

const originHost = (origin: string): string | undefined => {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)$/.exec(origin.trim().toLowerCase())
  return match === null ? undefined : hostnameOf(match[1]!)
}

export const foreign = (headers: { readonly host?: string | undefined; readonly origin?: string | undefined }) => {
  const host = headers.host === undefined ? undefined : hostnameOf(headers.host)
  if (host === undefined || !loopback.has(host)) return "the Host header must name localhost, 127.0.0.1 or [::1]"
  if (headers.origin === undefined || headers.origin === "null") return undefined
  const origin = originHost(headers.origin)
  return origin !== undefined && loopback.has(origin) ? undefined : "a request from another origin is refused"
}

/**
 * C145: the gateway answers only requests addressed to this machine's loopback names. A page on another origin that
 * rebinds its DNS name to 127.0.0.1 reaches the port, but its requests carry that name in `Host` and its own origin in
 * `Origin`; either is enough to refuse it, from the head alone.
 *
 * @internal
 */

const loopback: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"])

// `host[:port]` with `[::1]` kept bracketed; a host that does not parse is no loopback name.
const hostnameOf = (host: string): string | undefined => {
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::\d{1,5})?$/.exec(host.trim().toLowerCase())
  return match?.[1]
}

const originHost = (origin: string): string | undefined => {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)$/.exec(origin.trim().toLowerCase())
  return match === null ? undefined : hostnameOf(match[1]!)
}

/** Why a request's head names another host than this machine's loopback, or `undefined` when it does not. */
export const foreign = (headers: { readonly host?: string | undefined; readonly origin?: string | undefined }) => {
  const host = headers.host === undefined ? undefined : hostnameOf(headers.host)
  if (host === undefined || !loopback.has(host)) return "the Host header must name localhost, 127.0.0.1 or [::1]"
  if (headers.origin === undefined || headers.origin === "null") return undefined
  const origin = originHost(headers.origin)
  return origin !== undefined && loopback.has(origin) ? undefined : "a request from another origin is refused"
}

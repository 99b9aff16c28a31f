// The conformance runner's MCP client sends no Authorization header, and the gateway admits none without one
// (C133, C134): this relay on 127.0.0.1 adds the grant to each request and passes everything else through untouched,
// both ways, streamed, Host and Origin included.
import * as http from "node:http"

/** A relay to the gateway at `target` presenting `grant`; `url` is its endpoint, `close` ends it. */
export const relay = async (target: string, grant: string): Promise<{ url: string; close: () => Promise<void> }> => {
  const to = new URL(target)
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${grant}` }
    const out = http.request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      }
    )
    out.on("error", () => res.destroy())
    res.on("close", () => out.destroy())
    req.pipe(out)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}${to.pathname}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

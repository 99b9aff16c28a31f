// A real Prometheus endpoint for the host's metrics: `@effect/opentelemetry` hands Effect's metrics to the
// OpenTelemetry Prometheus exporter, which renders them on `GET /metrics` of an HTTP server bound to 127.0.0.1 (a port
// the system picks). Scoped: the server closes and the exporter shuts down with the scope.
import * as Metrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"

/** Where the metrics are, and the exporter's layer to provide to the host's program. */
export interface PrometheusEndpoint {
  readonly url: string
  /** One scrape of the endpoint, as a Prometheus server makes it. */
  readonly scrape: Effect.Effect<string>
}

/** Starts the endpoint in the scope, and the layer that feeds it the runtime's metrics. */
export const prometheus = (serviceName: string) =>
  Effect.gen(function* () {
    const exporter = new PrometheusExporter({ preventServerStart: true })
    const server = yield* Effect.acquireRelease(
      Effect.async<http.Server>((resume) => {
        const created = http.createServer((request, response) => {
          if (request.url === "/metrics") exporter.getMetricsRequestHandler(request, response)
          else response.writeHead(404).end()
        })
        created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
      }),
      (created) =>
        Effect.async<void>((resume) => {
          created.closeAllConnections()
          created.close(() => resume(Effect.void))
        })
    )
    const { port } = server.address() as { port: number }
    const url = `http://127.0.0.1:${port}/metrics`
    const endpoint: PrometheusEndpoint = {
      url,
      scrape: Effect.promise(() => fetch(url).then((response) => response.text()))
    }
    const layer = Metrics.layer(() => exporter).pipe(Layer.provide(Resource.layer({ serviceName })))
    return { endpoint, layer }
  })

/** One sample line of a scrape, parsed: its name, labels and value. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** Every sample of a scrape in the Prometheus text format. */
export const samplesOf = (text: string): Array<Sample> =>
  text
    .split("\n")
    .filter((line) => line.length > 0 && !line.startsWith("#"))
    .flatMap((line) => {
      const match = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line)
      if (match === null) return []
      const labels: Record<string, string> = {}
      for (const pair of (match[3] ?? "").matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[pair[1]!] = pair[2]!
      }
      return [{ name: match[1]!, labels, value: Number(match[4]) }]
    })

/** The sum of the samples named `name` whose labels include `labels`. */
export const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}): number =>
  samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v))
    .reduce((sum, sample) => sum + sample.value, 0)

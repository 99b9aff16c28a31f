/**
 * The metrics a host records of its workers (C80), as Effect `Metric`s of the host's runtime: install any exporter of
 * `@effect/opentelemetry` (`Metrics.layer`) and they are exported with the application's own. Owner threads and
 * processes record nothing themselves: what they know reaches the host on their data plane, and is recorded there.
 *
 * Labels: `mcp_worker.server` (the worker's open name or `openAll` entry name, else the server's, at most 64 characters), `mcp_worker.surface` (`host`,
 * `thread`, `socket`), `mcp.method.name`, `mcp_worker.outcome` (`result`, `is_error`, or an error's tag),
 * `mcp_worker.delivery` (`delivered`, `not_sent`, `unknown`), `mcp_worker.state`; never an argument, a value or a secret.
 *
 * @since 0.1.0
 */
import type * as Metric from "effect/Metric"
import * as internal from "./internal/metrics/metrics.js"

/**
 * Every metric of the host, by its role.
 *
 * @since 0.1.0
 * @category metrics
 */
export const metrics: {
  readonly [K in keyof typeof internal.metrics]: Metric.Metric<any, any, any>
} = internal.metrics

/**
 * The name of each metric, as an exporter sees it before its own renaming (Prometheus: `.` becomes `_`, and a
 * counter ends in `_total`). A metric with a unit ends in it (`_seconds`, `_bytes`), as OpenTelemetry's rule for
 * Prometheus writes it.
 *
 * @since 0.1.0
 * @category metrics
 */
export const names: ReadonlyArray<string> = internal.names

/**
 * The labels of each metric, by its name: no other label is recorded.
 *
 * @since 0.1.0
 * @category metrics
 */
export const labels: { readonly [name: string]: ReadonlyArray<string> } = internal.labelsOf

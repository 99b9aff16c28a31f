// Small statistics and formatting helpers for the benchmark: medians, quantiles, ratios, table cells.

/** Linear-interpolated quantile `q` (0..1) of `xs`; NaN for an empty sample. */
export const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  if (xs.length === 0) return Number.NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const pos = (sorted.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo)
}

export const median = (xs: ReadonlyArray<number>): number => quantile(xs, 0.5)

/** Median with the p10–p90 spread of one sample. */
export interface Summary {
  readonly n: number
  readonly median: number
  readonly p10: number
  readonly p90: number
}

export const summarize = (xs: ReadonlyArray<number>): Summary => ({
  n: xs.length,
  median: median(xs),
  p10: quantile(xs, 0.1),
  p90: quantile(xs, 0.9)
})

/** One variant against direct: the ratio of pooled medians, and the range of the per-block median ratios. */
export interface Comparison {
  readonly variant: Summary
  readonly direct: Summary
  readonly ratio: number
  /** min–max of median(variant block i) / median(direct block i) over the interleaved blocks. */
  readonly blockRatios: ReadonlyArray<number>
}

export const compare = (
  variantBlocks: ReadonlyArray<ReadonlyArray<number>>,
  directBlocks: ReadonlyArray<ReadonlyArray<number>>
): Comparison => {
  const variant = summarize(variantBlocks.flat())
  const direct = summarize(directBlocks.flat())
  const blockRatios = variantBlocks.map((block, i) => median(block) / median(directBlocks[i] ?? []))
  return { variant, direct, ratio: variant.median / direct.median, blockRatios }
}

export const round = (x: number, digits = 3): number => {
  if (!Number.isFinite(x)) return x
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/** `412 µs (380–470)` for a Summary in milliseconds. */
export const fmtUs = (s: Summary): string =>
  `${Math.round(s.median * 1000)} µs (${Math.round(s.p10 * 1000)}–${Math.round(s.p90 * 1000)})`

/** `212.4 ms (190.1–250.3)` for a Summary in milliseconds. */
export const fmtMs = (s: Summary, digits = 1): string =>
  `${s.median.toFixed(digits)} ms (${s.p10.toFixed(digits)}–${s.p90.toFixed(digits)})`

export const fmtRatio = (c: Comparison): string => {
  const lo = Math.min(...c.blockRatios)
  const hi = Math.max(...c.blockRatios)
  return `${c.ratio.toFixed(2)}× (blocks ${lo.toFixed(2)}–${hi.toFixed(2)})`
}

/** Renders rows as a fixed-width text table. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join(" │ ")
  const rule = widths.map((w) => "─".repeat(w)).join("─┼─")
  return [line(header), rule, ...rows.map(line)].join("\n")
}

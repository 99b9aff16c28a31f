/**
 * Hiding secrets in text that leaves the library (server stderr in `OpenFailed.stderrTail`, error messages): every
 * occurrence of every secret becomes `***` (C24).
 *
 * Secrets are matched as substrings of UTF-16 code units. Occurrences that overlap or touch, of one secret or of
 * several (one inside another, or partly overlapping), are hidden together behind a single `***`, so no part of
 * any secret survives. A secret that does not contain `*` can never appear in the result.
 *
 * @since 0.1.0
 */

/**
 * What every hidden run of text becomes.
 *
 * @since 0.1.0
 * @category constants
 */
export const mask = "***"

/**
 * Replaces every occurrence of every non-empty secret with `***`.
 *
 * @since 0.1.0
 * @category redaction
 */
export const redact = (text: string, secrets: Iterable<string>): string => {
  // reach[i]: the end (exclusive) of the longest occurrence starting at i, 0 when none starts there. Every
  // occurrence is found, overlapping ones included, so the order of the secrets does not matter.
  let reach: Uint32Array | undefined
  for (const secret of new Set(secrets)) {
    if (typeof secret !== "string" || secret.length === 0 || secret.length > text.length) continue
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
      reach ??= new Uint32Array(text.length)
      if (at + secret.length > reach[at]) reach[at] = at + secret.length
    }
  }
  if (reach === undefined) return text
  const covered = new Uint8Array(text.length)
  for (let i = 0, end = 0; i < text.length; i++) {
    if (reach[i] > end) end = reach[i]
    if (i < end) covered[i] = 1
  }
  // Never leave half of a surrogate pair next to the mask: the result stays well-formed when the text was.
  for (let i = 0; i + 1 < text.length; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) {
      if (covered[i] !== covered[i + 1]) covered[i] = covered[i + 1] = 1
      i++
    }
  }
  let out = ""
  let copied = 0
  for (let i = 0; i < text.length;) {
    if (covered[i] === 0) {
      i++
      continue
    }
    out += text.slice(copied, i) + mask
    while (i < text.length && covered[i] === 1) i++
    copied = i
  }
  return out + text.slice(copied)
}

/**
 * Redacts first, then keeps the last `maxBytes` UTF-8 bytes at most, never splitting a character. Redacting the
 * whole text before cutting means a secret cut by the window's edge cannot leak in part: keep a larger raw buffer
 * and call this on it.
 *
 * @since 0.1.0
 * @category redaction
 */
export const redactTail = (text: string, secrets: Iterable<string>, maxBytes: number = 2048): string => {
  const redacted = redact(text, secrets)
  let bytes = 0
  let start = redacted.length
  while (start > 0) {
    const code = redacted.charCodeAt(start - 1)
    const pair = start > 1 && isLowSurrogate(code) && isHighSurrogate(redacted.charCodeAt(start - 2))
    // A lone surrogate is written as U+FFFD: 3 bytes.
    const size = pair ? 4 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3
    if (bytes + size > maxBytes) break
    bytes += size
    start -= pair ? 2 : 1
  }
  return redacted.slice(start)
}

/**
 * The size of a string in UTF-8, counting a lone surrogate as the 3 bytes of U+FFFD (as `TextEncoder` does).
 *
 * @since 0.1.0
 * @category utils
 */
export const utf8Length = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (isHighSurrogate(code) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

// internal

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

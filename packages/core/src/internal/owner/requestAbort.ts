/**
 * The abort of one request, given to the SDK's `request` as its `signal`.
 */

/**
 * The client reads only what this has: `aborted`, `reason`, `throwIfAborted()` and one `abort` listener, added once
 * per request and never removed. A Node `AbortController` with that listener costs 13–22 µs to make on Node 20, more
 * than the rest of the owner's own work on a call; this costs well under 1 µs. Aborting is idempotent and runs each
 * listener once.
 *
 * @internal
 */
export class RequestAbort {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> | undefined = undefined

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.aborted) (this.listeners ??= []).push(listener)
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1
    if (index !== -1) this.listeners!.splice(index, 1)
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.listeners
    this.listeners = undefined
    if (listeners !== undefined) for (const listener of listeners) listener()
  }

  /** What the SDK's request options type it as. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}

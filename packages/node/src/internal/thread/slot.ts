/**
 * A direct request in memory the owner writes and the host reads (C8). No Node types: host declarations name it.
 *
 * @internal
 */

// [sequence, length] Int32, `since` Float64, then the id's bytes.
const headerBytes = 16
const maxIdBytes = 64

/** @internal */
export type Slot = SharedArrayBuffer

/** @internal */
export const makeSlot = (): Slot => new SharedArrayBuffer(headerBytes + maxIdBytes)

/** @internal */
export interface Held {
  readonly requestId: string
  readonly since: number
}

/**
 * Odd sequence during a write: a reader in another thread sees a whole write or retries.
 *
 * @internal
 */
export const slotWriter = (slot: Slot) => {
  const header = new Int32Array(slot, 0, 2)
  const since = new Float64Array(slot, 8, 1)
  const bytes = new Uint8Array(slot, headerBytes, maxIdBytes)
  return {
    set: (requestId: string): void => {
      Atomics.add(header, 0, 1)
      const { written } = new TextEncoder().encodeInto(requestId.slice(0, maxIdBytes), bytes)
      since[0] = Date.now()
      Atomics.store(header, 1, written)
      Atomics.add(header, 0, 1)
    },
    clear: (): void => {
      Atomics.add(header, 0, 1)
      Atomics.store(header, 1, 0)
      Atomics.add(header, 0, 1)
    }
  }
}

const decoder = new TextDecoder()

/** @internal */
export const readSlot = (slot: Slot): Held | undefined => {
  const header = new Int32Array(slot, 0, 2)
  // An owner that died mid-write had nothing in flight.
  for (let tries = 0; tries < 10_000; tries++) {
    const before = Atomics.load(header, 0)
    if ((before & 1) === 1) continue
    const length = Atomics.load(header, 1)
    const held =
      length === 0
        ? undefined
        : {
            requestId: decoder.decode(new Uint8Array(slot, headerBytes, length).slice()),
            since: new Float64Array(slot, 8, 1)[0]!
          }
    if (Atomics.load(header, 0) === before) return held
  }
  return undefined
}

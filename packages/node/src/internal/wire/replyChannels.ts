/**
 * The reply channels a thread posts to (`wire/remoteProtocol.ts`): one `BroadcastChannel` instance per remote, kept open
 * for the next answer, the least recently opened closed past a bound (an evicted remote just gets a new instance).
 * None keeps its thread alive. Owner threads keep them; the host posts its replies on fresh instances. Node built-ins
 * only, so the owner's bundle loads nothing more for it.
 *
 * @internal
 */
import { BroadcastChannel } from "node:worker_threads"

/** @internal */
export interface ReplyChannels {
  /** The open instance of the channel `name`, opened now if it is not. */
  readonly get: (name: string) => BroadcastChannel
  /** Closes every instance. */
  readonly close: () => void
}

/** @internal */
export const make = (max: number): ReplyChannels => {
  const channels = new Map<string, BroadcastChannel>()
  return {
    get: (name) => {
      let channel = channels.get(name)
      if (channel !== undefined) return channel
      channel = new BroadcastChannel(name)
      channel.unref()
      channels.set(name, channel)
      if (channels.size > max) {
        const [oldest, evicted] = channels.entries().next().value!
        evicted.close()
        channels.delete(oldest)
      }
      return channel
    },
    close: () => {
      for (const channel of channels.values()) channel.close()
      channels.clear()
    }
  }
}

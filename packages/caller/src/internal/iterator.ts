/** `return` and disposal end a subscription alike. @internal */

/** @internal */
export const eventsIterator = <A>(
  next: () => Promise<IteratorResult<A>>,
  finish: () => Promise<unknown>
): AsyncIterableIterator<A> & AsyncDisposable => {
  const iterator: AsyncIterableIterator<A> & AsyncDisposable = {
    next,
    return: async () => {
      await finish()
      return { done: true, value: undefined }
    },
    [Symbol.asyncIterator]: () => iterator,
    [Symbol.asyncDispose]: async () => {
      await finish()
    }
  }
  return iterator
}

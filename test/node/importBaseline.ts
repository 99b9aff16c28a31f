// A TypeScript module that imports nothing. The import test loads it first, through the same loader, so that
// what the loader starts for its first module (from Node 22 on: esbuild's transform thread, and libuv's thread
// pool for file reads) and the kinds of resource it creates per module are in the baseline.
export const loaded: boolean = true

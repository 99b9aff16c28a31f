// A user's program of the Effect 4 face that lets an error go uncaught, for ErrorStack.test.ts (C97): a result past
// maxResultBytes (ResultTooLarge, decoded from the owner thread's reply, then into this package's error) printed with
// console.log, then out of Effect.runPromise. argv[2]: the server's command line as JSON.
import * as Effect from "effect/Effect"
import { McpWorkers } from "../src/McpWorkers.js"
import * as NodeMcpWorkers from "../src/NodeMcpWorkers.js"

const [command, ...args] = JSON.parse(process.argv[2]!) as Array<string>
const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const id = yield* workers.open({ command: command!, args })
  return yield* workers.callTool(id, "big", { bytes: 4096 })
}).pipe(Effect.tapError((error) => Effect.sync(() => console.log(error))))
await Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layer({ maxResultBytes: 1024 }))))

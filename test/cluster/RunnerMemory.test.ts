// C89 through `@effect/cluster` itself: one runner in this process (its real `Sharding`, entity managers and this
// package's entities, message storage and registry; runner storage in memory, no transport), sent messages as a
// remote runner's server hands them over, so that a resend can carry the request id of one already answered.
// `@effect/cluster` refuses such a resend while it remembers the id; its storage read loop makes it forget, and from
// then on the runner's own record refuses it. If the loop stopped forgetting (the internals `messageStorage.ts`
// relies on), the first test fails; if the record stopped refusing, the server's log shows a call run twice.
import * as EntityAddress from "@effect/cluster/EntityAddress"
import * as EntityId from "@effect/cluster/EntityId"
import * as MachineId from "@effect/cluster/MachineId"
import * as Message from "@effect/cluster/Message"
import type * as Reply from "@effect/cluster/Reply"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as Headers from "@effect/platform/Headers"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { ClusterWorkerId } from "../../packages/cluster/src/index.js"
import { entities } from "../../packages/cluster/src/internal/cluster.js"
import { LocalWorkers, SelfRunner } from "../../packages/cluster/src/internal/facade.js"
import * as MessageStorage from "../../packages/cluster/src/internal/messageStorage.js"
import { ControlEntity, WorkerEntity } from "../../packages/cluster/src/internal/protocol.js"
import { marginMs } from "../../packages/cluster/src/internal/requestRecord.js"
import * as NodeMcpWorkers from "../../packages/node/src/NodeMcpWorkers.js"
import { loggedServer } from "./harness.js"

const group = ClusterWorkerId.makeGroup()
const address = RunnerAddress.make("127.0.0.1", 1)

const runner = entities().pipe(
  Layer.provideMerge(Sharding.layer),
  Layer.provide(Runners.layerNoop),
  Layer.provideMerge(MessageStorage.layer),
  Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
  Layer.provide(
    ShardingConfig.layer({
      runnerAddress: Option.some(address),
      availableShardGroups: [group],
      assignedShardGroups: [group],
      shardsPerGroup: 1,
      // the storage loop runs when the test asks (`pollStorage`), and at start
      entityMessagePollInterval: Duration.hours(1),
      refreshAssignmentsInterval: Duration.millis(50)
    })
  ),
  Layer.provideMerge(
    Layer.merge(
      Layer.scoped(LocalWorkers, NodeMcpWorkers.make()),
      Layer.succeed(SelfRunner, { group, address: "127.0.0.1:1" })
    )
  )
)

type Entity = typeof WorkerEntity | typeof ControlEntity

/** What became of a message: refused by the cluster before its entity saw it, or answered. */
type Sent = { readonly refusedBy?: string; readonly exit?: Exit.Exit<unknown, unknown> }

/** Sends a message as a runner's server does with one from another runner; its reply's exit, or the refusal. */
const send = (entity: Entity, workerId: string, requestId: Snowflake.Snowflake, tag: string, payload: object) =>
  Effect.gen(function* (): Effect.fn.Return<Sent, never, Sharding.Sharding> {
    const sharding = yield* Sharding.Sharding
    const entityId = EntityId.make(workerId)
    const replied = yield* Deferred.make<Exit.Exit<unknown, unknown>>()
    const message = new Message.IncomingRequest({
      envelope: {
        _tag: "Request",
        requestId,
        address: EntityAddress.make({
          shardId: sharding.getShardId(entityId, group),
          entityType: entity.type,
          entityId
        }),
        tag,
        payload,
        headers: Headers.empty
      },
      lastSentReply: Option.none(),
      respond: (reply: Reply.ReplyWithContext<any>) =>
        reply.reply._tag === "WithExit" ? Deferred.succeed(replied, reply.reply.exit) : Effect.void
    })
    const sent = yield* Effect.either(sharding.send(message))
    if (sent._tag === "Left") return { refusedBy: sent.left._tag }
    return { exit: yield* Deferred.await(replied) }
  })

const failureTag = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? (exit.cause.error as { _tag: string })._tag : undefined

const awaitOwnShard = Effect.gen(function* () {
  const sharding = yield* Sharding.Sharding
  const shardId = sharding.getShardId(EntityId.make("ready"), group)
  while (!sharding.hasShardId(shardId)) yield* Effect.sleep(20)
})

describe("a runner's memory (C89)", () => {
  it.live(
    "C89: the cluster forgets the ids it answered in its storage loop; the runner's record refuses their repeats",
    () => {
      const log = loggedServer()
      return Effect.gen(function* () {
        yield* awaitOwnShard
        const sharding = yield* Sharding.Sharding
        const workers = yield* LocalWorkers
        const workerId = ClusterWorkerId.make(yield* workers.open(log.config), group)
        const call = (requestId: Snowflake.Snowflake, token: string) =>
          send(WorkerEntity, workerId, requestId, "Request", {
            workerId,
            operation: "callTool",
            args: ["echo", { token }],
            budgetMs: 10_000,
            call: randomUUID()
          })
        const status = (requestId: Snowflake.Snowflake) =>
          send(ControlEntity, workerId, requestId, "Status", { workerId, budgetMs: 10_000 })
        const ran = (token: string) => log.lines().filter((line) => line.event === "call" && line.token === token)

        const first = yield* sharding.getSnowflake
        const answered = yield* call(first, "first")
        assert.isTrue(answered.exit !== undefined && Exit.isSuccess(answered.exit), JSON.stringify(answered))
        const asked = yield* sharding.getSnowflake
        const statusAnswered = yield* status(asked)
        assert.isTrue(statusAnswered.exit !== undefined && Exit.isSuccess(statusAnswered.exit))

        // the cluster remembers both ids until its storage loop runs
        assert.deepStrictEqual(yield* call(first, "first"), { refusedBy: "AlreadyProcessingMessage" })
        assert.deepStrictEqual(yield* status(asked), { refusedBy: "AlreadyProcessingMessage" })

        // it forgets them when its loop runs (the internals `messageStorage.ts` stands on) …
        yield* sharding.pollStorage
        let repeat = yield* call(first, "first")
        for (let i = 0; i < 250 && repeat.refusedBy !== undefined; i++) {
          yield* Effect.sleep(20)
          repeat = yield* call(first, "first")
        }
        assert.isUndefined(repeat.refusedBy, "the cluster's storage loop did not forget the ids its entities answered")
        // … and the runner's record refuses the repeat: it reached the entity, and ran nothing
        assert.strictEqual(failureTag(repeat.exit!), "DeliveryUnknown")
        assert.strictEqual(failureTag((yield* status(asked)).exit!), "DeliveryUnknown")
        assert.strictEqual(ran("first").length, 1)

        // a request whose caller's budget had passed by its stamp is refused unrun, though no record names it
        const stale = Snowflake.make({
          machineId: MachineId.make(3),
          sequence: 0,
          timestamp: Date.now() - 10_000 - marginMs - 1_000
        })
        assert.strictEqual(failureTag((yield* call(stale, "stale")).exit!), "DeliveryUnknown")
        assert.strictEqual(ran("stale").length, 0)

        // and the worker serves on
        const next = yield* call(yield* sharding.getSnowflake, "next")
        assert.isTrue(next.exit !== undefined && Exit.isSuccess(next.exit))
        assert.strictEqual(ran("next").length, 1)
      }).pipe(Effect.provide(runner), Effect.ensuring(Effect.sync(log.remove)))
    },
    60_000
  )
})

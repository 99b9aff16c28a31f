import * as EntityId from "@effect/cluster/EntityId"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import type * as SocketServer from "@effect/platform/SocketServer"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { defaultCloseTimeoutMs, defaultRequestTimeoutMs } from "@mcp-worker/core/McpWorkers"
import * as NodeMcpWorkers from "@mcp-worker/node/NodeMcpWorkers"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as McpCluster from "../McpCluster.js"
import * as ClusterWorkerId from "../ClusterWorkerId.js"
import * as client from "./client.js"
import { controlHandlers, LocalWorkers, SelfRunner, workerHandlers } from "./facade.js"
import * as MessageStorage from "./messageStorage.js"
import { ControlEntity, WorkerEntity } from "./protocol.js"
import * as RequestRecord from "./requestRecord.js"
import * as runners from "./runners.js"
import * as Transport from "./transport.js"

const millis = (input: Duration.DurationInput | undefined, fallback: number): number =>
  input === undefined ? fallback : Duration.toMillis(Duration.decode(input))

const shardingConfig = (options: McpCluster.Options, group: string) =>
  ShardingConfig.layer({
    runnerAddress: Option.map(Option.fromNullable(options.runner), (runner) =>
      RunnerAddress.make(runner.host, runner.port)
    ),
    runnerListenAddress: Option.flatMap(Option.fromNullable(options.runner), (runner) =>
      runner.listenHost === undefined && runner.listenPort === undefined
        ? Option.none()
        : Option.some(RunnerAddress.make(runner.listenHost ?? runner.host, runner.listenPort ?? runner.port))
    ),
    // One shard per process start: it can only ever be this process's.
    availableShardGroups: [group],
    assignedShardGroups: [group],
    shardsPerGroup: 1,
    // Lock numbers index each runner's group list alike: lock by shard name instead.
    shardLockDisableAdvisory: true,
    // The weight tells restarts on one address apart (`Runner` equality); it places nothing.
    runnerShardWeight: 1 + Math.floor(Math.random() * 1_000_000) / 1_000_000_000,
    shardLockExpiration: options.runnerExpiration ?? Duration.seconds(20),
    refreshAssignmentsInterval: options.refreshInterval ?? Duration.seconds(1),
    sendRetryInterval: Duration.millis(100),
    simulateRemoteSerialization: false,
    preemptiveShutdown: true,
    // C89
    entityMessagePollInterval: Duration.seconds(10)
  })

const clusterRuntime = (options: McpCluster.Options, group: string) => {
  const config = shardingConfig(options, group)
  const transport =
    options.runner === undefined
      ? SocketRunner.layerClientOnly.pipe(Layer.provide(Transport.layerClientProtocol))
      : SocketRunner.layer.pipe(Layer.provide([Transport.layerSocketServer, Transport.layerClientProtocol]))
  const storage = SqlRunnerStorage.layerWith({ prefix: options.tablePrefix ?? "mcp_worker" }).pipe(
    Layer.provide(config),
    // Runners starting together on a fresh Postgres race on `CREATE TABLE`; a retry finds the tables.
    Layer.retry(Schedule.intersect(Schedule.jittered(Schedule.spaced(Duration.millis(200))), Schedule.recurs(5)))
  )
  return transport.pipe(
    Layer.provideMerge(storage),
    // No pings: a partitioned owner's shard could move nowhere, and eviction would cancel its calls.
    Layer.provide(RunnerHealth.layerNoop),
    // C37
    Layer.provide(MessageStorage.layer),
    Layer.provide(config),
    Layer.provide(options.serialization === "ndjson" ? RpcSerialization.layerNdjson : RpcSerialization.layerMsgPack)
  )
}

// C89. Per runner: a layer value is shared wherever it appears in one build.
export const entities = () =>
  Layer.mergeAll(
    WorkerEntity.toLayer(workerHandlers, {
      // C8: the registry alone refuses a second request.
      mailboxCapacity: "unbounded",
      concurrency: "unbounded",
      // A defect never rebuilds the facade to replay what was in flight.
      disableFatalDefects: true
    }),
    ControlEntity.toLayer(controlHandlers, {
      mailboxCapacity: "unbounded",
      concurrency: "unbounded",
      disableFatalDefects: true
    })
  ).pipe(Layer.provide(Layer.fresh(RequestRecord.layer)))

// Only then can another process reach an id it gives out.
const awaitOwnShard = (sharding: Sharding.Sharding["Type"], group: string, timeoutMs: number) => {
  const shardId = sharding.getShardId(EntityId.make("ready"), group)
  return Effect.gen(function* () {
    while (!sharding.hasShardId(shardId)) yield* Effect.sleep(50)
  }).pipe(
    Effect.timeoutFail({
      duration: Duration.millis(timeoutMs),
      onTimeout: () => new Error(`the runner did not acquire its shard (${group}) within ${timeoutMs} ms`)
    }),
    Effect.orDie
  )
}

export const layer = (
  options: McpCluster.Options
): Layer.Layer<McpWorkers | SelfRunner, SocketServer.SocketServerError | SqlError.SqlError, SqlClient.SqlClient> =>
  layerWith(options, Layer.scoped(LocalWorkers, NodeMcpWorkers.make(options.host)))

export const layerWith = (
  options: McpCluster.Options,
  localWorkers: Layer.Layer<LocalWorkers>
): Layer.Layer<McpWorkers | SelfRunner, SocketServer.SocketServerError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const group = ClusterWorkerId.makeGroup()
      const address = options.runner === undefined ? null : `${options.runner.host}:${options.runner.port}`
      const self = { group, address }
      const defaults = {
        requestTimeoutMs: millis(options.requestTimeout, defaultRequestTimeoutMs),
        closeTimeoutMs: millis(options.closeTimeout, defaultCloseTimeoutMs)
      }
      const selfLayer = Layer.succeed(SelfRunner, self)
      const service = Layer.scoped(
        McpWorkers,
        Effect.gen(function* () {
          const sharding = yield* Sharding.Sharding
          const view = yield* runners.make(options.refreshInterval ?? Duration.seconds(1))
          const local = yield* Effect.serviceOption(LocalWorkers)
          if (Option.isSome(local)) yield* awaitOwnShard(sharding, group, millis(options.readyTimeout, 30_000))
          return yield* client.make({ self, local, sharding, view, defaults })
        })
      )
      if (options.runner === undefined) {
        return Layer.merge(service, selfLayer).pipe(Layer.provide(clusterRuntime(options, group)))
      }
      return Layer.merge(service, selfLayer).pipe(
        Layer.provide(entities()),
        Layer.provide(Layer.merge(localWorkers, selfLayer)),
        Layer.provide(clusterRuntime(options, group))
      )
    })
  )

// Nagle off: an interrupt and the next request are two small frames; the second would wait ~40 ms for an ACK.
import * as Runners from "@effect/cluster/Runners"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Socket } from "@effect/platform/Socket"
import type * as SocketServer from "@effect/platform/SocketServer"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

export const layerClientProtocol: Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization> =
  Layer.effect(
    Runners.RpcClientProtocol,
    Effect.gen(function* () {
      const serialization = yield* RpcSerialization.RpcSerialization
      return Effect.fnUntraced(function* (address) {
        const socket = yield* NodeSocket.makeNet({
          openTimeout: 1000,
          timeout: 5500,
          host: address.host,
          port: address.port,
          noDelay: true
        })
        return yield* RpcClient.makeProtocolSocket().pipe(
          Effect.provideService(Socket, socket),
          Effect.provideService(RpcSerialization.RpcSerialization, serialization)
        )
      }, Effect.orDie)
    })
  )

export const layerSocketServer: Layer.Layer<
  SocketServer.SocketServer,
  SocketServer.SocketServerError,
  ShardingConfig.ShardingConfig
> = Effect.gen(function* () {
  const config = yield* ShardingConfig.ShardingConfig
  const address = Option.orElse(config.runnerListenAddress, () => config.runnerAddress)
  if (Option.isNone(address)) return yield* Effect.die("the runner has no address to listen on")
  return NodeSocketServer.layer({ ...address.value, noDelay: true })
}).pipe(Layer.unwrapEffect)

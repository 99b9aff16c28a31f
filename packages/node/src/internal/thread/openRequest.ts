/** C18: the Effect and Promise clients share this, so both refuse alike. @internal */
import type { InvalidInput } from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as ResultFile from "@mcp-worker/core/ResultFile"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as ToolFilter from "@mcp-worker/core/ToolFilter"
import type * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import { types } from "node:util"
import * as Metrics from "../metrics/metrics.js"
import * as Budget from "../shared/budget.js"
import { checkSpillDirectory } from "../transport/resultPaths.js"
import type * as Protocol from "./protocol.js"

/** @internal */
export interface OpenRequest {
  readonly open: Omit<typeof Protocol.RemoteOpen.Type, "_tag" | "deadline">
  readonly budgetMs: number | undefined
}

/** @internal */
export const openRequest = (
  input: unknown,
  options: McpWorkers.OpenOptions | undefined
): Either.Either<OpenRequest, InvalidInput> =>
  Either.map(
    Either.all([
      ServerConfig.normalize(input, process.env, { isProxy: types.isProxy }),
      Either.mapLeft(Budget.budgetOf(options?.timeout as Duration.DurationInput | undefined), (message) =>
        Budget.invalidTimeout("config", message)
      ),
      McpWorkers.placementOf(options),
      ResultFile.openPolicyOf(options, checkSpillDirectory),
      ToolFilter.check(options?.tools),
      Metrics.openNameOf(options)
    ]),
    ([config, budgetMs, placement, spill, tools, name]) => ({
      budgetMs,
      open: {
        config: ServerConfig.toWire(config),
        ...(placement.isolation === "thread" ? {} : { isolation: placement.isolation }),
        ...(placement.maxOldGenerationSizeMb === undefined
          ? {}
          : { maxOldGenerationSizeMb: placement.maxOldGenerationSizeMb }),
        ...(spill === undefined ? {} : { spill }),
        ...(tools === undefined ? {} : { tools }),
        ...(name === undefined ? {} : { name })
      }
    })
  )

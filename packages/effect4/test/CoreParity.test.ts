// C69: the Effect 4 face is checked against core's definitions, so a drift of either fails the suite. At run time it
// walks core's error module (every schema: the union, each tag's fields, optionality and literals), compares messages
// over every literal, and compares the request table; at compile time it compares the service's operations, their
// parameters and failures, and every option and model type with core's.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as SchemaAST from "effect/SchemaAST"
import type * as CoreAgentHost from "../../core/src/agentHost/AgentHost.js"
import type * as CoreMcpConfig from "../../core/src/agentHost/McpConfig.js"
import * as CoreErrors from "../../core/src/McpWorkerError.js"
import type * as CoreMcpWorkers from "../../core/src/McpWorkers.js"
import type * as CoreOpenAll from "../../core/src/agentHost/OpenAll.js"
import * as CoreOperations from "../../core/src/Operations.js"
import type * as CoreResultFile from "../../core/src/ResultFile.js"
import type * as CoreServerConfig from "../../core/src/ServerConfig.js"
import * as CoreTasks from "../../core/src/Tasks.js"
import type * as CoreToolFilter from "../../core/src/ToolFilter.js"
import * as CoreWorkerStatus from "../../core/src/WorkerStatus.js"
import type * as CoreMcpClient from "../../node/src/McpClient.js"
import type * as CoreNodeMcpWorkers from "../../node/src/NodeMcpWorkers.js"
import type * as PromiseHost from "../../node/src/PromiseHost.js"
import type { FailureOf as CoreFailureOf } from "../../../test/core/effect3Types.js"
import type * as AgentHost from "../src/AgentHost.js"
import { arities, attributesOf } from "../src/internal/face.js"
import type * as Implementation from "../src/internal/implementation.js"
import * as Errors from "../src/McpWorkerError.js"
import type * as McpClient from "../src/McpClient.js"
import type * as McpWorkers from "../src/McpWorkers.js"
import type * as NodeMcpWorkers from "../src/NodeMcpWorkers.js"
import * as Tasks from "../src/Tasks.js"
import * as WorkerStatus from "../src/WorkerStatus.js"

/** A schema's encoded form, the same for an Effect 3 and an Effect 4 AST: what crosses, field by field. */
type Shape =
  | { readonly kind: string }
  | { readonly literal: unknown }
  | { readonly union: ReadonlyArray<Shape> }
  | { readonly fields: Readonly<Record<string, { readonly optional: boolean; readonly type: Shape }>> }

const keywords: Record<string, string> = {
  StringKeyword: "string",
  String: "string",
  NumberKeyword: "number",
  Number: "number",
  BooleanKeyword: "boolean",
  Boolean: "boolean",
  UnknownKeyword: "unknown",
  Unknown: "unknown",
  UndefinedKeyword: "undefined",
  Undefined: "undefined",
  Null: "null"
}

// JSON with sorted keys: the order of members and fields is no part of a shape.
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v
  )

const sorted = (shapes: ReadonlyArray<Shape>) => [...shapes].sort((a, b) => canonical(a).localeCompare(canonical(b)))

const shapeOf = (ast: any): Shape => {
  if (ast._tag in keywords) return { kind: keywords[ast._tag]! }
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null ? { kind: "null" } : { literal: ast.literal }
    case "Union": {
      const members = (ast.types as Array<any>).map(shapeOf).flatMap((s) => ("union" in s ? s.union : [s]))
      return { union: sorted(members) }
    }
    // Effect 3: a class, a refinement or a transformation is encoded as what it comes from.
    case "Transformation":
    case "Refinement":
      return shapeOf(ast.from)
    case "TypeLiteral":
    case "Objects": {
      assert.deepStrictEqual(ast.indexSignatures ?? [], [], "no index signatures in an error")
      const fields: Record<string, { optional: boolean; type: Shape }> = {}
      for (const property of ast.propertySignatures) {
        const optional = property.isOptional ?? property.type.context?.isOptional ?? false
        const type = shapeOf(property.type)
        // An optional field reads the same whether or not its type also names `undefined`.
        const own =
          optional && "union" in type ? type.union.filter((s) => !("kind" in s && s.kind === "undefined")) : []
        fields[String(property.name)] = {
          optional,
          type: own.length === 0 ? type : own.length === 1 ? own[0]! : { union: own }
        }
      }
      return { fields }
    }
  }
  throw new Error(`no shape for an AST ${ast._tag}`)
}

// Effect 4 keeps a class's encoding in its chain; Effect 3 in the AST itself.
const shape4 = (schema: { readonly ast: SchemaAST.AST }) => shapeOf(SchemaAST.toEncoded(schema.ast))
const shape3 = (schema: { readonly ast: unknown }) => shapeOf(schema.ast)

const isSchema3 = (value: unknown): value is { readonly ast: { readonly _tag: string } } =>
  (typeof value === "function" || typeof value === "object") &&
  value !== null &&
  typeof (value as { ast?: { _tag?: unknown } }).ast?._tag === "string"

// Each module of core whose schemas cross into this package, with its twin here.
const twins: ReadonlyArray<readonly [string, object, Record<string, any>]> = [
  ["McpWorkerError", CoreErrors, Errors],
  ["WorkerStatus", CoreWorkerStatus, WorkerStatus]
]
// The error classes: an Effect 3 class is encoded as a transformation from its fields.
const coreClasses = Object.entries(CoreErrors).filter(
  ([, value]) => isSchema3(value) && value.ast._tag === "Transformation" && "fields" in value
) as Array<[string, new (fields: any) => Error & { readonly _tag: string }]>
const face = Errors as unknown as Record<string, any>

// Sample field values of a shape: a base value and one variant per literal, per empty string, per optional field.
const valuesOf = (shape: Shape, name: string): Array<unknown> => {
  if ("literal" in shape) return [shape.literal]
  if ("union" in shape) return shape.union.flatMap((member) => valuesOf(member, name))
  if ("fields" in shape)
    return [Object.fromEntries(Object.entries(shape.fields).map(([k, f]) => [k, valuesOf(f.type, k)[0]]))]
  switch (shape.kind) {
    case "string":
      return [`${name}-1`, ""]
    case "number":
      return [4096, 0]
    case "boolean":
      return [true, false]
    case "null":
      return [null]
    default:
      return [{ at: name }]
  }
}

const samplesOf = (shape: Shape): Array<Record<string, unknown>> => {
  if (!("fields" in shape)) return []
  const fields = Object.entries(shape.fields).filter(([name]) => name !== "_tag")
  const base: Record<string, unknown> = {}
  for (const [name, field] of fields) if (!field.optional) base[name] = valuesOf(field.type, name)[0]
  const samples = [base]
  for (const [name, field] of fields) {
    for (const value of valuesOf(field.type, name)) samples.push({ ...base, [name]: value })
  }
  return samples
}

describe("the Effect 4 face against core (C69)", () => {
  it("every schema of core's error and status modules has its twin here: the same tags, fields and literals", () => {
    let walked = 0
    for (const [module, core, own] of twins) {
      for (const [name, schema] of Object.entries(core)) {
        if (!isSchema3(schema)) continue
        assert.isDefined(own[name], `${module}.${name} is missing`)
        assert.deepStrictEqual(shape4(own[name]), shape3(schema), `${module}.${name}`)
        walked++
      }
    }
    assert.isAtLeast(walked, 22)
    for (const [name, error] of coreClasses) {
      assert.strictEqual(face[name].identifier, (error as any).identifier, `${name}'s identifier`)
    }
    // The union is walked member by member: 14 tags today, whatever core has tomorrow.
    const tags = (CoreErrors.McpWorkerError.members as ReadonlyArray<{ fields: { _tag: { ast: any } } }>).map(
      (member) => member.fields._tag.ast.literal ?? member.fields._tag.ast.type?.literal
    )
    assert.includeMembers(tags, ["InputRoundsExceeded", "UnusableResult", "DeliveryUnknown", "ResultTooLarge"])
    assert.strictEqual(Errors.McpWorkerError.members.length, tags.length)
  })

  it("every error says the same message as core's, over every literal, optional field and empty id", () => {
    let compared = 0
    for (const [name, error] of coreClasses) {
      for (const sample of samplesOf(shape3(error as unknown as { ast: unknown }))) {
        const core = new error(sample)
        const own = new face[name](sample)
        assert.strictEqual(own._tag, core._tag)
        assert.strictEqual(own.message, core.message, `${name} ${JSON.stringify(sample)}`)
        compared++
      }
      // A field core fills in by default (`delivery: "not_sent"`) is filled in here too, and no other.
      const shape = shape3(error as unknown as { ast: unknown })
      const base = samplesOf(shape)[0]!
      for (const field of Object.keys(base)) {
        const { [field]: _, ...without } = base
        const made = (make: new (fields: any) => unknown) => {
          try {
            new make(without)
            return true
          } catch {
            return false
          }
        }
        assert.strictEqual(made(face[name]), made(error), `${name} without ${field}`)
      }
    }
    assert.strictEqual(coreClasses.length, CoreErrors.McpWorkerError.members.length)
    assert.isAtLeast(compared, 60)
  })

  it("the request table: the same requests, arities, spans and span attributes as core's", () => {
    assert.deepStrictEqual(Object.keys(arities).sort(), Object.keys(CoreOperations.requests).sort())
    const table: Readonly<Record<string, CoreOperations.Any>> = { ...CoreOperations.requests }
    for (const [name, operation] of Object.entries(table)) {
      const own = name as keyof typeof arities
      assert.strictEqual(arities[own], operation.arity, name)
      assert.strictEqual(`McpWorkers.${name}`, operation.span)
      const args = ["a-name", { a: 1 }].slice(0, operation.arity)
      assert.deepStrictEqual(attributesOf(own, "mcpw_x", args), { workerId: "mcpw_x", ...operation.attributes?.(args) })
    }
    assert.strictEqual(Tasks.relatedTaskKey, CoreTasks.relatedTaskKey)
    assert.strictEqual(Tasks.extensionId, CoreTasks.extensionId)
  })

  it.effect("compile-time checks hold (this file type-checks only when the types agree)", () =>
    Effect.sync(() => assert.isTrue(Object.values(typeChecks).every((check) => check === true)))
  )
})

// Compile time: `Same` is `true` only when both types are mutually assignable.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] }
// The same keys, and the same type for each key but those named (budgets and secrets are each Effect's own).
type SameFields<A, B, Own extends PropertyKey = never> =
  Same<KnownKeys<A>, KnownKeys<B>> extends true
    ? false extends { [K in Exclude<KnownKeys<A>, Own>]: Same<A[K], K extends keyof B ? B[K] : never> }[Exclude<
        KnownKeys<A>,
        Own
      >]
      ? false
      : true
    : false
type FailureOf<T> =
  T extends Effect.Effect<any, infer E, any> ? E : T extends Stream.Stream<any, infer E, any> ? E : never
type Tags<E> = E extends { readonly _tag: infer T } ? T : never

type CoreService = CoreMcpWorkers.McpWorkersService
type Service = McpWorkers.McpWorkersService
type ParameterCounts<S> = { [K in keyof S]: S[K] extends (...args: infer P) => any ? P["length"] : never }
type FailureTags<S, Failure extends "core" | "face"> = {
  [K in keyof S]: S[K] extends (...args: any) => infer R
    ? Tags<Failure extends "core" ? CoreFailureOf<R> : FailureOf<R>>
    : never
}
type StdioKeys = Exclude<KnownKeys<CoreServerConfig.StdioConfigInput>, keyof CoreServerConfig.IgnoredKeysInput>
type HttpKeys = Exclude<KnownKeys<CoreServerConfig.HttpConfigInput>, keyof CoreServerConfig.IgnoredKeysInput>
type Credentials<A> = Extract<A, { readonly type: "client_credentials" }>
type CoreResult<K extends keyof CoreOperations.Requests> =
  CoreOperations.Requests[K] extends CoreOperations.Operation<any, any, infer A> ? A : never
type CoreTask = CoreResult<"startTask">["task"]
// A list is read-only on this face and mutable in the SDK's types: compared with both read-only, all the way down.
type DeepReadonly<T> =
  T extends ReadonlyArray<infer A>
    ? ReadonlyArray<DeepReadonly<A>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T

const typeChecks: {
  readonly operations: Same<keyof CoreService, keyof Service>
  readonly parameters: Same<ParameterCounts<CoreService>, ParameterCounts<Service>>
  readonly failures: Same<FailureTags<CoreService, "core">, FailureTags<Service, "face">>
  readonly errorTags: Same<CoreErrors.McpWorkerError["_tag"], Errors.McpWorkerError["_tag"]>
  readonly requestErrorTags: Same<CoreErrors.RequestError["_tag"], Errors.RequestError["_tag"]>
  readonly requestOptions: SameFields<
    CoreOperations.RequestOptions,
    McpWorkers.RequestOptions,
    "timeout" | "idleTimeout"
  >
  readonly listOptions: SameFields<CoreOperations.ListOptions, McpWorkers.ListOptions, "timeout" | "idleTimeout">
  readonly callToolOptions: SameFields<
    CoreOperations.CallToolOptions,
    McpWorkers.CallToolOptions,
    "timeout" | "idleTimeout"
  >
  readonly progress: SameFields<CoreOperations.Progress, McpWorkers.Progress>
  readonly openOptions: SameFields<CoreMcpWorkers.OpenOptions, McpWorkers.OpenOptions, "timeout">
  readonly closeOptions: SameFields<CoreMcpWorkers.CloseOptions, McpWorkers.CloseOptions, "timeout">
  readonly eventsOptions: SameFields<CoreMcpWorkers.EventsOptions, McpWorkers.EventsOptions>
  readonly notification: SameFields<CoreMcpWorkers.ServerNotification, McpWorkers.ServerNotification>
  readonly toolFilter: SameFields<CoreToolFilter.ToolFilter, McpWorkers.ToolFilter>
  readonly tooLarge: Same<CoreResultFile.TooLargePolicy, McpWorkers.TooLargePolicy>
  readonly saved: SameFields<CoreResultFile.SavedResult, McpWorkers.SavedResult>
  readonly spilled: SameFields<CoreResultFile.SpilledResult, McpWorkers.SpilledResult, "content">
  readonly stdioConfig: Same<StdioKeys, KnownKeys<McpWorkers.StdioConfig>>
  readonly httpConfig: Same<HttpKeys, KnownKeys<McpWorkers.HttpConfig>>
  readonly credentials: SameFields<
    Credentials<CoreServerConfig.AuthInput>,
    Credentials<NonNullable<McpWorkers.HttpConfig["auth"]>>,
    "clientSecret" | "privateKey"
  >
  readonly describeOptions: SameFields<
    CoreAgentHost.DescribeOptions,
    AgentHost.DescribeOptions,
    "timeout" | "idleTimeout"
  >
  readonly openAllOptions: SameFields<
    CoreOpenAll.OpenAllOptions<CoreMcpWorkers.OpenOptions>,
    AgentHost.OpenAllOptions,
    "open" | "entries" | "inputs"
  >
  readonly document: SameFields<CoreMcpConfig.Document, AgentHost.Document, "servers">
  readonly inputDeclaration: SameFields<CoreMcpConfig.InputDeclaration, AgentHost.InputDeclaration>
  readonly status: SameFields<CoreWorkerStatus.WorkerStatus, WorkerStatus.WorkerStatus>
  // A result's `_meta` is the server's own data, an open record here; a list is read-only here.
  readonly startTaskOptions: SameFields<
    CoreTasks.StartTaskOptions,
    Tasks.StartTaskOptions,
    "timeout" | "idleTimeout" | "ttl"
  >
  readonly task: SameFields<CoreTask, Tasks.Task>
  readonly createTask: SameFields<CoreResult<"startTask">, Tasks.CreateTaskResult, "_meta">
  readonly taskState: SameFields<CoreResult<"getTask">, Tasks.TaskState, "_meta">
  readonly cancelledState: SameFields<CoreResult<"cancelTask">, Tasks.TaskState, "_meta">
  readonly listTasks: SameFields<CoreResult<"listTasks">, Tasks.ListTasksResult, "_meta" | "tasks">
  // C98: a result's blocks narrow by `type` alike on every face.
  readonly contentBlock: Same<
    DeepReadonly<CoreResult<"callTool">["content"][number]>,
    DeepReadonly<McpWorkers.ContentBlock>
  >
  readonly callToolResult: SameFields<CoreResult<"callTool">, McpWorkers.CallToolResult, "_meta" | "content">
  readonly listedTask: Same<CoreResult<"listTasks">["tasks"][number], CoreTask>
  readonly hostOptions: Same<keyof CoreNodeMcpWorkers.Options, keyof NodeMcpWorkers.Options>
  readonly handlers: Same<keyof CoreNodeMcpWorkers.Handlers, keyof NodeMcpWorkers.Handlers>
  readonly serverRequest: SameFields<CoreNodeMcpWorkers.ServerRequest, NodeMcpWorkers.ServerRequest>
  readonly oauth: Same<keyof CoreNodeMcpWorkers.OAuthProvider, keyof NodeMcpWorkers.OAuthProvider>
  // McpClient's OAuth and early `close` are not offered here (README): the boundary's `withClient` has neither.
  readonly clientOptions: Same<Exclude<keyof CoreMcpClient.Options, "oauth">, keyof McpClient.Options>
  readonly clientOperations: Same<Exclude<keyof CoreMcpClient.McpClient, "close">, keyof McpClient.McpClient>
  // The implementation's declared surface is what @mcp-worker/node's Promise host offers.
  readonly surface: Same<
    Exclude<keyof PromiseHost.PromiseHost, typeof Symbol.asyncDispose>,
    keyof Implementation.Surface
  >
  readonly surfaceOperations: Same<Exclude<keyof Implementation.Surface, "dispose">, keyof Service>
} = {
  operations: true,
  parameters: true,
  failures: true,
  errorTags: true,
  requestErrorTags: true,
  requestOptions: true,
  listOptions: true,
  callToolOptions: true,
  progress: true,
  openOptions: true,
  closeOptions: true,
  eventsOptions: true,
  notification: true,
  toolFilter: true,
  tooLarge: true,
  saved: true,
  spilled: true,
  stdioConfig: true,
  httpConfig: true,
  credentials: true,
  describeOptions: true,
  openAllOptions: true,
  document: true,
  inputDeclaration: true,
  status: true,
  startTaskOptions: true,
  task: true,
  createTask: true,
  taskState: true,
  cancelledState: true,
  listTasks: true,
  contentBlock: true,
  callToolResult: true,
  listedTask: true,
  hostOptions: true,
  handlers: true,
  serverRequest: true,
  oauth: true,
  clientOptions: true,
  clientOperations: true,
  surface: true,
  surfaceOperations: true
}

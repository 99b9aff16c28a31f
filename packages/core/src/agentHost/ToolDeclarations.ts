/**
 * TypeScript declarations of a server's tools, rendered from its `tools/list` result: what agent code needs to
 * read before it calls a tool, in the form a compiler checks.
 *
 * One method per tool on one interface, its parameter typed from the tool's `inputSchema`, its result from its
 * `outputSchema` where the tool has one (else the raw `CallToolResult`, declared in the output), its title,
 * description and annotations as doc comments. The text compiles on its own with `strict: true`: a schema it cannot
 * express becomes `unknown` with a comment saying why. A tool whose name is not an identifier gets a safe method
 * name (`methodNames`, shared with `ToolBinding`), and `toolNames` maps each method to the tool's real name.
 *
 * @since 0.1.0
 */
import * as Binding from "@mcp-worker/caller/Binding"
import type * as CallerOptions from "@mcp-worker/caller/Options"
import * as ResultFile from "@mcp-worker/caller/ResultFile"
import type { ListToolsResult, Tool } from "@modelcontextprotocol/client"
import * as SchemaType from "../internal/schemaType.js"

/**
 * Options of `render`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends CallerOptions.Rendering {}

/**
 * The names of the declarations every rendering holds besides the tools' own.
 *
 * @since 0.1.0
 * @category constants
 */
export const helperNames: ReadonlyArray<string> = [
  "CallToolResult",
  "ContentBlock",
  "StructuredResult",
  "SavedResult",
  "SpilledResult",
  "ToolCallOptions",
  "Progress",
  "AbortSignalLike",
  "toolNames"
]

/**
 * The method name of each tool, in list order (`@mcp-worker/caller/Binding`'s, the one rule every binding follows).
 *
 * @since 0.1.0
 * @category utils
 */
export const methodNames: (tools: ReadonlyArray<string>) => ReadonlyArray<readonly [method: string, tool: string]> =
  Binding.methodNames

/**
 * Renders the declarations of a `tools/list` result (or of its `tools`, several pages joined).
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (tools: ListToolsResult | ReadonlyArray<Tool>, options?: Options): string => {
  const list: ReadonlyArray<unknown> = Array.isArray(tools) ? tools : ((tools as ListToolsResult).tools ?? [])
  const valid = list.filter(
    (tool): tool is Tool => typeof tool === "object" && tool !== null && typeof (tool as Tool).name === "string"
  )
  const interfaceName = typeName(options?.name ?? "Tools")
  const used = new Set<string>([...helperNames, interfaceName])
  const allocate = (base: string): string => {
    let name = base
    for (let n = 2; used.has(name); n++) name = `${base}${n}`
    used.add(name)
    return name
  }
  const methods: Array<string> = []
  const declarations: Array<string> = []
  const names: Array<string> = []
  const pairs = methodNames(valid.map((tool) => tool.name))
  valid.forEach((tool, i) => {
    const [method, real] = pairs[i]
    const prefix = SchemaType.pascal(method)
    const args = renderType(tool.inputSchema, prefix, allocate, declarations)
    const argsName = allocate(`${prefix}Args`)
    declarations.push(`export type ${argsName} = ${args.text}`)
    let resultName = "CallToolResult"
    if (tool.outputSchema !== undefined) {
      const output = renderType(tool.outputSchema, prefix, allocate, declarations)
      const outputName = allocate(`${prefix}Output`)
      resultName = allocate(`${prefix}Result`)
      declarations.push(
        `export type ${outputName} = ${output.text}`,
        `export type ${resultName} = StructuredResult<${outputName}>`
      )
    }
    // An optional parameter cannot come before the required options of the saveTo overload.
    const saveParam = args.required ? `args: ${argsName}` : `args: ${argsName} | undefined`
    const param = args.required ? `args: ${argsName}` : `args?: ${argsName}`
    const comment = toolComment(tool, method, real)
    const key = propertyKey(method)
    methods.push(
      `${comment}  ${key}(${saveParam}, options: ToolCallOptions & { readonly saveTo: string }): Promise<SavedResult>`,
      // A spilled answer is a CallToolResult, but not a StructuredResult: said where the call asks for a spill. Its
      // comment would be the tool's a third time, for a reader (an agent) who has read it twice already.
      ...(tool.outputSchema === undefined
        ? []
        : [
            `  ${key}(${saveParam}, options: ToolCallOptions & { readonly onTooLarge: { readonly spill: string } }): Promise<${resultName} | SpilledResult>`
          ]),
      `${comment}  ${key}(${param}, options?: ToolCallOptions): Promise<${resultName}>`
    )
    names.push(`  readonly ${propertyKey(method)}: ${JSON.stringify(real)}`)
  })
  const skipped = list.length - valid.length
  const body = [
    ...helpers,
    `/** The server's tools, one method each. */\n` +
      (methods.length === 0
        ? `export interface ${interfaceName} {}`
        : `export interface ${interfaceName} {\n${methods.join("\n")}\n}`),
    ...declarations,
    `/** The real tool name of each method. */\n` +
      `export ${options?.namespace === undefined ? "declare " : ""}const toolNames: {${names.length === 0 ? "" : `\n${names.join("\n")}\n`}}`
  ].join("\n\n")
  const header = [
    `/**`,
    ` * Declarations of ${valid.length} MCP tool${valid.length === 1 ? "" : "s"}, rendered from tools/list by mcp-worker.`,
    ...(options?.title === undefined ? [] : [` * ${oneLine(options.title)}`]),
    ...(skipped === 0 ? [] : [` * ${skipped} entr${skipped === 1 ? "y" : "ies"} without a name left out.`]),
    ` */`
  ].join("\n")
  if (options?.namespace === undefined) return `${header}\n${body}\n`
  const indented = body.replaceAll(/^(?=.)/gm, "  ")
  return `${header}\nexport declare namespace ${typeName(options.namespace)} {\n${indented}\n}\n`
}

// internal

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

const typeName = (name: string): string => (identifier.test(name) ? name : SchemaType.pascal(name))

const propertyKey = (name: string): string => SchemaType.propertyName(name)

const oneLine = (text: string): string => SchemaType.commentSafe(text.replaceAll(/\s+/g, " ").trim())

const renderType = (
  schema: unknown,
  prefix: string,
  allocate: (base: string) => string,
  declarations: Array<string>
): { readonly text: string; readonly required: boolean } => {
  const document: SchemaType.Document = {
    root: schema,
    named: new Map(),
    prefix,
    allocate,
    emitted: [],
    budget: { left: 20_000 }
  }
  const text = SchemaType.render(document)
  for (const named of document.emitted) declarations.push(`export type ${named.name} = ${named.text}`)
  const required =
    typeof schema === "object" &&
    schema !== null &&
    Array.isArray((schema as { required?: unknown }).required) &&
    (schema as { required: Array<unknown> }).required.length > 0
  return { text, required }
}

const toolComment = (tool: Tool, method: string, real: string): string => {
  const lines: Array<string> = []
  const title = tool.title ?? tool.annotations?.title
  if (typeof title === "string" && title.trim() !== "") lines.push(oneLine(title), "")
  if (typeof tool.description === "string" && tool.description.trim() !== "") {
    lines.push(...SchemaType.commentSafe(tool.description.trim()).split(/\r?\n/), "")
  }
  if (method !== real) lines.push(`@tool ${SchemaType.commentSafe(JSON.stringify(real))}`)
  const annotations = tool.annotations
  if (typeof annotations === "object" && annotations !== null) {
    for (const key of Object.keys(annotations)) {
      if (key === "title") continue
      const tag = key.replace(/[^A-Za-z0-9_]/g, "_")
      lines.push(
        `@${tag} ${SchemaType.commentSafe(JSON.stringify((annotations as Record<string, unknown>)[key]) ?? "")}`
      )
    }
  }
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  if (lines.length === 0) return ""
  return `  /**\n${lines.map((line) => (line === "" ? "   *" : `   * ${line}`)).join("\n")}\n   */\n`
}

// The SDK's result shapes, declared here so the output needs no import.
const helpers: ReadonlyArray<string> = [
  `/** One block of a tool's content. */
export type ContentBlock =
  | { readonly type: "text"; readonly text: string; readonly [key: string]: unknown }
  | { readonly type: "image"; readonly data: string; readonly mimeType: string; readonly [key: string]: unknown }
  | { readonly type: "audio"; readonly data: string; readonly mimeType: string; readonly [key: string]: unknown }
  | { readonly type: "resource_link"; readonly uri: string; readonly name: string; readonly [key: string]: unknown }
  | {
      readonly type: "resource"
      readonly resource:
        | { readonly uri: string; readonly mimeType?: string; readonly text: string; readonly [key: string]: unknown }
        | { readonly uri: string; readonly mimeType?: string; readonly blob: string; readonly [key: string]: unknown }
      readonly [key: string]: unknown
    }`,
  `/** The server's raw tools/call result: isError is a business result, not a failure of the call. */
export interface CallToolResult {
  readonly content: ReadonlyArray<ContentBlock>
  readonly structuredContent?: { readonly [key: string]: unknown }
  readonly isError?: boolean
  readonly [key: string]: unknown
}`,
  `/** The result of a tool with an outputSchema: structuredContent follows it unless isError (or it spilled). */
export type StructuredResult<S> =
  | (CallToolResult & { readonly structuredContent: S; readonly isError?: false; readonly spilled?: undefined })
  | (CallToolResult & { readonly isError: true; readonly spilled?: undefined })`,
  `/** What a call with saveTo answers: the raw result is in the file. */
export interface SavedResult {
${Object.entries(ResultFile.savedResultFields)
  .map(([name, type]) => `  readonly ${name}: ${type}`)
  .join("\n")}
}`,
  `/**
 * What a call answers for a result over maxResultBytes that was spilled to a new file (onTooLarge: { spill }, or
 * the worker's own): where it is, and one text content item saying so. Check spilled === true before reading
 * structuredContent on a worker that spills.
 */
export interface SpilledResult extends SavedResult, CallToolResult {
  readonly spilled: true
  readonly limit: number
  readonly isError: boolean
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
}`,
  `/** One progress notification of a call. */
export interface Progress {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}`,
  `/** An AbortSignal, as far as a call reads it. */
export interface AbortSignalLike {
  readonly aborted: boolean
}`,
  `/** Options of every call: the whole budget (milliseconds, or a duration such as "10 seconds"), a signal, progress. */
export interface ToolCallOptions {
  readonly timeout?: number | string
  readonly signal?: AbortSignalLike
  readonly onProgress?: (progress: Progress) => void
  readonly saveTo?: string
  readonly onTooLarge?: "fail" | { readonly spill: string }
}`
]

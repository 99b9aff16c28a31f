// The members of `McpWorkers.ContentBlock`, field for field the MCP SDK's (CoreParity proves it, C98).

/** What every content block may carry: who it is meant for, and the server's own metadata. */
export interface ContentBlockBase {
  readonly annotations?:
    | {
        readonly audience?: ReadonlyArray<"user" | "assistant"> | undefined
        readonly priority?: number | undefined
        readonly lastModified?: string | undefined
      }
    | undefined
  readonly _meta?: { readonly [key: string]: unknown } | undefined
}

/** A text block. */
export interface TextContent extends ContentBlockBase {
  readonly type: "text"
  readonly text: string
}

/** An image, base64 in `data`. */
export interface ImageContent extends ContentBlockBase {
  readonly type: "image"
  readonly data: string
  readonly mimeType: string
}

/** A sound, base64 in `data`. */
export interface AudioContent extends ContentBlockBase {
  readonly type: "audio"
  readonly data: string
  readonly mimeType: string
}

/** A link to a resource the caller may read. */
export interface ResourceLink extends ContentBlockBase {
  readonly type: "resource_link"
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly size?: number | undefined
  readonly icons?:
    | ReadonlyArray<{
        readonly src: string
        readonly mimeType?: string | undefined
        readonly sizes?: ReadonlyArray<string> | undefined
        readonly theme?: "light" | "dark" | undefined
      }>
    | undefined
}

/** A resource's contents in the result: its text, or its bytes base64 in `blob`. */
export interface EmbeddedResource extends ContentBlockBase {
  readonly type: "resource"
  readonly resource:
    | {
        readonly uri: string
        readonly text: string
        readonly mimeType?: string | undefined
        readonly _meta?: { readonly [key: string]: unknown } | undefined
      }
    | {
        readonly uri: string
        readonly blob: string
        readonly mimeType?: string | undefined
        readonly _meta?: { readonly [key: string]: unknown } | undefined
      }
}

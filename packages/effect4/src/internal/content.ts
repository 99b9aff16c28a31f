// Field for field the MCP SDK's (C98, CoreParity).

/** Who a block is meant for, and the server's own metadata. */
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

export interface TextContent extends ContentBlockBase {
  readonly type: "text"
  readonly text: string
}

/** Base64 in `data`. */
export interface ImageContent extends ContentBlockBase {
  readonly type: "image"
  readonly data: string
  readonly mimeType: string
}

/** Base64 in `data`. */
export interface AudioContent extends ContentBlockBase {
  readonly type: "audio"
  readonly data: string
  readonly mimeType: string
}

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

/** Its text, or its bytes base64 in `blob`. */
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

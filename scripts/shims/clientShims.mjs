// Stands in for `@modelcontextprotocol/client/_shims` (its Node build) in the owner bundle. That module re-exports
// the SDK's Ajv provider, whose chunk carries Ajv itself (about 150 KB), so every owner thread would evaluate Ajv at
// start although the owner validates no JSON Schema unless a server asks for input with one. This class defers
// loading it (esbuild turns the require into a lazily evaluated module) to that first use.
export const CORS_IS_POSSIBLE = false

export class DefaultJsonSchemaValidator {
  constructor(ajv) {
    this.ajv = ajv
    this.real = undefined
  }
  getValidator(schema) {
    if (this.real === undefined) {
      const { AjvJsonSchemaValidator } = require("@modelcontextprotocol/client/validators/ajv")
      this.real = new AjvJsonSchemaValidator(this.ajv)
    }
    return this.real.getValidator(schema)
  }
}

// Stands in for the MCP SDK's validation/ajv-provider.js in the owner bundle. The SDK's Client builds an Ajv
// validator in its constructor, so Ajv (a quarter of the bundle) would be loaded and set up by every owner
// thread at start, although it is only used once a listed tool declares an output schema. This class defers
// loading it (esbuild turns the require into a lazily evaluated module) to that first use.
export class AjvJsonSchemaValidator {
  constructor(ajv) {
    this.ajv = ajv
    this.real = undefined
  }
  getValidator(schema) {
    if (this.real === undefined) {
      const { AjvJsonSchemaValidator: Real } = require("@modelcontextprotocol/sdk/validation/ajv-provider.js")
      this.real = new Real(this.ajv)
    }
    return this.real.getValidator(schema)
  }
}

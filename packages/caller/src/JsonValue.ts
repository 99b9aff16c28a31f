/**
 * JSON plain data: the only thing a config or the arguments of a call may be (C16), and JSON text is the only
 * form in which they cross a thread (C17).
 *
 * `check` walks a value once, iteratively (an explicit stack, so hostile nesting cannot overflow the call stack),
 * without ever running user code: no getter, no `toJSON`, no proxy trap when `isProxy` is given. Once a value
 * has passed, the native `JSON.stringify` writes it exactly, and `JSON.parse` reads it back as the same data.
 *
 * Error messages name the offending path and the kind of value, never the value itself: it may be a secret.
 * `@mcp-worker/core/JsonValue` answers with this module's checks.
 *
 * @since 0.1.0
 */
import { type Checked, invalid, ok } from "./McpWorkerError.js"

/**
 * JSON plain data: what configs and call arguments may hold.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonValue = null | boolean | number | string | JsonArray | JsonObject

/**
 * A dense array of JSON plain data.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonArray = ReadonlyArray<JsonValue>

/**
 * A plain object of JSON plain data.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [k: string]: JsonValue }

/**
 * The deepest nesting of arrays and objects accepted: a value at the root counts as depth 1.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxDepth = 512

/**
 * Where a value comes from (it becomes `InvalidInput.where`) and the name its paths start with (`args`,
 * `config`). `isProxy` lets a platform that can see proxies (Node's `util.types.isProxy`) reject them before
 * any of their traps can run.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckOptions {
  readonly where: "config" | "arguments"
  readonly root: string
  readonly isProxy?: ((u: unknown) => boolean) | undefined
}

/**
 * Validates that a value is JSON plain data, reporting the first offending path in document order.
 *
 * @since 0.1.0
 * @category validation
 */
export const check = (value: unknown, options: CheckOptions): Checked<JsonValue> => {
  if (isPlainFast(value, 0, options.isProxy)) return ok(value as JsonValue)
  const problem = walk(value, options.isProxy)
  return problem === undefined
    ? ok(value as JsonValue)
    : invalid(options.where, formatPath(options.root, problem.path), problem.message)
}

/**
 * Validates a value with `check`, then writes it as JSON text.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (value: unknown, options: CheckOptions): Checked<string> => {
  const checked = check(value, options)
  return checked.ok ? ok(JSON.stringify(checked.value)) : checked
}

/**
 * Where decoded text came from, for the error when it is not JSON (defaults: `"arguments"`, `"args"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  readonly where?: "config" | "arguments" | undefined
  readonly root?: string | undefined
}

/**
 * Reads JSON text. A `"__proto__"` key stays an own data property (that is how `JSON.parse` defines properties),
 * so decoding can never change a prototype. Depth is not limited here: text written by `encode` never nests deeper
 * than `maxDepth`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (text: string, options?: DecodeOptions): Checked<JsonValue> => {
  const parsed = parseOrUndefined(text)
  // The native message quotes the text, which may hold a secret.
  return parsed === undefined
    ? invalid(options?.where ?? "arguments", options?.root ?? "args", "is not valid JSON text")
    : ok(parsed.value)
}

/**
 * Reads JSON text that is known to be valid (it was written by `encode`); throws a `SyntaxError` otherwise.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnsafe = (text: string): JsonValue => JSON.parse(text)

/**
 * Whether a value is a plain object: its prototype is `Object.prototype` (of any realm) or `null`, and it is
 * not an array. Its properties are not inspected.
 *
 * @since 0.1.0
 * @category guards
 */
export const isJsonObject = (u: unknown): u is JsonObject =>
  typeof u === "object" && u !== null && !Array.isArray(u) && isPlainPrototype(Object.getPrototypeOf(u))

/**
 * Appends one key to a path the way `InvalidInput.path` writes them: `.name` for identifier-like keys,
 * `["a b"]` otherwise, `[2]` for array indices.
 *
 * @since 0.1.0
 * @category paths
 */
export const appendPath = (path: string, key: string | number): string =>
  typeof key === "number"
    ? `${path}[${key}]`
    : identifier.test(key)
      ? `${path}.${key}`
      : `${path}[${JSON.stringify(key)}]`

// internal

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

interface Problem {
  readonly path: ReadonlyArray<PathKey>
  readonly message: string
}

type PathKey = string | number | symbol

const formatPath = (root: string, keys: ReadonlyArray<PathKey>): string => {
  let path = root
  for (const key of keys) {
    path = typeof key === "symbol" ? `${path}[${key.toString()}]` : appendPath(path, key)
  }
  return path
}

const parseOrUndefined = (text: string): { readonly value: JsonValue } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/**
 * The common case, checked without allocating anything but the reflection results: `true` only for data the full
 * walk accepts too. Anything it is not sure of — a cycle (it gives up at `maxDepth`), another realm's objects, an
 * array with holes or extra keys, an accessor, a value that throws while inspected — returns `false`, and the walk
 * then finds the problem and its path. Arguments are checked on every request, so this is on the hot path.
 */
const isPlainFast = (value: unknown, depth: number, isProxy: ((u: unknown) => boolean) | undefined): boolean => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(value)
    case "object":
      break
    default:
      return false
  }
  if (value === null) return true
  if (depth >= maxDepth || (isProxy !== undefined && isProxy(value))) return false
  try {
    const proto: unknown = Object.getPrototypeOf(value)
    const keys = Reflect.ownKeys(value)
    // A dense array's own keys are its indices and `length`; anything else (a hole, a named key) goes to the walk.
    const isArray = Array.isArray(value)
    if (
      isArray
        ? proto !== Array.prototype || keys.length !== (value as Array<unknown>).length + 1
        : proto !== Object.prototype && proto !== null
    ) {
      return false
    }
    const count = isArray ? keys.length - 1 : keys.length
    for (let i = 0; i < count; i++) {
      const key = isArray ? i : keys[i]!
      if (typeof key === "symbol") return false
      const descriptor = Object.getOwnPropertyDescriptor(value, key)
      if (
        descriptor === undefined ||
        !descriptor.enumerable ||
        !("value" in descriptor) ||
        !isPlainFast(descriptor.value, depth + 1, isProxy)
      ) {
        return false
      }
    }
    return true
  } catch {
    return false
  }
}

/** One array or object on the current path, with the position of the next child to visit. */
interface Frame {
  readonly container: object
  /** How the container was reached from its parent (unused for the root). */
  readonly key: PathKey
  /** Own keys, in the order `Reflect.ownKeys` (and so `JSON.stringify`) visits them. */
  readonly keys: ReadonlyArray<PathKey>
  /** For arrays: its length; the first `length` keys are its indices. */
  readonly length: number
  readonly isArray: boolean
  next: number
}

// What is wrong with a value that is not an object or an array, if anything.
const scalarProblem = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "number":
      return Number.isFinite(value)
        ? undefined
        : `${Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity"} is not a JSON number; use a finite number or null`
    case "undefined":
      return "undefined is not JSON data; omit the property or use null explicitly"
    case "function":
      return "a function is not JSON data; pass plain data only"
    case "symbol":
      return "a symbol is not JSON data; use a string"
    case "bigint":
      return "a bigint is not a JSON number; use a number or a decimal string"
    default:
      return undefined
  }
}

// What is wrong with one own property of a container (reached by `key`), if anything; its value is checked apart.
const entryProblem = (
  frame: Frame,
  key: PathKey,
  isIndex: boolean,
  descriptor: PropertyDescriptor | undefined
): string | undefined => {
  if (!isIndex) {
    if (frame.isArray) return "an array with a named property is not JSON data; use an object"
    if (typeof key === "symbol") return "a symbol-keyed property is not JSON data; use a string key"
  }
  if (descriptor === undefined) {
    return frame.isArray
      ? "a hole in an array is not JSON data; use null explicitly"
      : "a property vanished while it was being checked"
  }
  if (!("value" in descriptor)) {
    return "an accessor property (getter/setter) is not JSON data; use a plain data property"
  }
  if (!descriptor.enumerable) {
    return "a non-enumerable property is not JSON data (JSON.stringify would drop it); make it enumerable"
  }
  return undefined
}

const walk = (root: unknown, isProxy: ((u: unknown) => boolean) | undefined): Problem | undefined => {
  const stack: Array<Frame> = []
  const onPath = new Set<object>()

  const pathTo = (key: PathKey | undefined): Array<PathKey> => {
    const keys: Array<PathKey> = []
    for (let i = 1; i < stack.length; i++) keys.push(stack[i].key)
    if (key !== undefined) keys.push(key)
    return keys
  }

  // Visits one value reached by `key` from the frame on top of the stack (or the root when the stack is empty):
  // primitives are checked in place, containers are checked shallowly and pushed.
  const visit = (value: unknown, key: PathKey | undefined): string | undefined => {
    if (value === null || typeof value !== "object") return scalarProblem(value)
    const object = value as object
    if (isProxy !== undefined && isProxy(object)) {
      return "a proxy is not JSON plain data; pass a plain copy of the data"
    }
    if (onPath.has(object)) {
      return "a cycle: this value contains itself; JSON cannot represent cycles"
    }
    if (stack.length + 1 > maxDepth) {
      return `nesting deeper than ${maxDepth} levels of arrays and objects is not accepted`
    }
    const isArray = Array.isArray(object)
    const proto: unknown = Object.getPrototypeOf(object)
    if (isArray ? !isArrayPrototype(proto) : !isPlainPrototype(proto)) {
      const name = constructorName(proto)
      return `${describeInstance(object, name)} is not JSON plain data; ${hintFor(object, name)}`
    }
    const keys = Reflect.ownKeys(object)
    const length = isArray ? (object as ReadonlyArray<unknown>).length : 0
    stack.push({ container: object, key: key ?? "", keys, length, isArray, next: 0 })
    onPath.add(object)
    return undefined
  }

  // Exotic objects (a revoked proxy, when `isProxy` is not available) can throw from the reflection used here.
  let currentKey: PathKey | undefined = undefined
  try {
    const rootProblem = visit(root, undefined)
    if (rootProblem !== undefined) return { path: [], message: rootProblem }
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]
      const end = frame.isArray ? frame.length + countExtraKeys(frame) : frame.keys.length
      if (frame.next >= end) {
        stack.pop()
        onPath.delete(frame.container)
        continue
      }
      const position = frame.next++
      const isIndex = frame.isArray && position < frame.length
      // Arrays: what `Reflect.ownKeys` lists after the indices and `length` is extra.
      const key: PathKey = isIndex ? position : frame.isArray ? frame.keys[position + 1] : frame.keys[position]
      currentKey = key
      const descriptor =
        isIndex || (!frame.isArray && typeof key !== "symbol")
          ? Object.getOwnPropertyDescriptor(frame.container, key)
          : undefined
      const entry = entryProblem(frame, key, isIndex, descriptor)
      if (entry !== undefined) return { path: pathTo(key), message: entry }
      const problem = visit(descriptor!.value, key)
      if (problem !== undefined) return { path: pathTo(key), message: problem }
    }
    return undefined
  } catch {
    return {
      path: pathTo(currentKey),
      message: "could not be inspected without an error (a revoked proxy?); pass plain data"
    }
  }
}

// The own keys of a dense array are its indices, then `length`, then anything extra.
const countExtraKeys = (frame: Frame): number => Math.max(0, frame.keys.length - frame.length - 1)

const objectConstructorSource = Function.prototype.toString.call(Object)
const arrayConstructorSource = Function.prototype.toString.call(Array)

// A plain object or array made in another realm (a `node:vm` sandbox) has that realm's intrinsic prototypes:
// recognise them by their native constructors, read as data descriptors so no getter can run.
// A `toJSON` there (the sandbox may set one) would make `JSON.stringify` run code, so such a realm is refused.
const hasNativeConstructor = (proto: object, source: string): boolean => {
  const descriptor = Object.getOwnPropertyDescriptor(proto, "constructor")
  return (
    Object.getOwnPropertyDescriptor(proto, "toJSON") === undefined &&
    descriptor !== undefined &&
    "value" in descriptor &&
    typeof descriptor.value === "function" &&
    Function.prototype.toString.call(descriptor.value) === source
  )
}

const isPlainPrototype = (proto: unknown): boolean =>
  proto === null ||
  proto === Object.prototype ||
  (typeof proto === "object" &&
    Object.getPrototypeOf(proto) === null &&
    hasNativeConstructor(proto as object, objectConstructorSource))

const isArrayPrototype = (proto: unknown): boolean =>
  proto === Array.prototype ||
  (Array.isArray(proto) &&
    isPlainPrototype(Object.getPrototypeOf(proto)) &&
    Object.getPrototypeOf(proto) !== null &&
    hasNativeConstructor(proto, arrayConstructorSource))

// The constructor's name, found without running a getter: the name of a class is not a secret.
const constructorName = (proto: unknown): string | undefined => {
  if (typeof proto !== "object" || proto === null) return undefined
  const descriptor = Object.getOwnPropertyDescriptor(proto, "constructor")
  if (descriptor === undefined || !("value" in descriptor) || typeof descriptor.value !== "function") return undefined
  const name = Object.getOwnPropertyDescriptor(descriptor.value, "name")
  return name !== undefined &&
    "value" in name &&
    typeof name.value === "string" &&
    /^[A-Za-z_$][\w$]{0,63}$/.test(name.value)
    ? name.value
    : undefined
}

const describeInstance = (object: object, name: string | undefined): string => {
  if (name === undefined) {
    return Array.isArray(object) ? "an array with a custom prototype" : "an object with a custom prototype"
  }
  return `${/^[AEIO]/.test(name) ? "an" : "a"} ${name} instance`
}

const hintFor = (object: object, name: string | undefined): string => {
  if (ArrayBuffer.isView(object) || name === "ArrayBuffer" || name === "SharedArrayBuffer") {
    return "encode the bytes as a string (base64) or an array of numbers"
  }
  switch (name) {
    case "Date":
      return "pass a string (date.toISOString()) or a number"
    case "Map":
      return "pass a plain object or an array of entries"
    case "Set":
      return "pass an array"
    case "RegExp":
      return "pass its source as a string"
    case "String":
    case "Number":
    case "Boolean":
      return "pass the primitive value, not a boxed object"
  }
  return name !== undefined && name.endsWith("Error")
    ? "pass its message as a string"
    : "pass a plain object (an object literal) or an array"
}

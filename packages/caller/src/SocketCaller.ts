/**
 * The socket plane, for a surface that stands on it (the Effect face, `NodeMcpWorkers.layerConnect`), and the facts
 * of the socket protocol (docs/wire.md) that the listener reads from here: one source for both sides of the wire.
 *
 * @since 0.1.0
 */
import type * as Plane from "./Plane.js"
import * as Socket from "./internal/socket/index.js"
import * as Connection from "./internal/socket/connection.js"

/**
 * Where the socket plane connects: the listener's socket path, and the bound of one frame.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = Socket.Options

/**
 * The socket plane of the listener at `options.path`. Nothing connects until the first call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Plane.Plane = Socket.make

/**
 * Why a spill is refused over a socket: it names a directory of the listener's host, which a grant has no say over.
 *
 * @since 0.1.0
 * @category models
 */
export const spillRefused: string = Socket.spillRefused

/**
 * The protocol's name in the handshake (C110).
 *
 * @since 0.1.0
 * @category protocol
 */
export const protocol: string = Connection.protocol

/**
 * The version of the socket protocol this package speaks (C110).
 *
 * @since 0.1.0
 * @category protocol
 */
export const version: number = Connection.version

/**
 * The default bound of one frame, on both sides: 16 MiB. Bigger results go to a file (`saveTo`).
 *
 * @since 0.1.0
 * @category protocol
 */
export const defaultMaxFrameBytes: number = Connection.defaultMaxFrameBytes

/**
 * While calls are in flight, a caller pings this often; a listener's idle bound is at least twice it (C46).
 *
 * @since 0.1.0
 * @category protocol
 */
export const pingEveryMs: number = Connection.pingEveryMs

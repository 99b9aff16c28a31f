/**
 * What the server tells the owner unasked: the notifications handed on to the host, and the progress of a request
 * in flight, matched to its request here.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import type * as OwnerProtocol from "../../OwnerProtocol.js"
import type { Connection, Machine } from "./state.js"

// The notifications handed on to the host, which counts them and gives them to whoever listens (`events`).
const notificationSchemas = [
  ToolListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  PromptListChangedNotificationSchema,
  LoggingMessageNotificationSchema
] as const

/** @internal */
export const forwardNotifications = (machine: Machine, client: Client): void => {
  for (const schema of notificationSchemas) {
    client.setNotificationHandler(schema, (notification) => {
      machine.port.post({
        _tag: "Notification",
        method: notification.method,
        params: JSON.stringify(notification.params ?? {})
      })
    })
  }
}

// Plain data of the server's progress notification: what the protocol defines, nothing else it may carry.
const progressOf = (progress: {
  progress: number
  total?: number | undefined
  message?: string | undefined
}): OwnerProtocol.Progress => ({
  progress: progress.progress,
  ...(typeof progress.total === "number" ? { total: progress.total } : {}),
  ...(typeof progress.message === "string" ? { message: progress.message } : {})
})

/**
 * Progress is matched to its request here, not by the SDK's `onprogress`: the SDK hands a notification to its
 * handler a microtask later but forgets the request's handler as soon as the response is read, so the last progress
 * of a server that answers in the same write is lost. Here a request's token is forgotten only once its outcome was
 * handled, which is after every notification read before its response.
 *
 * @internal
 */
export const forwardProgress = (machine: Machine, connection: Connection): void => {
  connection.client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
    const requestId = String(notification.params.progressToken)
    const controller = connection.progress.get(requestId)
    if (controller === undefined || controller.aborted) return
    machine.port.post({ _tag: "Progress", requestId, progress: progressOf(notification.params) })
  })
}

/** The request's params with its progress token, which is its request id (unique in this owner). @internal */
export const withProgressToken = (params: Record<string, unknown>, requestId: string) => ({
  ...params,
  _meta: {
    ...(typeof params._meta === "object" && params._meta !== null ? params._meta : {}),
    progressToken: requestId
  }
})

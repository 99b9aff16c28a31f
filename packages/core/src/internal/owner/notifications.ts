/**
 * What the server tells the owner unasked: the notifications handed on to the host, and the progress of a request
 * in flight, matched to its request here.
 */
import type { Client } from "@modelcontextprotocol/client"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as ParamHeaders from "./paramHeaders.js"
import * as Tasks from "./tasks.js"
import * as Idle from "./idle.js"
import type { Connection, Machine, Modern } from "./state.js"

// The notifications handed on to the host, which counts them and gives them to whoever listens (`events`). A legacy
// server sends them unasked; a modern one on the subscriptions/listen stream, whose notifications reach the same
// handlers (C57).
const notificationMethods = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
  "notifications/prompts/list_changed",
  "notifications/message"
] as const

/** @internal */
export const forwardNotifications = (machine: Machine, client: Client): void => {
  for (const method of notificationMethods) {
    client.setNotificationHandler(method, (notification) => {
      // The tools changed: what their definitions declared for headers is forgotten until they are listed (C62).
      if (method === "notifications/tools/list_changed" && machine.state._tag === "Ready") {
        const known = machine.state.connection.modern?.params
        if (known !== undefined) ParamHeaders.forget(known)
        Tasks.forget(machine.state.connection.taskSupport)
      }
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
  connection.client.setNotificationHandler("notifications/progress", (notification) => {
    const requestId = String(notification.params.progressToken)
    Idle.progressed(machine, connection, requestId)
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

/**
 * The `subscriptions/listen` stream of a modern connection (C57): every list change the server advertises, and the
 * resources subscribed to. Its notifications reach the handlers `forwardNotifications` set, as a legacy server's
 * unsolicited ones do. Opened anew when the subscribed resources change; the previous stream is closed after the new
 * one is acknowledged, so no notification between the two is lost. A stream the server refuses or ends leaves the
 * worker ready: requests do not depend on it.
 *
 * @internal
 */
export const listen = (connection: Connection, modern: Modern): Promise<void> => {
  const capabilities = connection.client.getServerCapabilities() ?? {}
  const filter = {
    ...(capabilities.tools?.listChanged === true ? { toolsListChanged: true } : {}),
    ...(capabilities.prompts?.listChanged === true ? { promptsListChanged: true } : {}),
    ...(capabilities.resources?.listChanged === true ? { resourcesListChanged: true } : {}),
    ...(modern.subscribed.size > 0 ? { resourceSubscriptions: [...modern.subscribed] } : {})
  }
  if (Object.keys(filter).length === 0) return Promise.resolve()
  const previous = modern.listening
  return connection.client.listen(filter).then(
    (subscription) => {
      modern.listening = subscription
      if (previous !== undefined) void previous.close().catch(() => {})
    },
    () => {}
  )
}

/** What the server tells the owner unasked. */
import type { Client } from "@modelcontextprotocol/client"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import { NotificationMethod } from "../ownerProtocol/messages.js"
import * as ParamHeaders from "./paramHeaders.js"
import * as Tasks from "./tasks.js"
import * as Idle from "./idle.js"
import type { Connection, Machine, Modern } from "./state.js"

/** C57: the subscriptions/listen stream reaches the same handlers. @internal */
export const forwardNotifications = (machine: Machine, client: Client): void => {
  for (const method of NotificationMethod.literals) {
    client.setNotificationHandler(method, (notification) => {
      // C62
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

const progressOf = (progress: {
  progress: number
  total?: number | undefined
  message?: string | undefined
}): OwnerProtocol.Progress => ({
  progress: progress.progress,
  ...(typeof progress.total === "number" ? { total: progress.total } : {}),
  ...(typeof progress.message === "string" ? { message: progress.message } : {})
})

/** Not the SDK's `onprogress`, which drops progress written along with the response. @internal */
export const forwardProgress = (machine: Machine, connection: Connection): void => {
  connection.client.setNotificationHandler("notifications/progress", (notification) => {
    const requestId = String(notification.params.progressToken)
    Idle.progressed(machine, connection, requestId)
    const controller = connection.progress.get(requestId)
    if (controller === undefined || controller.aborted) return
    machine.port.post({ _tag: "Progress", requestId, progress: progressOf(notification.params) })
  })
}

/** The request id is unique in this owner. @internal */
export const withProgressToken = (params: Record<string, unknown>, requestId: string) => ({
  ...params,
  _meta: {
    ...(typeof params._meta === "object" && params._meta !== null ? params._meta : {}),
    progressToken: requestId
  }
})

/** C57 @internal */
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

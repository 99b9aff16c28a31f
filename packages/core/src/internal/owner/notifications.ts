/** What the server tells the owner unasked; its progress goes to the request it names (`requests.ts`). */
import type { Client } from "@modelcontextprotocol/client"
import { NotificationMethod } from "../ownerProtocol/messages.js"
import * as ParamHeaders from "./paramHeaders.js"
import * as Tasks from "./tasks.js"
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

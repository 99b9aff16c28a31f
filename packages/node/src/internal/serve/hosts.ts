// C118: one registry for every plane; the public view hands out nothing of it.
import type * as HostViewFace from "../../HostView.js"
import type { HostRegistry } from "../host/service.js"

const byView = new WeakMap<HostViewFace.HostViewService, HostRegistry>()

/** @internal */
export const remember = (registry: HostRegistry): void => {
  byView.set(registry.view, registry)
}

/** @internal */
export const registryOf = (view: HostViewFace.HostViewService): HostRegistry | undefined => byView.get(view)

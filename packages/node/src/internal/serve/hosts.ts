/**
 * The registry behind a host's view: what lets a plane built beside a host (the gateway) reach that host's workers
 * through the requests its other planes use, on one registry (C118), while the public view hands out nothing of it.
 *
 * @internal
 */
import type * as HostViewFace from "../../HostView.js"
import type { HostRegistry } from "../host/layer.js"

const byView = new WeakMap<HostViewFace.HostViewService, HostRegistry>()

/** Remembers the registry a view is of. @internal */
export const remember = (registry: HostRegistry): void => {
  byView.set(registry.view, registry)
}

/** The registry `view` is of, if a host layer made it. @internal */
export const registryOf = (view: HostViewFace.HostViewService): HostRegistry | undefined => byView.get(view)

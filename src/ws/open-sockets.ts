/**
 * Open sockets by what can invalidate their credential: the key they
 * authenticated with, its user, its organization. An invalidation then finds
 * the sockets it concerns without scanning every open one.
 */
import type { Principal } from "../../protocol/auth.js"
import type { Invalidation } from "../access/service.js"

const add = <S>(map: Map<string, Set<S>>, key: string, socket: S) => {
  let set = map.get(key)
  if (set === undefined) map.set(key, (set = new Set()))
  set.add(socket)
}

const remove = <S>(map: Map<string, Set<S>>, key: string, socket: S) => {
  const set = map.get(key)
  if (set === undefined) return
  set.delete(socket)
  if (set.size === 0) map.delete(key)
}

export class OpenSockets<S> {
  private readonly byKey = new Map<string, Set<S>>()
  private readonly byUser = new Map<string, Set<S>>()
  private readonly byOrg = new Map<string, Set<S>>()

  add(socket: S, principal: Principal): void {
    if (principal.keyId !== undefined) add(this.byKey, principal.keyId, socket)
    add(this.byUser, principal.userUuid, socket)
    add(this.byOrg, principal.orgUuid, socket)
  }

  remove(socket: S, principal: Principal): void {
    if (principal.keyId !== undefined) remove(this.byKey, principal.keyId, socket)
    remove(this.byUser, principal.userUuid, socket)
    remove(this.byOrg, principal.orgUuid, socket)
  }

  /** The sockets whose credential `what` may have changed. */
  affected(what: Invalidation): Set<S> {
    const found = new Set<S>()
    const collect = (map: Map<string, Set<S>>, key: unknown) => {
      if (typeof key !== "string") return
      for (const socket of map.get(key) ?? []) found.add(socket)
    }
    collect(this.byKey, what.keyId)
    collect(this.byUser, what.userUuid)
    collect(this.byOrg, what.orgUuid)
    return found
  }
}

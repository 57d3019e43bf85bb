/**
 * The shape of what an area asks of the organization's actor (`actors/org.ts`): its part of the
 * organization's snapshot, compiled and cached in this process, and the notice after a change.
 * Each area declares its own port with it (policies: `OrgPolicies`, whitelist: `OrgWhitelist`).
 */
import type * as Effect from "effect/Effect"

export interface OrgSnapshotPort<A> {
  readonly get: (orgUuid: string) => Effect.Effect<A>
  /** After a committed change: the actor reloads; this and every other process drop older copies. Answers the new version. */
  readonly changed: (orgUuid: string) => Effect.Effect<number>
}

/**
 * OrgActor(org): one cluster entity per organization holding its active
 * policies and approved whitelist entries + mode, with a version. It loads
 * them from Postgres when it starts and reloads them on `Reload`, which the
 * policies and whitelist services send after their writes commit. `Snapshot`
 * answers the data (plain data: in CLUSTER_MODE=sql it may cross processes).
 *
 * Versions come from the clock (at least previous + 1), so they keep
 * increasing when the entity restarts after passivation or a shard move.
 *
 * Callers go through `OrgSnapshots`, which keeps each organization's compiled
 * snapshot (policies with their conditions compiled, patterns parsed) in a
 * local cache keyed by version: an actor round trip per authorize would cost
 * far more than evaluating (see NOTES), so the actor is asked only on a miss.
 * A change bumps the version known here at once (same-server reads follow
 * immediately) and is announced on the Fanout topic `org-snapshot:<org>` so
 * other processes drop older compiled copies.
 */
import * as Context from "effect/Context"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import type { Sharding } from "effect/cluster/Sharding"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Rpc from "effect/rpc/Rpc"
import * as Schema from "effect/Schema"
import type { SqlClient } from "effect/sql"
import { Fanout } from "../src/platform/redis/index.js"
import { toEvaluable } from "../src/policies/evaluable.js"
import { makePoliciesStore } from "../src/policies/store.js"
import type { EvaluablePolicy } from "../src/policies/types.js"
import { type ParsedPattern, parsePattern } from "../src/whitelist/patterns.js"
import { makeWhitelistStore } from "../src/whitelist/store.js"

export const ORG_SNAPSHOT_TOPIC = "org-snapshot"

const SnapshotPolicy = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mode: Schema.Literals(["rules", "ai", "consensus", "content_scan"]),
  decision: Schema.Literals(["allow", "require_approval", "deny"]),
  priority: Schema.Number,
  created_at: Schema.String,
  status: Schema.Literals(["draft", "active", "inactive"]),
  scope: Schema.Struct({ agent_ids: Schema.Array(Schema.String), action_types: Schema.Array(Schema.String) }),
  conditions: Schema.Unknown,
  scan_config: Schema.Unknown
})

const SnapshotEntry = Schema.Struct({ id: Schema.String, url_pattern: Schema.String, tls_fingerprint: Schema.NullOr(Schema.String) })

/** The organization's data as the entity holds it. */
export const OrgSnapshotData = Schema.Struct({
  version: Schema.Number,
  policies: Schema.Array(SnapshotPolicy),
  whitelist: Schema.Struct({ mode: Schema.Literals(["strict", "permissive"]), entries: Schema.Array(SnapshotEntry) })
})
export type OrgSnapshotData = typeof OrgSnapshotData.Type

export const OrgActor = Entity.make("OrgActor", [
  Rpc.make("Snapshot", { success: OrgSnapshotData }),
  Rpc.make("Reload", { success: Schema.Number })
]).annotateRpcs(ClusterSchema.Persisted, false)

/** Reads the organization's active policies, approved entries and mode. */
const makeLoader = Effect.gen(function* () {
  const policies = yield* makePoliciesStore
  const whitelist = yield* makeWhitelistStore
  return (orgUuid: string) =>
    Effect.all([policies.active(orgUuid), whitelist.approvedEntries(orgUuid), whitelist.mode(orgUuid)], { concurrency: 3 }).pipe(
      Effect.map(([rows, entries, mode]) => ({
        policies: rows.map((row) => ({
          id: row.id,
          name: row.name,
          mode: row.mode,
          decision: row.decision,
          priority: row.priority,
          created_at: row.created_at,
          status: row.status,
          scope: { agent_ids: [...row.scope.agent_ids], action_types: [...row.scope.action_types] },
          conditions: row.conditions,
          scan_config: row.scan_config
        })),
        whitelist: { mode, entries: entries.map((entry) => ({ id: entry.id, url_pattern: entry.url_pattern, tls_fingerprint: entry.tls_fingerprint })) }
      })),
      Effect.orDie
    )
})

export interface OrgActorOptions {
  readonly maxIdleMs?: number
}

/** Registers the entity with Sharding; needs SqlClient and Sharding. */
export const orgActorLayer = (options: OrgActorOptions = {}) =>
  OrgActor.toLayer(
    Effect.gen(function* () {
      const orgUuid = (yield* Entity.CurrentAddress).entityId
      const load = yield* makeLoader
      let snapshot: OrgSnapshotData = { version: Date.now(), ...(yield* load(orgUuid)) }
      return OrgActor.of({
        Snapshot: () => Effect.sync(() => snapshot),
        // Messages are handled one at a time, so a reload never interleaves with another.
        Reload: () =>
          Effect.map(load(orgUuid), (data) => {
            snapshot = { version: Math.max(snapshot.version + 1, Date.now()), ...data }
            return snapshot.version
          })
      })
    }),
    { maxIdleTime: options.maxIdleMs ?? 60_000 }
  )

export interface CompiledEntry {
  readonly pattern: ParsedPattern | undefined
  readonly tls_fingerprint: string | null
}

/** A snapshot ready for the hot path. */
export interface CompiledOrgSnapshot {
  readonly version: number
  readonly policies: ReadonlyArray<EvaluablePolicy>
  readonly whitelist: { readonly mode: "strict" | "permissive"; readonly entries: ReadonlyArray<CompiledEntry> }
}

export const compileSnapshot = (data: OrgSnapshotData): CompiledOrgSnapshot => ({
  version: data.version,
  policies: data.policies.map(toEvaluable),
  whitelist: {
    mode: data.whitelist.mode,
    entries: data.whitelist.entries.map((entry) => ({ pattern: parsePattern(entry.url_pattern), tls_fingerprint: entry.tls_fingerprint }))
  }
})

/** The callers' side: the compiled snapshot (cached here by version) and the change notice. */
export class OrgSnapshots extends Context.Service<
  OrgSnapshots,
  {
    readonly get: (orgUuid: string) => Effect.Effect<CompiledOrgSnapshot>
    /** Asks the entity for its current data, bypassing the local cache. */
    readonly fetch: (orgUuid: string) => Effect.Effect<OrgSnapshotData>
    /** After a committed change: the entity reloads; this and every other process drop older copies. */
    readonly changed: (orgUuid: string) => Effect.Effect<number>
  }
>()("gateway/OrgSnapshots") {
  static readonly layer: Layer.Layer<OrgSnapshots, never, Sharding | Fanout> = Layer.effect(OrgSnapshots)(
    Effect.gen(function* () {
      const client = yield* OrgActor.client
      const fanout = yield* Fanout
      const cache = new Map<string, CompiledOrgSnapshot>()
      /** The newest version this process has heard of, per organization. */
      const known = new Map<string, number>()

      const learn = (orgUuid: string, version: number) => {
        if (version > (known.get(orgUuid) ?? 0)) known.set(orgUuid, version)
        const cached = cache.get(orgUuid)
        if (cached !== undefined && cached.version < version) cache.delete(orgUuid)
      }

      yield* fanout.subscribe(
        (topic, message) => {
          const orgUuid = topic.slice(ORG_SNAPSHOT_TOPIC.length + 1)
          const version = Number(message)
          if (orgUuid && Number.isFinite(version)) learn(orgUuid, version)
        },
        { topicPrefix: `${ORG_SNAPSHOT_TOPIC}:` }
      )

      // Cluster failures (mailbox full, runner gone) are defects: a 500 with a request_id.
      const fetch = (orgUuid: string) => client(orgUuid).Snapshot().pipe(Effect.orDie)

      return OrgSnapshots.of({
        get: (orgUuid) => {
          const cached = cache.get(orgUuid)
          if (cached !== undefined) return Effect.succeed(cached)
          return Effect.map(fetch(orgUuid), (data) => {
            const compiled = compileSnapshot(data)
            // A reply older than a change heard meanwhile is used once, never cached.
            if (data.version >= (known.get(orgUuid) ?? 0)) {
              const current = cache.get(orgUuid)
              if (current === undefined || current.version < data.version) cache.set(orgUuid, compiled)
            }
            return compiled
          })
        },
        fetch,
        changed: (orgUuid) =>
          client(orgUuid)
            .Reload()
            .pipe(
              Effect.orDie,
              Effect.tap((version) =>
                Effect.andThen(
                  Effect.sync(() => learn(orgUuid, version)),
                  fanout.publish(`${ORG_SNAPSHOT_TOPIC}:${orgUuid}`, String(version))
                )
              )
            )
      })
    })
  )
}

/** The entity and the callers' side; needs SqlClient, Fanout and Sharding. */
export const orgActorsLayer = (options: OrgActorOptions = {}) => Layer.merge(orgActorLayer(options), OrgSnapshots.layer)

export type OrgActorRequirements = SqlClient.SqlClient | Fanout | Sharding

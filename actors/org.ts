/**
 * OrgActor(org): one cluster entity per organization holding its active
 * policies and approved whitelist entries + mode, with a version. It loads
 * them from Postgres when it starts and reloads them on `Reload`, which the
 * policies and whitelist services send after their writes commit. `Snapshot`
 * answers the data (plain data: in CLUSTER_MODE=sql it may cross processes).
 *
 * Versions come from the database (the sequence `org_snapshot_versions`, taken with each load),
 * so every process compares them the same way whatever its clock says, and they keep increasing
 * when the entity restarts after passivation or a shard move.
 *
 * Callers go through `OrgSnapshots` (the areas through their ports,
 * `OrgPolicies` and `OrgWhitelist`, implemented here), which keeps each
 * organization's compiled snapshot (policies with their conditions compiled,
 * patterns parsed) in a bounded local cache: an actor round trip per authorize
 * would cost far more than evaluating (see NOTES), so the actor is asked only
 * on a miss. A change drops the older copy here at once (same-server reads
 * follow immediately) and is announced with its version on the Fanout topic
 * `org-snapshot:<org>` so other processes drop theirs. A process that misses an announcement
 * (Redis down, a partition) is bounded anyway: a cached copy older than `maxStalenessMs`
 * (30 s by default) is fetched again from the actor.
 */
import * as Cache from "effect/Cache"
import * as Context from "effect/Context"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import type { Sharding } from "effect/cluster/Sharding"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Rpc from "effect/rpc/Rpc"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { record } from "../src/platform/metrics.js"
import { Fanout } from "../src/platform/redis/index.js"
import { EvaluableRow, toEvaluable } from "../src/policies/evaluable.js"
import { OrgPolicies, type OrgPolicySnapshot } from "../src/policies/ports.js"
import { makePoliciesStore } from "../src/policies/store.js"
import { parsePattern } from "../src/whitelist/patterns.js"
import { OrgWhitelist, type WhitelistSnapshot } from "../src/whitelist/ports.js"
import { makeWhitelistStore } from "../src/whitelist/store.js"

export const ORG_SNAPSHOT_TOPIC = "org-snapshot"

/**
 * Compiled snapshots kept per process, least recently used dropped first. 10,000 organizations
 * (a few KB each, more with many patterns) bounds the memory of a process serving many tenants;
 * an organization dropped costs one actor round trip on its next authorize.
 */
const CACHE_CAPACITY = 10_000

/** Lookups of the compiled snapshot cache, and those that had to ask the actor (hits are the difference). */
const snapshotLookups = Metric.counter("org_snapshot_cache_lookups_total", { description: "Lookups of organizations' compiled snapshots", incremental: true })
const snapshotMisses = Metric.counter("org_snapshot_cache_misses_total", {
  description: "Snapshot lookups that asked the organization's actor (absent, expired or invalidated)",
  incremental: true
})

/** How long a process may answer from its copy without hearing of a change (a missed announcement). */
const DEFAULT_MAX_STALENESS_MS = 30_000

const SnapshotEntry = Schema.Struct({ id: Schema.String, url_pattern: Schema.String, tls_fingerprint: Schema.NullOr(Schema.String) })

/** The organization's data as the entity holds it. */
export const OrgSnapshotData = Schema.Struct({
  version: Schema.Number,
  policies: Schema.Array(EvaluableRow),
  whitelist: Schema.Struct({ mode: Schema.Literals(["strict", "permissive"]), entries: Schema.Array(SnapshotEntry) })
})
export type OrgSnapshotData = typeof OrgSnapshotData.Type

/** The data, for callers that missed their cache. */
const Snapshot = Rpc.make("Snapshot", { success: OrgSnapshotData })
/** Reload from Postgres after a committed change; answers the new version. */
const Reload = Rpc.make("Reload", { success: Schema.Number })

export const OrgActor = Entity.make("OrgActor", [Snapshot, Reload]).annotateRpcs(ClusterSchema.Persisted, false)

/** Reads the organization's active policies, approved entries and mode. */
const makeLoader = Effect.gen(function* () {
  const policies = yield* makePoliciesStore
  const whitelist = yield* makeWhitelistStore
  const sql = yield* SqlClient.SqlClient
  // Taken before the reads: the data is at least as new as its version says.
  const nextVersion = sql<{ version: string }>`SELECT nextval('org_snapshot_versions') AS version`.pipe(Effect.map((rows) => Number(rows[0]!.version)))
  return (orgUuid: string) =>
    Effect.flatMap(nextVersion, (version) =>
      Effect.all([policies.active(orgUuid), whitelist.approvedEntries(orgUuid), whitelist.mode(orgUuid)], { concurrency: 3 }).pipe(
      Effect.map(([rows, entries, mode]) => ({
        version,
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
          scan_config: row.scan_config,
          ai_prompt: row.ai_prompt,
          ai_models: row.ai_models === null ? null : [...row.ai_models],
          updated_at: row.updated_at
        })),
        whitelist: { mode, entries: entries.map((entry) => ({ id: entry.id, url_pattern: entry.url_pattern, tls_fingerprint: entry.tls_fingerprint })) }
      }))
    )).pipe(Effect.orDie)
})

export interface OrgActorOptions {
  readonly maxIdleMs?: number
}

export interface OrgSnapshotsOptions {
  /** A cached copy older than this is fetched again (default 30 s). */
  readonly maxStalenessMs?: number
}

/** Registers the entity with Sharding; needs SqlClient and Sharding. */
export const orgActorLayer = (options: OrgActorOptions = {}) =>
  OrgActor.toLayer(
    Effect.gen(function* () {
      const orgUuid = (yield* Entity.CurrentAddress).entityId
      const load = yield* makeLoader
      let snapshot: OrgSnapshotData = yield* load(orgUuid)
      return OrgActor.of({
        Snapshot: () => Effect.sync(() => snapshot),
        // Messages are handled one at a time, so a reload never interleaves with another.
        Reload: () =>
          Effect.map(load(orgUuid), (data) => {
            snapshot = data
            return snapshot.version
          })
      })
    }),
    { maxIdleTime: options.maxIdleMs ?? 60_000 }
  )

/** A snapshot ready for the hot path: what both ports answer. */
export interface CompiledOrgSnapshot extends OrgPolicySnapshot {
  readonly whitelist: WhitelistSnapshot
}

export const compileSnapshot = (data: OrgSnapshotData): CompiledOrgSnapshot => ({
  version: data.version,
  policies: data.policies.map(toEvaluable),
  whitelist: {
    mode: data.whitelist.mode,
    entries: data.whitelist.entries.map((entry) => ({ pattern: parsePattern(entry.url_pattern), tls_fingerprint: entry.tls_fingerprint }))
  }
})

/** The callers' side: the compiled snapshot (cached here) and the change notice. */
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
  static readonly layer: Layer.Layer<OrgSnapshots, never, Sharding | Fanout> = OrgSnapshots.layerWith()

  static layerWith(options: OrgSnapshotsOptions = {}): Layer.Layer<OrgSnapshots, never, Sharding | Fanout> {
    const maxStaleness = Duration.millis(options.maxStalenessMs ?? DEFAULT_MAX_STALENESS_MS)
    return Layer.effect(OrgSnapshots)(
    Effect.gen(function* () {
      const client = yield* OrgActor.client
      const fanout = yield* Fanout

      // Cluster failures (mailbox full, runner gone) are defects: a 500 with a request_id.
      const fetch = (orgUuid: string) => client(orgUuid).Snapshot().pipe(Effect.orDie)

      const cache = yield* Cache.makeWith((orgUuid: string) => Effect.map(Effect.andThen(Effect.sync(() => record(snapshotMisses, 1)), fetch(orgUuid)), compileSnapshot), {
        capacity: CACHE_CAPACITY,
        // A failed fetch is not kept: the next call asks again.
        timeToLive: (exit) => (Exit.isSuccess(exit) ? maxStaleness : Duration.zero)
      })

      /**
       * A change to `version` was heard: drop an older copy, and a fetch still under way (its reply
       * may predate the change; its callers use it once, it is not kept).
       */
      const learn = (orgUuid: string, version: number) =>
        Effect.flatMap(Cache.getSuccess(cache, orgUuid), (cached) =>
          Option.isSome(cached) && cached.value.version >= version ? Effect.void : Cache.invalidate(cache, orgUuid)
        )

      yield* fanout.subscribe(
        (topic, message) => {
          const orgUuid = topic.slice(ORG_SNAPSHOT_TOPIC.length + 1)
          const version = Number(message)
          // The handler is synchronous; learning only touches the in-memory cache.
          if (orgUuid && Number.isFinite(version)) Effect.runSync(learn(orgUuid, version))
        },
        { topicPrefix: `${ORG_SNAPSHOT_TOPIC}:` }
      )

      return OrgSnapshots.of({
        get: (orgUuid) => {
          record(snapshotLookups, 1)
          return Cache.get(cache, orgUuid)
        },
        fetch,
        changed: (orgUuid) =>
          client(orgUuid)
            .Reload()
            .pipe(
              Effect.orDie,
              Effect.tap((version) => Effect.andThen(learn(orgUuid, version), fanout.publish(`${ORG_SNAPSHOT_TOPIC}:${orgUuid}`, String(version))))
            )
      })
    })
    )
  }
}

/** The areas' ports, answered from the one cached snapshot per organization. */
const portsLayer = Layer.mergeAll(
  Layer.effect(OrgPolicies)(Effect.map(Effect.service(OrgSnapshots), (orgs) => OrgPolicies.of({ get: orgs.get, changed: orgs.changed }))),
  Layer.effect(OrgWhitelist)(
    Effect.map(Effect.service(OrgSnapshots), (orgs) =>
      OrgWhitelist.of({ get: (orgUuid) => Effect.map(orgs.get(orgUuid), (snapshot) => snapshot.whitelist), changed: orgs.changed })
    )
  )
)

/** The entity and the callers' side; needs SqlClient, Fanout and Sharding. */
export const orgActorsLayer = (options: OrgActorOptions = {}) =>
  Layer.merge(orgActorLayer(options), portsLayer.pipe(Layer.provideMerge(OrgSnapshots.layer)))

export type OrgActorRequirements = SqlClient.SqlClient | Fanout | Sharding

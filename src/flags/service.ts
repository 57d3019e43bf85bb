/**
 * Feature flags: resolution per organization (`resolve.ts`) over a per-process
 * cache of every stored flag, the organization toggle and the platform
 * administration. Every change is announced on the Fanout topic "feature-flags"
 * so every node drops its cache; a cache also expires after a minute in case an
 * announcement was lost while Redis reconnected.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CreateFlag, FeatureFlag, UpdateFlag } from "../../protocol/flags.js"
import { insertAudit } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { newId } from "../platform/ids.js"
import { Fanout } from "../platform/redis/index.js"
import { FlagExists, FlagNotFound, refuse } from "./errors.js"
import { BUILT_IN_DEFAULTS, environmentValue, type ResolutionContext, resolveFlag, type StoredFlag } from "./resolve.js"
import { makeFlagStore } from "./store.js"

export const FLAGS_TOPIC = "feature-flags"
const CACHE_MAX_AGE_MS = 60_000

/** Who changed a flag: an organization's user (its own toggle) or the platform administrator (`orgUuid` null). */
export interface FlagActor {
  readonly orgUuid: string | null
  readonly actor: string
  readonly requestId: string | null
}

const stored = (flag: FeatureFlag): StoredFlag => ({
  key: flag.key,
  enabledGlobal: flag.enabled_global,
  rolloutPercentage: flag.rollout_percentage,
  orgIds: new Set(flag.enabled_org_ids)
})

/** What an audit entry keeps of a flag: its settings, the list only as a count. */
const settings = (flag: FeatureFlag) => ({
  description: flag.description,
  enabled_global: flag.enabled_global,
  rollout_percentage: flag.rollout_percentage,
  enabled_org_ids: flag.enabled_org_ids.length
})

export const makeFlags = Effect.gen(function* () {
  const store = yield* makeFlagStore
  const config = yield* Config
  const fanout = yield* Fanout
  const context: ResolutionContext = { mode: config.deploymentMode, environment: config.flagEnvironment ?? {} }

  let cached: { readonly flags: ReadonlyMap<string, StoredFlag>; readonly at: number } | undefined
  // Bumped by every invalidation: a load that started before one is not kept.
  let generation = 0
  const invalidate = () => {
    generation += 1
    cached = undefined
  }
  yield* fanout.subscribe(invalidate, { topicPrefix: FLAGS_TOPIC })

  const snapshot = Effect.suspend(() => {
    if (cached !== undefined && Date.now() - cached.at < CACHE_MAX_AGE_MS) return Effect.succeed(cached.flags)
    const started = generation
    return Effect.map(Effect.orDie(store.all), (rows) => {
      const flags = new Map(rows.map((flag) => [flag.key, stored(flag)]))
      if (generation === started) cached = { flags, at: Date.now() }
      return flags as ReadonlyMap<string, StoredFlag>
    })
  })

  /** After a committed change: this node at once, every node through the fan-out. */
  const changed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.tap(effect, () => Effect.andThen(Effect.sync(invalidate), fanout.publish(FLAGS_TOPIC, "changed")))

  const audit = (who: FlagActor, event: string, key: string, details: Record<string, unknown>) =>
    Effect.orDie(insertAudit(store.sql, { orgUuid: who.orgUuid, actor: who.actor, event, target: key, details, requestId: who.requestId }))
  const audited =
    (who: FlagActor, event: string, key: string, details: (flag: FeatureFlag) => Record<string, unknown>) =>
    <E, R>(effect: Effect.Effect<FeatureFlag, E, R>) =>
      Effect.tap(effect, (flag) => audit(who, event, key, details(flag)))

  const found = (key: string) => (flag: FeatureFlag | undefined) => (flag === undefined ? refuse(new FlagNotFound({ key })) : Effect.succeed(flag))

  /**
   * Self-hosted convenience: a flag created by enabling it for one organization keeps the value the environment
   * gave every other organization (`enabled_global` = `ENABLE_<KEY>`), so nobody else's resolution changes.
   */
  const createFor = (key: string, orgUuid: string) =>
    Effect.flatMap(
      store.insert({
        id: newId("ff"),
        key,
        description: null,
        enabledGlobal: environmentValue(key, context.environment),
        rolloutPercentage: 100,
        orgIds: [orgUuid]
      }),
      // Created concurrently by another request: add the organization to that one.
      (flag) => (flag === undefined ? store.setOrg(key, orgUuid, true) : Effect.succeed(flag))
    )

  const setOrg = (who: FlagActor, key: string, orgUuid: string, listed: boolean) =>
    Effect.gen(function* () {
      const updated = yield* Effect.orDie(store.setOrg(key, orgUuid, listed))
      if (updated !== undefined) return updated
      if (!listed || context.mode === "cloud") return yield* refuse(new FlagNotFound({ key }))
      return yield* found(key)(yield* Effect.orDie(createFor(key, orgUuid)))
    }).pipe(
      audited(who, listed ? "feature_flag.org_enabled" : "feature_flag.org_disabled", key, (flag) => ({ org_uuid: orgUuid, enabled_org_ids: flag.enabled_org_ids.length })),
      changed
    )

  const isEnabled = (orgUuid: string, key: string) =>
    Effect.map(snapshot, (flags) => resolveFlag(flags.get(key), key, orgUuid, context))

  return {
    isEnabled,
    /** Every stored flag and every flag the service reads itself, resolved for the organization. */
    resolvedFor: (orgUuid: string) =>
      Effect.map(snapshot, (flags) => {
        const keys = [...new Set([...flags.keys(), ...Object.keys(BUILT_IN_DEFAULTS)])].sort()
        return Object.fromEntries(keys.map((key) => [key, resolveFlag(flags.get(key), key, orgUuid, context)]))
      }),
    /**
     * The organization's own toggle: on adds it to `enabled_org_ids` (rule 1), off takes it out. The answer is
     * the resolved value afterwards, which stays on when the global rollout includes the organization.
     */
    toggle: (who: FlagActor & { readonly orgUuid: string }, key: string, enabled: boolean) =>
      Effect.map(setOrg(who, key, who.orgUuid, enabled), (flag) => ({ key, enabled: resolveFlag(stored(flag), key, who.orgUuid, context) })),
    list: Effect.orDie(store.all),
    create: (who: FlagActor, input: CreateFlag) =>
      Effect.flatMap(
        Effect.orDie(
          store.insert({
            id: newId("ff"),
            key: input.key,
            description: input.description ?? null,
            enabledGlobal: input.enabled_global ?? false,
            rolloutPercentage: input.rollout_percentage ?? 100,
            orgIds: [...new Set(input.enabled_org_ids ?? [])]
          })
        ),
        (flag) => (flag === undefined ? refuse(new FlagExists({ key: input.key })) : Effect.succeed(flag))
      ).pipe(audited(who, "feature_flag.created", input.key, (flag) => settings(flag)), changed),
    update: (who: FlagActor, key: string, patch: UpdateFlag) =>
      Effect.flatMap(
        Effect.orDie(store.update(key, { ...patch, enabled_org_ids: patch.enabled_org_ids && [...new Set(patch.enabled_org_ids)] })),
        found(key)
      ).pipe(audited(who, "feature_flag.updated", key, (flag) => settings(flag)), changed),
    remove: (who: FlagActor, key: string) =>
      Effect.flatMap(Effect.orDie(store.remove(key)), (existed) => (existed ? audit(who, "feature_flag.deleted", key, {}) : Effect.void)).pipe(changed),
    enableOrg: (who: FlagActor, key: string, orgUuid: string) => setOrg(who, key, orgUuid, true),
    disableOrg: (who: FlagActor, key: string, orgUuid: string) => setOrg(who, key, orgUuid, false)
  }
})

export class Flags extends Context.Service<Flags, Effect.Success<typeof makeFlags>>()("gateway/Flags") {
  static readonly layer = Layer.effect(Flags, makeFlags)
}

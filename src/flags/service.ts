/**
 * Feature flags: resolution per organization (`resolve.ts`) over a per-process
 * cache of every stored flag, the organization toggle and the platform
 * administration. Every change is announced on the Fanout topic "feature-flags"
 * so every node drops its cache; a cache also expires after a minute in case an
 * announcement was lost while Redis reconnected.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CreateFlag, FeatureFlag, UpdateFlag } from "../../protocol/flags.js"
import { Config } from "../platform/config.js"
import { newId } from "../platform/ids.js"
import { Fanout } from "../platform/redis/index.js"
import { FlagExists, FlagNotFound, type FlagsError, refuse } from "./errors.js"
import { memoryFlagStore } from "./memory-store.js"
import { BUILT_IN_DEFAULTS, environmentValue, type ResolutionContext, resolveFlag, type StoredFlag } from "./resolve.js"
import { FlagStore } from "./store.js"

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
  const store = yield* FlagStore
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

  const snapshot = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (cached !== undefined && now - cached.at < CACHE_MAX_AGE_MS) return cached.flags
    const started = generation
    const rows = yield* store.all
    const flags: ReadonlyMap<string, StoredFlag> = new Map(rows.map((flag) => [flag.key, stored(flag)]))
    if (generation === started) cached = { flags, at: now }
    return flags
  })

  /** After a committed change: this node at once, every node through the fan-out. */
  const changed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.tap(effect, () => Effect.andThen(Effect.sync(invalidate), fanout.publish(FLAGS_TOPIC, "changed")))

  const audit = (who: FlagActor, event: string, key: string, details: Record<string, unknown>) =>
    store.audit({ orgUuid: who.orgUuid, actor: who.actor, event, target: key, details, requestId: who.requestId })

  const found = (key: string, flag: FeatureFlag | undefined) => (flag === undefined ? refuse(FlagNotFound.of(key)) : Effect.succeed(flag))

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

  const setOrg = Effect.fn("Flags.setOrg")(function* (who: FlagActor, key: string, orgUuid: string, listed: boolean) {
    let flag = yield* store.setOrg(key, orgUuid, listed)
    if (flag === undefined) {
      if (!listed || context.mode === "cloud") return yield* refuse(FlagNotFound.of(key))
      flag = yield* found(key, yield* createFor(key, orgUuid))
    }
    yield* audit(who, listed ? "feature_flag.org_enabled" : "feature_flag.org_disabled", key, { org_uuid: orgUuid, enabled_org_ids: flag.enabled_org_ids.length })
    return flag
  }, changed)

  const isEnabled = Effect.fn("Flags.isEnabled")(function* (orgUuid: string, key: string) {
    const flags = yield* snapshot
    return resolveFlag(flags.get(key), key, orgUuid, context)
  })

  const resolvedFor = Effect.fn("Flags.resolvedFor")(function* (orgUuid: string) {
    const flags = yield* snapshot
    const keys = [...new Set([...flags.keys(), ...Object.keys(BUILT_IN_DEFAULTS)])].sort()
    return Object.fromEntries(keys.map((key) => [key, resolveFlag(flags.get(key), key, orgUuid, context)]))
  })

  const toggle = Effect.fn("Flags.toggle")(function* (who: FlagActor & { readonly orgUuid: string }, key: string, enabled: boolean) {
    const flag = yield* setOrg(who, key, who.orgUuid, enabled)
    return { key, enabled: resolveFlag(stored(flag), key, who.orgUuid, context) }
  })

  const create = Effect.fn("Flags.create")(function* (who: FlagActor, input: CreateFlag) {
    const flag = yield* store.insert({
      id: newId("ff"),
      key: input.key,
      description: input.description ?? null,
      enabledGlobal: input.enabled_global ?? false,
      rolloutPercentage: input.rollout_percentage ?? 100,
      orgIds: [...new Set(input.enabled_org_ids ?? [])]
    })
    if (flag === undefined) return yield* refuse(FlagExists.of(input.key))
    yield* audit(who, "feature_flag.created", input.key, settings(flag))
    return flag
  }, changed)

  const update = Effect.fn("Flags.update")(function* (who: FlagActor, key: string, patch: UpdateFlag) {
    const flag = yield* found(key, yield* store.update(key, { ...patch, enabled_org_ids: patch.enabled_org_ids && [...new Set(patch.enabled_org_ids)] }))
    yield* audit(who, "feature_flag.updated", key, settings(flag))
    return flag
  }, changed)

  const remove = Effect.fn("Flags.remove")(function* (who: FlagActor, key: string) {
    if (yield* store.remove(key)) yield* audit(who, "feature_flag.deleted", key, {})
  }, changed)

  return Flags.of({
    isEnabled,
    resolvedFor,
    toggle,
    list: store.all,
    create,
    update,
    remove,
    enableOrg: (who, key, orgUuid) => setOrg(who, key, orgUuid, true),
    disableOrg: (who, key, orgUuid) => setOrg(who, key, orgUuid, false)
  })
})

export interface FlagsService {
  readonly isEnabled: (orgUuid: string, key: string) => Effect.Effect<boolean>
  /** Every stored flag and every flag the service reads itself, resolved for the organization. */
  readonly resolvedFor: (orgUuid: string) => Effect.Effect<Record<string, boolean>>
  /**
   * The organization's own toggle: on adds it to `enabled_org_ids` (rule 1), off takes it out. The answer is
   * the resolved value afterwards, which stays on when the global rollout includes the organization.
   */
  readonly toggle: (
    who: FlagActor & { readonly orgUuid: string },
    key: string,
    enabled: boolean
  ) => Effect.Effect<{ readonly key: string; readonly enabled: boolean }, FlagsError>
  readonly list: Effect.Effect<ReadonlyArray<FeatureFlag>>
  readonly create: (who: FlagActor, input: CreateFlag) => Effect.Effect<FeatureFlag, FlagsError>
  readonly update: (who: FlagActor, key: string, patch: UpdateFlag) => Effect.Effect<FeatureFlag, FlagsError>
  readonly remove: (who: FlagActor, key: string) => Effect.Effect<void>
  readonly enableOrg: (who: FlagActor, key: string, orgUuid: string) => Effect.Effect<FeatureFlag, FlagsError>
  readonly disableOrg: (who: FlagActor, key: string, orgUuid: string) => Effect.Effect<FeatureFlag, FlagsError>
}

export class Flags extends Context.Service<Flags, FlagsService>()("gateway/Flags") {
  static readonly layer = Layer.effect(Flags, makeFlags).pipe(Layer.provide(FlagStore.layer))
  /** The service's rules on tables in memory and an in-process fan-out: no database, no Redis. Needs only the configuration. */
  static readonly layerTest = Layer.effect(Flags, makeFlags).pipe(Layer.provide(memoryFlagStore), Layer.provide(Fanout.layerMemory))
}

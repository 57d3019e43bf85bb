/**
 * The flags service's rules, the same over the database and over its tables in memory
 * (`Flags.layerTest`): creation and its unique key, patches and the organization lists,
 * resolution right after a change, and the self-hosted toggle that creates a flag.
 */
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Flags } from "../src/flags/service.js"
import { configLayer, loadConfig } from "../src/platform/config.js"
import { platformMemoryLayer } from "../src/platform/redis/index.js"
import { freshDatabaseLayer, UNUSED_DATA_DIR } from "./support/database.js"
import { liveLayer } from "./support/effect.js"

const who = (orgUuid: string | null = null) => ({ orgUuid, actor: "tester", requestId: null })
const selfHosted = configLayer(loadConfig({ DATA_DIR: UNUSED_DATA_DIR, ENABLE_BETA_REPORTS: "yes" }))
const cloud = configLayer(loadConfig({ DATA_DIR: UNUSED_DATA_DIR, DEPLOYMENT_MODE: "cloud" }))

const onDatabase = (config: typeof selfHosted): Layer.Layer<Flags, unknown> =>
  Flags.layer.pipe(Layer.provide(Layer.mergeAll(freshDatabaseLayer, platformMemoryLayer(), config)))
const inMemory = (config: typeof selfHosted) => Flags.layerTest.pipe(Layer.provide(config))

const rules = (name: string, layer: Layer.Layer<Flags, unknown>, cloudLayer: Layer.Layer<Flags, unknown>) => {
  liveLayer(layer)(`flags (${name}, self-hosted)`, (it) => {
    it.effect("creates flags under unique keys, lists them by key, lists organizations without repeats", () =>
      Effect.gen(function* () {
        const flags = yield* Flags
        const created = yield* flags.create(who(), { key: "zeta_rollout", enabled_org_ids: ["org-b", "org-a", "org-b"] })
        expect(created).toMatchObject({ key: "zeta_rollout", enabled_global: false, rollout_percentage: 100, description: null })
        expect([...created.enabled_org_ids].sort()).toEqual(["org-a", "org-b"])
        yield* flags.create(who(), { key: "alpha_feature", description: "first", enabled_global: true, rollout_percentage: 0 })
        expect((yield* flags.list).map((flag) => flag.key)).toEqual(["alpha_feature", "zeta_rollout"])
        const taken = yield* Effect.flip(flags.create(who(), { key: "alpha_feature" }))
        expect(taken.reason.code).toBe("FLAG_EXISTS")
      })
    )

    it.effect("patches only what is given; a new list replaces the old; resolution follows at once", () =>
      Effect.gen(function* () {
        const flags = yield* Flags
        const created = yield* flags.create(who(), { key: "patched_flag", description: "kept", enabled_org_ids: ["org-1"] })
        expect(yield* flags.isEnabled("org-1", "patched_flag")).toBe(true)
        expect(yield* flags.isEnabled("org-2", "patched_flag")).toBe(false)
        const patched = yield* flags.update(who(), "patched_flag", { enabled_org_ids: ["org-2", "org-2"] })
        expect(patched).toMatchObject({ description: "kept", enabled_global: false, enabled_org_ids: ["org-2"] })
        expect(Date.parse(patched.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at))
        expect(yield* flags.isEnabled("org-1", "patched_flag")).toBe(false)
        expect(yield* flags.isEnabled("org-2", "patched_flag")).toBe(true)
        // Everyone, through the global switch at 100%.
        yield* flags.update(who(), "patched_flag", { enabled_global: true, description: null })
        expect(yield* flags.isEnabled("org-1", "patched_flag")).toBe(true)
        expect((yield* flags.list).find((flag) => flag.key === "patched_flag")?.description).toBeNull()
        const missing = yield* Effect.flip(flags.update(who(), "never_made", { enabled_global: true }))
        expect(missing.reason.code).toBe("NOT_FOUND")
      })
    )

    it.effect("an organization's toggle creates a missing flag keeping the environment's value for everyone else", () =>
      Effect.gen(function* () {
        const flags = yield* Flags
        const orgX = { ...who("org-x"), orgUuid: "org-x" }
        // ENABLE_BETA_REPORTS=yes: on for every organization until stored; stored on the first toggle, it stays on for the others.
        expect(yield* flags.isEnabled("org-w", "beta_reports")).toBe(true)
        expect(yield* flags.toggle(orgX, "beta_reports", true)).toEqual({ key: "beta_reports", enabled: true })
        expect(yield* flags.isEnabled("org-w", "beta_reports")).toBe(true)
        // Off takes org-x out of the list; the global value still includes it.
        expect(yield* flags.toggle(orgX, "beta_reports", false)).toEqual({ key: "beta_reports", enabled: true })
        // Nothing stored and nothing to take out: not found.
        const absent = yield* Effect.flip(flags.toggle(orgX, "quiet_mode", false))
        expect(absent.reason.code).toBe("NOT_FOUND")
        expect(yield* flags.toggle(orgX, "quiet_mode", true)).toEqual({ key: "quiet_mode", enabled: true })
        expect(yield* flags.isEnabled("org-z", "quiet_mode")).toBe(false)
        expect(yield* flags.toggle(orgX, "quiet_mode", false)).toEqual({ key: "quiet_mode", enabled: false })
        expect((yield* flags.resolvedFor("org-x")).quiet_mode).toBe(false)
        yield* flags.remove(who(), "quiet_mode")
        expect((yield* flags.list).some((flag) => flag.key === "quiet_mode")).toBe(false)
      })
    )
  })

  liveLayer(cloudLayer)(`flags (${name}, cloud)`, (it) => {
    it.effect("in the cloud an organization cannot create a flag by toggling it", () =>
      Effect.gen(function* () {
        const flags = yield* Flags
        const refused = yield* Effect.flip(flags.toggle({ ...who("org-c"), orgUuid: "org-c" }, "not_there", true))
        expect(refused.reason.code).toBe("NOT_FOUND")
        yield* flags.create(who(), { key: "there_now" })
        expect(yield* flags.toggle({ ...who("org-c"), orgUuid: "org-c" }, "there_now", true)).toEqual({ key: "there_now", enabled: true })
      })
    )
  })
}

rules("database", onDatabase(selfHosted), onDatabase(cloud))
rules("in memory", inMemory(selfHosted), inMemory(cloud))

/** Output policies: defaults, PATCH validation, the test endpoint's logic, and the OutputFiltering port. */
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Principal } from "../protocol/auth.js"
import { Flags } from "../src/flags/service.js"
import { OutputPolicies, outputPoliciesLayer } from "../src/output-policies/service.js"
import { configLayer, loadConfig } from "../src/platform/config.js"
import { Fanout } from "../src/platform/redis/index.js"
import { OutputFiltering } from "../src/policies/ports.js"
import { DEFAULT_OUTPUT_POLICY } from "../src/scan/output-filter.js"
import { freshDatabaseLayer } from "./support/database.js"
import { liveLayer } from "./support/effect.js"

const Setup = outputPoliciesLayer.pipe(
  Layer.provideMerge(Flags.layer),
  Layer.provideMerge(freshDatabaseLayer),
  Layer.provide(Layer.mergeAll(configLayer(loadConfig({})), Fanout.layerMemory))
)

const principal = (orgUuid: string) => ({ kind: "jwt", orgUuid, userUuid: "u", email: "e", role: "owner", scopes: ["*"], keyId: undefined }) as Principal

liveLayer(Setup)("output policies", (it) => {
  it.effect("starts from the defaults and stores a partial update", () =>
    Effect.gen(function* () {
      const service = yield* OutputPolicies
      const owner = principal(`org-op-${Date.now()}`)
      const initial = yield* service.get(owner)
      expect(initial).toEqual({ ...DEFAULT_OUTPUT_POLICY, libraries: [...DEFAULT_OUTPUT_POLICY.libraries] })
      const updated = yield* service.update(owner, { mode: "redact", redact_severity_threshold: "info" })
      expect(updated).toMatchObject({ mode: "redact", redact_severity_threshold: "info", enabled: true })
      expect(yield* service.get(owner)).toEqual(updated)
      const port = yield* (yield* OutputFiltering).policyFor(owner.orgUuid)
      expect(port.mode).toBe("redact")
    })
  )

  it.effect("lists every invalid field in one VALIDATION_ERROR", () =>
    Effect.gen(function* () {
      const service = yield* OutputPolicies
      const owner = principal(`org-op2-${Date.now()}`)
      const error = yield* Effect.flip(service.update(owner, { mode: "shout", libraries: [] }))
      expect(error.reason.code).toBe("VALIDATION_ERROR")
      expect(error.reason.issues.map((i) => i.path).sort()).toEqual(["libraries", "mode"])
    })
  )

  it.effect("test finds credentials and redacts or denies per the stored policy", () =>
    Effect.gen(function* () {
      const service = yield* OutputPolicies
      const owner = principal(`org-op3-${Date.now()}`)
      const text = "key AKIAIOSFODNN7EXAMPLE and mail jane.doe@example.com"
      const flagged = yield* service.test(owner, text)
      expect(flagged.flags.length).toBeGreaterThan(0)
      expect(flagged.denied).toBe(false)
      expect(flagged.redacted_text).toBeNull()
      yield* service.update(owner, { mode: "redact" })
      const redacted = yield* service.test(owner, text)
      expect(redacted.redacted_text).not.toBeNull()
      expect(redacted.redacted_text).not.toContain("AKIAIOSFODNN7EXAMPLE")
      yield* service.update(owner, { mode: "deny", deny_severity_threshold: "info" })
      expect((yield* service.test(owner, text)).denied).toBe(true)
    })
  )

  it("ENABLE_OUTPUT_FILTERING=false turns filtering off", () => {
    expect(loadConfig({}).features.outputFiltering).toBe(true)
    expect(loadConfig({ ENABLE_OUTPUT_FILTERING: "false" }).features.outputFiltering).toBe(false)
    expect(loadConfig({ ENABLE_OUTPUT_FILTERING: "true" }).features.outputFiltering).toBe(true)
  })
})

/** Output policies: defaults, PATCH validation, the test endpoint's logic, and the OutputFiltering port. */
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Principal } from "../protocol/auth.js"
import { OutputPolicies, outputPoliciesLayer } from "../src/output-policies/service.js"
import { configLayer, loadConfig } from "../src/platform/config.js"
import { databaseLayer } from "../src/platform/db/index.js"
import { OutputFiltering } from "../src/policies/ports.js"
import { DEFAULT_OUTPUT_POLICY } from "../src/scan/output-filter.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"

let fresh: FreshDatabase | undefined
let runtime: ManagedRuntime.ManagedRuntime<OutputPolicies | OutputFiltering, unknown>

beforeAll(async () => {
  fresh = await freshDatabaseUrl()
  runtime = ManagedRuntime.make(
    outputPoliciesLayer.pipe(
      Layer.provideMerge(databaseLayer({ url: fresh.url, dataDir: UNUSED_DATA_DIR })),
      Layer.provide(configLayer(loadConfig({})))
    )
  )
  await runtime.runPromise(Effect.void)
}, 60_000)

afterAll(async () => {
  await runtime?.dispose()
  await fresh?.drop()
})

const principal = (orgUuid: string) => ({ kind: "jwt", orgUuid, userUuid: "u", email: "e", role: "owner", scopes: ["*"], keyId: undefined }) as Principal
const service = <A, E>(f: (s: OutputPolicies["Service"]) => Effect.Effect<A, E>) => runtime.runPromise(Effect.flatMap(Effect.service(OutputPolicies), f))

describe("output policies", () => {
  it("starts from the defaults and stores a partial update", async () => {
    const owner = principal(`org-op-${Date.now()}`)
    const initial = await service((s) => s.get(owner))
    expect(initial).toEqual({ ...DEFAULT_OUTPUT_POLICY, libraries: [...DEFAULT_OUTPUT_POLICY.libraries] })
    const updated = await service((s) => s.update(owner, { mode: "redact", redact_severity_threshold: "info" }))
    expect(updated).toMatchObject({ mode: "redact", redact_severity_threshold: "info", enabled: true })
    expect(await service((s) => s.get(owner))).toEqual(updated)
    const port = await runtime.runPromise(Effect.flatMap(Effect.service(OutputFiltering), (f) => f.policyFor(owner.orgUuid)))
    expect(port.mode).toBe("redact")
  })

  it("lists every invalid field in one VALIDATION_ERROR", async () => {
    const owner = principal(`org-op2-${Date.now()}`)
    const error = await runtime.runPromise(
      Effect.flip(Effect.flatMap(Effect.service(OutputPolicies), (s) => s.update(owner, { mode: "shout", libraries: [] })))
    )
    expect(error.reason.code).toBe("VALIDATION_ERROR")
    expect(error.reason.details.issues.map((i) => i.path).sort()).toEqual(["libraries", "mode"])
  })

  it("test finds credentials and redacts or denies per the stored policy", async () => {
    const owner = principal(`org-op3-${Date.now()}`)
    const text = "key AKIAIOSFODNN7EXAMPLE and mail jane.doe@example.com"
    const flagged = await service((s) => s.test(owner, text))
    expect(flagged.flags.length).toBeGreaterThan(0)
    expect(flagged.denied).toBe(false)
    expect(flagged.redacted_text).toBeNull()
    await service((s) => s.update(owner, { mode: "redact" }))
    const redacted = await service((s) => s.test(owner, text))
    expect(redacted.redacted_text).not.toBeNull()
    expect(redacted.redacted_text).not.toContain("AKIAIOSFODNN7EXAMPLE")
    await service((s) => s.update(owner, { mode: "deny", deny_severity_threshold: "info" }))
    expect((await service((s) => s.test(owner, text))).denied).toBe(true)
  })

  it("ENABLE_OUTPUT_FILTERING=false turns filtering off", () => {
    expect(loadConfig({}).features.outputFiltering).toBe(true)
    expect(loadConfig({ ENABLE_OUTPUT_FILTERING: "false" }).features.outputFiltering).toBe(false)
    expect(loadConfig({ ENABLE_OUTPUT_FILTERING: "true" }).features.outputFiltering).toBe(true)
  })
})

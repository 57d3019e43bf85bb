import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { BUILTIN_MODELS, findBuiltinModel, isKnownModel } from "../protocol/models.js"
import { type CompiledConditions, compileConditions } from "../src/policies/conditions.js"
import { compileScanConfig, matchContentScan } from "../src/policies/content-scan.js"
import { combineDecisions, dryRun, evaluateRules } from "../src/policies/evaluate.js"
import type { EvaluablePolicy, PolicyDecision, PolicySubject } from "../src/policies/types.js"

const subject: PolicySubject = {
  action_type: "payment.transfer",
  details: "Transfer 1500 EUR to ACME Corp",
  agent_id: "billing-bot",
  agent_version: "2.1.0",
  model_id: "gpt-5",
  model_version: null,
  endpoint_url: "https://api.bank.example/v1/transfers",
  instruction_hash: "sha256:abc",
  context: { amount: 1500, currency: "EUR", tags: ["finance", "external"], amount_text: "1500", nested: { level: 3 }, "dotted.key": "yes" }
}

const compile = (conditions: unknown): CompiledConditions => {
  const result = compileConditions(conditions)
  if (!result.ok) throw new Error(`expected valid conditions: ${JSON.stringify(result)}`)
  return result.compiled
}

const holds = (field: string, op: string, value: unknown, on: PolicySubject = subject): boolean =>
  evaluateRules(compile([{ field, op, value }]), on)

describe("condition operators", () => {
  const table: Array<[string, string, unknown, boolean]> = [
    ["action_type", "eq", "payment.transfer", true],
    ["action_type", "eq", "payment.refund", false],
    ["action_type", "eq", "PAYMENT.TRANSFER", false],
    ["action_type", "neq", "payment.refund", true],
    ["action_type", "ne", "payment.refund", true],
    ["action_type", "neq", "payment.transfer", false],
    ["agent_id", "in", ["billing-bot", "ops-bot"], true],
    ["agent_id", "in", ["ops-bot"], false],
    ["agent_id", "not_in", ["ops-bot"], true],
    ["agent_id", "not_in", ["billing-bot"], false],
    ["details", "contains", "ACME", true],
    ["details", "contains", "acme", false],
    ["context.tags", "contains", "finance", true],
    ["context.tags", "contains", "internal", false],
    ["endpoint_url", "regex", "^https://api\\.bank\\.example/", true],
    ["endpoint_url", "regex", "^http://", false],
    ["details", "regex", "(?i)acme corp", true],
    ["context.amount", "gt", 1000, true],
    ["context.amount", "gt", 1500, false],
    ["context.amount", "gte", 1500, true],
    ["context.amount", "gte", 1501, false],
    ["context.amount", "lt", 2000, true],
    ["context.amount", "lt", 1500, false],
    ["context.amount", "lte", 1500, true],
    ["context.amount", "lte", 1499, false],
    ["context.currency", "eq", "EUR", true],
    ["context.amount", "eq", 1500, true],
    ["context.amount", "eq", "1500", false],
    ["context.nested.level", "eq", 3, true],
    ["context.dotted.key", "eq", "yes", true],
    // gt/lt on something that is not a number never match
    ["context.amount_text", "gt", 1000, false],
    ["context.currency", "lt", 1000, false],
    ["agent_version", "gt", 1, false],
    ["context.tags", "gte", 0, false],
    // missing fields: only neq / not_in hold
    ["model_version", "eq", "x", false],
    ["model_version", "neq", "x", true],
    ["model_version", "in", ["x"], false],
    ["model_version", "not_in", ["x"], true],
    ["model_version", "contains", "x", false],
    ["model_version", "regex", ".*", false],
    ["context.absent", "gt", 0, false],
    ["context.absent", "lt", 0, false],
    ["context.absent", "neq", 0, true],
    // non-scalar fields are never members of a list
    ["context.tags", "in", ["finance"], false],
    ["context.tags", "not_in", ["finance"], true],
    ["context.nested", "contains", "level", false]
  ]
  it.each(table)("%s %s %j → %s", (field, op, value, expected) => {
    expect(holds(field, op, value)).toBe(expected)
  })

  it("all conditions must hold", () => {
    const both = compile([
      { field: "action_type", op: "eq", value: "payment.transfer" },
      { field: "context.amount", op: "gt", value: 1000 }
    ])
    expect(evaluateRules(both, subject)).toBe(true)
    expect(evaluateRules(both, { ...subject, context: { amount: 10 } })).toBe(false)
    expect(evaluateRules(both, { ...subject, context: null })).toBe(false)
  })

  it("accepts the detail-output form {all: [...]} and keeps the source as given", () => {
    const conditions = [{ field: "context.amount", op: "gt", value: 1000 }]
    const result = compileConditions({ all: conditions })
    expect(result.ok && result.compiled.source).toEqual(conditions)
  })

  it("a catastrophic-backtracking pattern finishes fast on re2js", () => {
    const evil = compile([{ field: "details", op: "regex", value: "(a+)+$" }])
    const started = performance.now()
    expect(evaluateRules(evil, { ...subject, details: `${"a".repeat(30_000)}!` })).toBe(false)
    expect(performance.now() - started).toBeLessThan(1_000)
  })
})

describe("condition validation", () => {
  it("requires conditions for rules mode", () => {
    expect(compileConditions(undefined)).toMatchObject({ ok: false, code: "CONDITIONS_REQUIRED" })
    expect(compileConditions([])).toMatchObject({ ok: false, code: "CONDITIONS_REQUIRED" })
    expect(compileConditions(undefined, { required: false })).toMatchObject({ ok: true })
  })

  it("lists every shape problem with its path", () => {
    const result = compileConditions([
      { field: "agent_id", op: "in", value: "billing-bot" },
      { field: "context.amount", op: "gt", value: "1000" },
      { field: "colour", op: "eq", value: "red" },
      { field: "context.", op: "eq", value: "x" },
      { field: "action_type", op: "like", value: "x" },
      { field: "action_type", op: "eq" },
      { field: "action_type", op: "eq", value: { nested: true } },
      { field: "agent_id", op: "not_in", value: [["nested"]] },
      "not an object"
    ])
    expect(result.ok).toBe(false)
    if (result.ok || result.code === "CONDITIONS_REQUIRED") return
    expect(result.code).toBe("VALIDATION_ERROR")
    expect(result.issues.map((i) => i.path)).toEqual([
      "conditions[0].value",
      "conditions[1].value",
      "conditions[2].field",
      "conditions[3].field",
      "conditions[4].op",
      "conditions[5].value",
      "conditions[6].value",
      "conditions[7].value",
      "conditions[8]"
    ])
  })

  it("rejects a non-list", () => {
    expect(compileConditions({ any: [] })).toMatchObject({ ok: false, code: "VALIDATION_ERROR" })
    expect(compileConditions("x")).toMatchObject({ ok: false, code: "VALIDATION_ERROR" })
  })

  it("INVALID_REGEX for a pattern that does not compile or is too long", () => {
    for (const pattern of ["(unclosed", "a{2,1}", "(?=lookahead)", "\\1", "x".repeat(1_001)]) {
      const result = compileConditions([{ field: "details", op: "regex", value: pattern }])
      expect(result, pattern).toMatchObject({ ok: false, code: "INVALID_REGEX" })
    }
    expect(compileConditions([{ field: "details", op: "regex", value: "x".repeat(1_000) }]).ok).toBe(true)
  })

  it("a regex problem alongside a shape problem is a VALIDATION_ERROR listing both", () => {
    const result = compileConditions([
      { field: "details", op: "regex", value: "(" },
      { field: "nope", op: "eq", value: 1 }
    ])
    expect(result).toMatchObject({ ok: false, code: "VALIDATION_ERROR" })
    if (!result.ok && result.code !== "CONDITIONS_REQUIRED") expect(result.issues).toHaveLength(2)
  })
})

// ---------------------------------------------------------------------------
// Combining policies
// ---------------------------------------------------------------------------

let seq = 0
const rulesPolicy = (over: Partial<EvaluablePolicy> & { matchType?: string }): EvaluablePolicy => {
  const { matchType, ...rest } = over
  seq++
  return {
    id: `p${String(seq).padStart(4, "0")}`,
    name: `policy ${seq}`,
    mode: "rules",
    decision: "allow",
    priority: 0,
    created_at: "2026-01-01T00:00:00.000Z",
    status: "active",
    rules: compile([{ field: "action_type", op: "eq", value: matchType ?? "payment.transfer" }]),
    ...rest
  }
}

describe("combineDecisions", () => {
  it("allows with no policy_uuid when nothing matches", () => {
    const result = combineDecisions([rulesPolicy({ decision: "deny", matchType: "other" })], subject)
    expect(result).toMatchObject({ decision: "allow", policy_uuid: null, warnings: [] })
    expect(result.evaluated).toHaveLength(1)
    expect(combineDecisions([], subject)).toMatchObject({ decision: "allow", policy_uuid: null, evaluated: [] })
  })

  it("most restrictive wins; policy_uuid is the highest-priority producer of it", () => {
    const low = rulesPolicy({ decision: "require_approval", priority: 1 })
    const high = rulesPolicy({ decision: "require_approval", priority: 5 })
    const allow = rulesPolicy({ decision: "allow", priority: 10 })
    const result = combineDecisions([low, allow, high], subject)
    expect(result.decision).toBe("require_approval")
    expect(result.policy_uuid).toBe(high.id)
    expect(result.evaluated).toEqual([allow.id, high.id, low.id])
  })

  it("a deny stops evaluation", () => {
    const deny = rulesPolicy({ decision: "deny", priority: 5 })
    const after = rulesPolicy({ decision: "require_approval", priority: 1 })
    const before = rulesPolicy({ decision: "allow", priority: 9 })
    const result = combineDecisions([after, deny, before], subject)
    expect(result).toMatchObject({ decision: "deny", policy_uuid: deny.id, evaluated: [before.id, deny.id] })
  })

  it("breaks priority ties by age, then id", () => {
    const newer = rulesPolicy({ decision: "deny", created_at: "2026-02-01T00:00:00Z" })
    const older = rulesPolicy({ decision: "deny", created_at: new Date("2026-01-15T00:00:00Z") })
    expect(combineDecisions([newer, older], subject).policy_uuid).toBe(older.id)
    const a = rulesPolicy({ id: "a", decision: "deny" })
    const b = rulesPolicy({ id: "b", decision: "deny" })
    expect(combineDecisions([b, a], subject).policy_uuid).toBe("a")
  })

  it("skips inactive and out-of-scope policies", () => {
    const draft = rulesPolicy({ decision: "deny", status: "draft" })
    const otherAgent = rulesPolicy({ decision: "deny", scope: { agent_ids: ["ops-bot"], action_types: [] } })
    const otherType = rulesPolicy({ decision: "deny", scope: { agent_ids: [], action_types: ["email.send"] } })
    const inScope = rulesPolicy({
      decision: "require_approval",
      scope: { agent_ids: ["billing-bot"], action_types: ["payment.transfer"] }
    })
    const result = combineDecisions([draft, otherAgent, otherType, inScope], subject)
    expect(result).toMatchObject({ decision: "require_approval", policy_uuid: inScope.id, evaluated: [inScope.id] })
    // An action without agent_id is outside a policy scoped to agents.
    expect(combineDecisions([otherAgent], { ...subject, agent_id: null }).evaluated).toEqual([])
  })

  it("ai and consensus policies fail closed to require_approval with a warning", () => {
    const ai: EvaluablePolicy = { ...rulesPolicy({ decision: "allow" }), mode: "ai", name: "Spend guard", rules: undefined }
    const result = combineDecisions([ai], subject)
    expect(result.decision).toBe("require_approval")
    expect(result.policy_uuid).toBe(ai.id)
    expect(result.warnings).toEqual([
      "AI policy Spend guard could not be evaluated (no model call available); human approval required"
    ])
    const deny = rulesPolicy({ decision: "deny", priority: -1 })
    expect(combineDecisions([ai, deny], subject)).toMatchObject({ decision: "deny", policy_uuid: deny.id })
    const consensus: EvaluablePolicy = { ...ai, id: "c", mode: "consensus" }
    expect(combineDecisions([consensus], subject).decision).toBe("require_approval")
  })

  it("an evaluator that throws fails closed", () => {
    const policy = rulesPolicy({ decision: "allow" })
    const result = combineDecisions([policy], subject, {
      rules: () => {
        throw new Error("boom")
      }
    })
    expect(result.decision).toBe("require_approval")
    expect(result.warnings).toHaveLength(1)
  })

  it("content_scan policies produce their decision on a finding or a custom pattern match", () => {
    const scanOf = (config: unknown) => {
      const result = compileScanConfig(config)
      if (!result.ok) throw new Error(JSON.stringify(result))
      return result.compiled
    }
    const secrets: EvaluablePolicy = {
      ...rulesPolicy({ decision: "deny" }),
      mode: "content_scan",
      rules: undefined,
      scan: scanOf({ libraries: ["credentials"] })
    }
    const clean = combineDecisions([secrets], subject)
    expect(clean.decision).toBe("allow")
    const leaking = { ...subject, details: `use key ${"AKIA"}IOSFODNN7EXAMPLE` }
    expect(combineDecisions([secrets], leaking)).toMatchObject({ decision: "deny", policy_uuid: secrets.id })
    // Secrets inside context strings are scanned too.
    const inContext = { ...subject, context: { headers: { authorization: `Bearer ${"x".repeat(32)}` } } }
    expect(combineDecisions([secrets], inContext).decision).toBe("deny")

    const customOnly: EvaluablePolicy = {
      ...secrets,
      id: "custom",
      decision: "require_approval",
      scan: scanOf({ custom_patterns: [{ name: "acme", regex: "(?i)acme corp", severity: "info" }] })
    }
    expect(combineDecisions([customOnly], subject)).toMatchObject({ decision: "require_approval", policy_uuid: "custom" })

    // info-only findings (an IP address) never trigger a library policy
    const pii = scanOf({ libraries: ["pii"] })
    expect(matchContentScan(pii, { ...subject, details: "host 10.0.0.1" })).toBeUndefined()
    expect(matchContentScan(pii, { ...subject, details: "mail a@b.io" })?.entity_type).toBe("email")
  })
})

describe("scan_config validation", () => {
  it("defaults to both libraries when absent and rejects unknown libraries", () => {
    expect(compileScanConfig(undefined)).toMatchObject({ ok: true, compiled: { libraries: ["credentials", "pii"] } })
    const bad = compileScanConfig({ libraries: ["pii", "genome"] })
    expect(bad).toMatchObject({ ok: false, code: "VALIDATION_ERROR", issues: [{ path: "scan_config.libraries[1]" }] })
    expect(compileScanConfig({ libraries: [] })).toMatchObject({ ok: false, code: "VALIDATION_ERROR" })
    expect(compileScanConfig({ custom_patterns: [{ name: "x", regex: "(" }] })).toMatchObject({
      ok: false,
      code: "INVALID_REGEX"
    })
  })
})

describe("dryRun", () => {
  it("reports the policy decision when it matches, allow otherwise, with confidence", () => {
    const deny = rulesPolicy({ decision: "deny", status: "draft" })
    expect(dryRun(deny, subject)).toMatchObject({ decision: "deny", confidence: 1 })
    expect(dryRun(deny, { ...subject, action_type: "email.send" })).toMatchObject({ decision: "allow", confidence: 1 })
    const ai: EvaluablePolicy = { ...deny, mode: "consensus" }
    expect(dryRun(ai, subject)).toMatchObject({ decision: "require_approval", confidence: 0 })
  })
})

// ---------------------------------------------------------------------------
// Property: combineDecisions equals a plain reference model
// ---------------------------------------------------------------------------

const RANK: Record<PolicyDecision, number> = { allow: 0, require_approval: 1, deny: 2 }

const arbPolicy = fc.record({
  decision: fc.constantFrom<PolicyDecision>("allow", "require_approval", "deny"),
  priority: fc.integer({ min: -2, max: 2 }),
  day: fc.integer({ min: 1, max: 3 }),
  mode: fc.constantFrom("rules", "rules", "rules", "ai", "consensus"),
  status: fc.constantFrom("active", "active", "draft", "inactive"),
  matchType: fc.constantFrom("t1", "t2"),
  scopeAgents: fc.subarray(["a1", "a2"]),
  scopeTypes: fc.subarray(["t1", "t2"])
})

describe("combineDecisions property", () => {
  it("matches the reference model", () => {
    fc.assert(
      fc.property(
        fc.array(arbPolicy, { maxLength: 8 }),
        fc.constantFrom("t1", "t2"),
        fc.constantFrom("a1", "a2", null),
        (specs, actionType, agentId) => {
          const policies: Array<EvaluablePolicy> = specs.map((s, i) => ({
            id: `id-${String(i).padStart(2, "0")}-${(i * 7919) % 13}`,
            name: `policy ${i}`,
            mode: s.mode as EvaluablePolicy["mode"],
            decision: s.decision,
            priority: s.priority,
            created_at: `2026-01-0${s.day}T00:00:00.000Z`,
            status: s.status as EvaluablePolicy["status"],
            scope: { agent_ids: s.scopeAgents, action_types: s.scopeTypes },
            rules: s.mode === "rules" ? compile([{ field: "action_type", op: "eq", value: s.matchType }]) : undefined
          }))
          const subj: PolicySubject = { action_type: actionType, details: "", agent_id: agentId }

          // Reference model, written independently of the implementation.
          const applicable = specs
            .map((s, i) => ({ s, p: policies[i] }))
            .filter(({ s }) => s.status === "active")
            .filter(({ s }) => s.scopeAgents.length === 0 || (agentId !== null && s.scopeAgents.includes(agentId)))
            .filter(({ s }) => s.scopeTypes.length === 0 || s.scopeTypes.includes(actionType))
            .sort((x, y) => y.s.priority - x.s.priority || x.s.day - y.s.day || (x.p.id < y.p.id ? -1 : 1))
          const produced = applicable
            .map(({ s, p }) => ({
              id: p.id,
              decision:
                s.mode === "rules"
                  ? s.matchType === actionType
                    ? s.decision
                    : null
                  : ("require_approval" as PolicyDecision)
            }))
            .filter((x): x is { id: string; decision: PolicyDecision } => x.decision !== null)
          const best = produced.reduce<PolicyDecision>((acc, x) => (RANK[x.decision] > RANK[acc] ? x.decision : acc), "allow")
          const expectedUuid = produced.find((x) => x.decision === best)?.id ?? null
          const firstDeny = applicable.findIndex(({ p }) => produced.some((x) => x.id === p.id && x.decision === "deny"))
          const expectedEvaluated = (firstDeny === -1 ? applicable : applicable.slice(0, firstDeny + 1)).map(({ p }) => p.id)

          const result = combineDecisions(policies, subj)
          expect(result.decision).toBe(best)
          expect(result.policy_uuid).toBe(expectedUuid)
          expect(result.evaluated).toEqual(expectedEvaluated)
          if (applicable.some(({ s }) => s.mode !== "rules")) expect(result.decision).not.toBe("allow")
        }
      ),
      { numRuns: 2_000 }
    )
  })
})

describe("built-in models", () => {
  it("knows the direct-provider catalogue", () => {
    expect(isKnownModel("claude-sonnet-4-6")).toBe(true)
    expect(isKnownModel("gpt-5-mini")).toBe(true)
    expect(isKnownModel("gemini-2.5-pro")).toBe(true)
    expect(isKnownModel("gpt-2")).toBe(false)
    expect(isKnownModel("custom:my-model")).toBe(false)
    expect(findBuiltinModel("gemini-2.5-flash")?.provider).toBe("direct_c")
    expect(new Set(BUILTIN_MODELS.map((m) => m.model_id)).size).toBe(BUILTIN_MODELS.length)
    expect(new Set(BUILTIN_MODELS.map((m) => m.provider))).toEqual(new Set(["direct_a", "direct_b", "direct_c"]))
  })
})

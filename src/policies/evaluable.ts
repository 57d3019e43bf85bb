/** A stored policy compiled for evaluation (once per snapshot, not per request). */
import * as Schema from "effect/Schema"
import { compileConditions } from "./conditions.js"
import { compileScanConfig } from "./content-scan.js"
import { type EvaluablePolicy, POLICY_DECISIONS, POLICY_MODES, POLICY_STATUSES } from "./types.js"

/**
 * The parts of a stored policy evaluation needs: what the org snapshot carries (a schema, since
 * the snapshot may cross processes). Conditions and scan_config stay raw; they compile on arrival.
 */
export const EvaluableRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mode: Schema.Literals(POLICY_MODES),
  decision: Schema.Literals(POLICY_DECISIONS),
  priority: Schema.Number,
  created_at: Schema.String,
  status: Schema.Literals(POLICY_STATUSES),
  scope: Schema.Struct({ agent_ids: Schema.Array(Schema.String), action_types: Schema.Array(Schema.String) }),
  conditions: Schema.Unknown,
  scan_config: Schema.Unknown,
  ai_prompt: Schema.optionalKey(Schema.NullOr(Schema.String)),
  ai_models: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  updated_at: Schema.optionalKey(Schema.NullOr(Schema.String))
})
export type EvaluableRow = typeof EvaluableRow.Type

/** Invalid stored parts make the policy fail closed in the evaluator. */
export const toEvaluable = (row: EvaluableRow): EvaluablePolicy => {
  const base = {
    id: row.id,
    name: row.name,
    mode: row.mode,
    decision: row.decision,
    priority: row.priority,
    created_at: row.created_at,
    status: row.status,
    scope: row.scope
  }
  if (row.mode === "rules") {
    const compiled = compileConditions(row.conditions, { required: false })
    return compiled.ok ? { ...base, rules: compiled.compiled } : base
  }
  if (row.mode === "content_scan") {
    const compiled = compileScanConfig(row.scan_config)
    return compiled.ok ? { ...base, scan: compiled.compiled } : base
  }
  if ((row.mode === "ai" || row.mode === "consensus") && row.ai_prompt && row.ai_models && row.ai_models.length > 0) {
    // The version keys cached model answers: an edited policy is asked again.
    return { ...base, ai: { prompt: row.ai_prompt, models: row.ai_models, version: row.updated_at ?? row.created_at } }
  }
  return base
}

/** A stored policy compiled for evaluation (once per snapshot, not per request). */
import { compileConditions } from "./conditions.js"
import { compileScanConfig } from "./content-scan.js"
import type { PolicyRow } from "./store.js"
import type { EvaluablePolicy } from "./types.js"

/** The parts of a stored policy evaluation needs (what the org snapshot carries). */
export type EvaluableRow = Pick<PolicyRow, "id" | "name" | "mode" | "decision" | "priority" | "created_at" | "status" | "scope" | "conditions" | "scan_config">

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
  return base
}

/**
 * The policy evaluations an authorization records on its action (actions.policy_evaluations), for
 * the action's signed explanation. Encoded on the authorize hot path, so it is JSON text built by
 * hand in a compact form (one row per evaluated policy, no text for a policy that did not match):
 *
 *   {"v":1,"at":"<ISO instant>","steps":[[policy_uuid, policy_name, mode, decision, confidence,
 *    reasoning | null, model_votes | null], ...]}
 *
 * JSON.stringify over one object per policy cost far more than the decision itself (10 policies:
 * ~20-40 µs against ~1-3 µs); by hand, with each policy's quoted prefix cached, it is a few joins.
 */

import { PolicyDecisions, PolicyModes } from "../../protocol/lists.js"
import type { Judgement } from "./ai-judge.js"
import type { PolicyStep } from "./evaluate.js"
import type { EvaluablePolicy, PolicyDecision, PolicyMode } from "./types.js"

/** One decoded evaluation, as the explanation's `policy_chain` shows it (less order and evidence_quality). */
export interface RecordedEvaluation {
  readonly policy_uuid: string | null
  readonly policy_name: string | null
  readonly mode: PolicyMode | null
  readonly decision: PolicyDecision
  readonly confidence: number | null
  readonly reasoning: string | null
  readonly model_votes: ReadonlyArray<{ readonly model: string; readonly decision: string; readonly confidence: number | null }> | null
  readonly evaluated_at: string | null
}

const quote = JSON.stringify

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * Text Postgres jsonb accepts: no NUL, no lone surrogate (either makes the INSERT fail). Reasons
 * and vote model names can come from a model's answer; ids and names come from the database.
 */
export const storableText = (text: string): string => text.replace(LONE_SURROGATE, "\ufffd").replaceAll("\u0000", "")

/** A finite confidence in 0..1, as JSON text ("null" otherwise). */
const confidenceText = (value: number): string => (Number.isFinite(value) ? String(Math.min(1, Math.max(0, value))) : "null")

/** A model's answer in the policy vocabulary: APPROVE lets the action pass, DENY applies the policy, anything else asks a human. */
const voteDecision = (answer: string, policy: EvaluablePolicy): PolicyDecision =>
  answer === "APPROVE" ? "allow" : answer === "DENY" ? policy.decision : "require_approval"

const stepText = (step: PolicyStep, judgement: Judgement | undefined): string => {
  const policy = step.policy
  const match = step.match
  if (match.kind === "no_match" && judgement === undefined) return `${prefixOf(policy)}"allow",1,null,null]`
  const confidence = judgement !== undefined ? judgement.confidence : match.kind === "unavailable" ? 0 : 1
  const reasoning = match.kind === "match" ? quote(storableText(match.reason)) : match.kind === "unavailable" ? quote(storableText(match.warning)) : "null"
  const votes =
    policy.mode === "consensus" && judgement !== undefined
      ? quote(judgement.votes.map((vote) => ({ model: storableText(vote.model), decision: voteDecision(vote.decision, policy), confidence: vote.confidence })))
      : "null"
  return `${prefixOf(policy)}"${step.produced}",${confidenceText(confidence)},${reasoning},${votes}]`
}

/** `[id,name,"mode",` per compiled policy: snapshot policies live until the next change, so quote them once. */
const prefixes = new WeakMap<EvaluablePolicy, string>()
const prefixOf = (policy: EvaluablePolicy): string => {
  let prefix = prefixes.get(policy)
  if (prefix === undefined) {
    prefix = `[${quote(policy.id)},${quote(policy.name)},"${policy.mode}",`
    prefixes.set(policy, prefix)
  }
  return prefix
}

/** The JSON text to store for a combined decision's steps; ai and consensus steps carry the judge's confidence and votes. */
export const encodeEvaluations = (trace: ReadonlyArray<PolicyStep>, judgements: ReadonlyMap<string, Judgement> | undefined, at: string): string => {
  let steps = ""
  for (let index = 0; index < trace.length; index++) {
    const step = trace[index]!
    steps += (index === 0 ? "" : ",") + stepText(step, judgements?.get(step.policy.id))
  }
  return `{"v":1,"at":"${at}","steps":[${steps}]}`
}

const MODES = new Set<string>(PolicyModes)
const DECISIONS = new Set<string>(PolicyDecisions)

const textOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null)
const confidenceOf = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : null)

const votesOf = (value: unknown): RecordedEvaluation["model_votes"] =>
  Array.isArray(value)
    ? value
        .filter((vote): vote is Record<string, unknown> => typeof vote === "object" && vote !== null)
        .map((vote) => ({ model: String(vote.model ?? ""), decision: String(vote.decision ?? ""), confidence: confidenceOf(vote.confidence) }))
    : null

/** The stored value read back; undefined when there is none (actions from before it was recorded) or it is not this format. */
export const decodeEvaluations = (stored: unknown): ReadonlyArray<RecordedEvaluation> | undefined => {
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return undefined
  const record = stored as Record<string, unknown>
  if (record.v !== 1 || !Array.isArray(record.steps)) return undefined
  const at = typeof record.at === "string" && !Number.isNaN(Date.parse(record.at)) ? new Date(record.at).toISOString() : null
  return record.steps.filter(Array.isArray).map((step: ReadonlyArray<unknown>) => {
    const name = textOrNull(step[1])
    const mode = typeof step[2] === "string" && MODES.has(step[2]) ? (step[2] as PolicyMode) : null
    const decision = typeof step[3] === "string" && DECISIONS.has(step[3]) ? (step[3] as PolicyDecision) : "require_approval"
    return {
      policy_uuid: textOrNull(step[0]),
      policy_name: name,
      mode,
      decision,
      confidence: confidenceOf(step[4]),
      // A policy that did not match stores no text: say so here.
      reasoning: textOrNull(step[5]) ?? (decision === "allow" ? `policy ${name ?? step[0]} does not match this action` : null),
      model_votes: votesOf(step[6]),
      evaluated_at: at
    }
  })
}

/**
 * The decision an action's outcome implies when no evaluation was recorded (CONTRACT "Signed
 * explanations"): denied by a policy → deny; sent to a human → require_approval; else allow.
 */
export const inferredDecision = (status: string, wentToHuman: boolean): "allow" | "require_approval" | "deny" =>
  status === "denied_by_policy" ? "deny" : wentToHuman ? "require_approval" : "allow"

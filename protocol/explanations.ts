/**
 * Signed explanations (CONTRACT.md "Signed explanations"): why one action ended as it did (its
 * policy evaluations, the human decisions on it, its receipt), signed like a receipt so anyone can
 * check it offline; a PDF print of it; and the public route that checks one.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { Ed25519Signature, Sha256Hash, Timestamp } from "./common.js"
import { BadRequest, Forbidden, InvalidInput, PayloadTooLarge, refusal } from "./errors.js"
import { PolicyDecisions } from "./lists.js"

const Text = Schema.String
const OptionalText = Schema.NullOr(Schema.String)

export const ExplainedAction = Schema.Struct({
  action_uuid: Text,
  org_uuid: Text,
  agent_id: OptionalText,
  agent_version: OptionalText,
  action_type: Text,
  model_id: OptionalText,
  model_version: OptionalText,
  instruction_hash: OptionalText,
  action_details_hash: Text,
  outcome_hash: OptionalText,
  parent_action_uuid: OptionalText,
  status: Text,
  created_at: Timestamp
})
export type ExplainedAction = typeof ExplainedAction.Type

export const PolicyChainDecision = Schema.Literals(PolicyDecisions)

export const PolicyChainEntry = Schema.Struct({
  order: Schema.Int,
  policy_uuid: OptionalText,
  policy_name: OptionalText,
  mode: Schema.NullOr(Schema.Literals(["rules", "ai", "consensus", "content_scan", "output_scan"])),
  decision: PolicyChainDecision,
  confidence: Schema.NullOr(Schema.Number),
  reasoning: OptionalText,
  model_votes: Schema.NullOr(Schema.Array(Schema.Struct({ model: Text, decision: Text, confidence: Schema.NullOr(Schema.Number) }))),
  evaluated_at: Schema.NullOr(Timestamp),
  evidence_quality: Schema.Literals(["recorded", "inferred"])
})
export type PolicyChainEntry = typeof PolicyChainEntry.Type

export const ApprovalChainEntry = Schema.Struct({
  kind: Schema.Literals(["approval", "denial", "cosignature"]),
  email: OptionalText.annotate({ description: "null for an expiry" }),
  channel: Schema.Literals(["code", "token", "dashboard", "expiry"]),
  reason: OptionalText,
  at: Timestamp
})
export type ApprovalChainEntry = typeof ApprovalChainEntry.Type

export const ExplainedReceipt = Schema.Struct({
  receipt_uuid: Text,
  receipt_status: Text,
  receipt_version: Text,
  payload_hash: Sha256Hash,
  signature: Ed25519Signature,
  public_key_id: Text,
  timestamp_token_present: Schema.Boolean,
  verify_url: Text,
  created_at: Timestamp
})
export type ExplainedReceipt = typeof ExplainedReceipt.Type

export const Regulation = Schema.Struct({
  framework: Schema.Literal("eu_ai_act"),
  instrument: Schema.Literal("Regulation (EU) 2024/1689"),
  articles: Schema.Array(Text),
  explanation_version: Schema.Literal("1.0")
})

export const ExplanationEnvelope = Schema.Struct({
  alg: Schema.Literal("Ed25519"),
  signing_key_id: Text,
  content_hash: Sha256Hash,
  signature: Ed25519Signature,
  generated_at: Timestamp.annotate({ description: "when this copy was made; not signed" })
})
export type ExplanationEnvelope = typeof ExplanationEnvelope.Type

/** The five signed keys: their JCS bytes are what `_envelope` hashes and signs. */
export const ExplanationContent = Schema.Struct({
  action: ExplainedAction,
  policy_chain: Schema.Array(PolicyChainEntry),
  approval_chain: Schema.Array(ApprovalChainEntry),
  receipt: Schema.NullOr(ExplainedReceipt),
  regulation: Regulation
})
export type ExplanationContent = typeof ExplanationContent.Type

export const Explanation = Schema.Struct({ ...ExplanationContent.fields, _envelope: ExplanationEnvelope })
export type Explanation = typeof Explanation.Type

const Check = Schema.Union([Schema.Literal(true), Schema.String]).annotate({ description: "true, or why the check failed (\"not checked\" after an earlier failure)" })

export const ExplanationVerification = Schema.Struct({
  valid: Schema.Boolean,
  checks: Schema.Struct({
    envelope_present: Check,
    key_known: Check,
    content_hash_matches: Check,
    signature_valid: Check
  }),
  signing_key_id: OptionalText,
  verified_at: Timestamp
})

/** An action that does not exist or belongs to another organization (404 either way). */
export class ExplanationNotFound extends Schema.Error<ExplanationNotFound>("ExplanationNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such action in the caller's organization"
}) {
  readonly _tag = "ExplanationNotFound"
  static of(actionUuid: string) {
    return new ExplanationNotFound({ message: `Action ${actionUuid} not found`, details: { action_uuid: actionUuid } })
  }
}

const ActionParam = { action_uuid: Schema.String }

export class ExplanationsGroup extends HttpApiGroup.make("explanations")
  .add(
    HttpApiEndpoint.get("explain", "/api/v1/actions/:action_uuid/explanation", { error: [Forbidden, ExplanationNotFound], params: ActionParam, success: Explanation }),
    HttpApiEndpoint.get("explanationPdf", "/api/v1/actions/:action_uuid/explanation/pdf", {
      error: [Forbidden, ExplanationNotFound],
      params: ActionParam,
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" }))
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Signed explanations",
      description: "Why an action ended as it did, signed with the receipt key (scope `actions:read`); the PDF prints it."
    })
  )
{}

export class ExplanationsPublicGroup extends HttpApiGroup.make("explanationsPublic")
  .add(
    HttpApiEndpoint.post("verifyExplanation", "/api/v1/verify/explanation", {
      payload: Schema.Record(Schema.String, Schema.Unknown).annotate({
        description: "`{explanation}`, or the explanation itself; `envelope` is read for `_envelope`"
      }),
      success: ExplanationVerification,
      error: [BadRequest, PayloadTooLarge, InvalidInput]
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Explanation verification",
      description: "Checks a signed explanation against the published receipt keys; nothing is stored. Public, rate-limited per client IP; bodies over 1 MiB answer 413."
    })
  )
{}

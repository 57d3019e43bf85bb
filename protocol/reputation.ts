/**
 * Reputation (CONTRACT-sdk-beyond §3): a public, signed score anyone can recompute from its inputs,
 * fed by counterparties' signed attestations. Every route is public (per-IP limited; a credential
 * sent is ignored) and reads any organization's agent.
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { PublicRoute } from "./auth.js"
import { Ed25519Signature, PageQuery, Pagination, Sha256Hash, Timestamp } from "./common.js"
import { AgentNotFound, accessRefusal, InvalidInput, refusal } from "./errors.js"
import { DidNoVerificationMethod, DidUnsupportedKeyFormat } from "./mutual-signing.js"

/** The formula lives with the offline verifier, so the server and an auditor compute the same. */
export { REPUTATION_FORMULA_VERSION as FORMULA_VERSION } from "./verifier/reputation.js"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** What the score is computed from, counted now (formula "1.0"). */
export const ReputationInputs = Schema.Struct({
  agent_slug: Schema.String,
  notarized: Count,
  failed: Count,
  denied_by_policy: Count,
  denied_by_human: Count.annotate({ description: "denied by a human; expired approvals excluded" }),
  human_approved: Count.annotate({ description: "actions a human approved" }),
  attested_success: Count.annotate({ description: "distinct actions with at least one valid attestation of success" }),
  attested_failure: Count.annotate({ description: "distinct actions with at least one valid attestation of failure" }),
  attestations: Count.annotate({ description: "all valid attestations" }),
  age_days: Count.annotate({ description: "whole days since registration" }),
  decommissioned: Schema.Boolean,
  computed_at: Timestamp
}).annotate({
  description:
    "An agent's actions are those with its agent_id in an organization that owned the agent when they were created (owners from its transfers)."
})
export type ReputationInputs = typeof ReputationInputs.Type

export const ReputationTiers = ["decommissioned", "unrated", "untrusted", "provisional", "established", "trusted", "exemplary"] as const
export const ReputationTier = Schema.Literals(ReputationTiers)
export type ReputationTier = typeof ReputationTier.Type

export const SnapshotTriggers = ["read", "attestation", "decommission"] as const

const FORMULA =
  "Formula 1.0, integers, each quotient floored: executed = notarized + failed, decided = executed + denied_by_policy + denied_by_human; score = reliability floor(40(notarized+5)/(executed+10)) + compliance floor(20(executed+5)/(decided+10)) + oversight min(10, human_approved) + endorsement min(20, max(0, 2 attested_success − 4 attested_failure)) + tenure min(10, floor(age_days/30)), 0 when decommissioned. Tier: decommissioned; unrated when decided + attestations = 0; else untrusted 0-29, provisional 30-49, established 50-69, trusted 70-84, exemplary 85-100."

const Score = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 })).annotate({ description: "formula 1.0 (see Reputation)" })

/** The signature fields: `score_hash` over the JCS of `{formula_version, inputs, score}`, signed like a receipt. */
const Signed = {
  score_hash: Sha256Hash,
  signature: Ed25519Signature,
  public_key_id: Schema.String.annotate({ description: "the receipt key that signed score_hash's bytes (in /api/v1/.well-known/jwks.json)" })
}

export const Reputation = Schema.Struct({
  agent_slug: Schema.String,
  score: Score,
  tier: ReputationTier,
  total_attestations: Count,
  computed_at: Timestamp,
  formula_version: Schema.String,
  ...Signed,
  snapshot_uuid: Schema.String
})
export type Reputation = typeof Reputation.Type

export const ReputationSnapshot = Schema.Struct({
  snapshot_uuid: Schema.String,
  score: Score,
  tier: ReputationTier,
  formula_version: Schema.String,
  inputs: ReputationInputs,
  ...Signed,
  computed_at: Timestamp,
  trigger: Schema.Literals(SnapshotTriggers)
})
export type ReputationSnapshot = typeof ReputationSnapshot.Type

export const ReputationHistory = Schema.Struct({
  snapshots: Schema.Array(ReputationSnapshot),
  data: Schema.Array(ReputationSnapshot),
  pagination: Pagination
})
export type ReputationHistory = typeof ReputationHistory.Type

export const ReputationVerification = Schema.Struct({
  agent_slug: Schema.String,
  inputs: ReputationInputs,
  formula_version: Schema.String,
  score: Score,
  tier: ReputationTier,
  ...Signed,
  computed_at: Timestamp
})
export type ReputationVerification = typeof ReputationVerification.Type

/** At most `max` characters (code points, as JSON Schema's maxLength counts them; not UTF-16 units). */
const codePointsAtMost = (max: number) =>
  Schema.makeFilter((value: string) => ([...value].length <= max ? undefined : `must be at most ${max} characters`), {
    expected: `at most ${max} characters`,
    toJsonSchema: () => ({ maxLength: max })
  })

export const AttestationOutcomes = ["success", "failure"] as const

/** The request, as the handler checks it (after the agent: an unknown agent is 404 whatever the body). */
export const AttestRequest = Schema.Struct({
  counterparty_did: Schema.String.check(Schema.isMaxLength(2048), Schema.isPattern(/^did:web:[^\s]+$/)).annotate({
    description: "the attesting party's did:web; its document holds the Ed25519VerificationKey2020 key that signed"
  }),
  action_uuid: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)).annotate({
    description: "the agent's action attested (`action_id`, as the SDKs send it, is read when action_uuid is absent)"
  }),
  attestation: Schema.String.annotate({
    description:
      'the text of a JSON object {agent_slug, action_uuid, counterparty_did, outcome: "success"|"failure", attested_at, comment? (<= 1,000)}; the first three equal the path and body, attested_at not after now + 5 min'
  }).check(codePointsAtMost(4096)),
  signature: Ed25519Signature.annotate({ description: "`ed25519:` + base64url over the exact UTF-8 bytes of `attestation` as sent" })
})
export type AttestRequest = typeof AttestRequest.Type

/** The statement inside `attestation`, as parsed. */
export const AttestationStatement = Schema.Struct({
  agent_slug: Schema.String,
  action_uuid: Schema.String,
  counterparty_did: Schema.String,
  outcome: Schema.Literals(AttestationOutcomes),
  attested_at: Schema.String,
  comment: Schema.optionalKey(Schema.NullOr(Schema.String.check(codePointsAtMost(1000))))
})

export const Attested = Schema.Struct({
  attestation_uuid: Schema.String,
  agent_slug: Schema.String,
  action_uuid: Schema.String,
  counterparty_did: Schema.String,
  outcome: Schema.Literals(AttestationOutcomes),
  attested_at: Timestamp,
  attestation_hash: Sha256Hash.annotate({ description: "sha256 of the attestation's UTF-8 bytes" }),
  verification_method: Schema.String.annotate({ description: "the id of the DID document's method whose key verified the signature" }),
  recorded_at: Timestamp,
  reputation: Schema.Struct({ score: Score, tier: ReputationTier, score_hash: Sha256Hash })
})
export type Attested = typeof Attested.Type

/* Refusals of the attestation, in the order they are checked (after 404 agent and 422 shape). */

export class AttestedActionNotFound extends Schema.Error<AttestedActionNotFound>("AttestedActionNotFound")(
  refusal("NOT_FOUND", "No such action of this agent"),
  { httpApiStatus: 404, description: "The action is unknown, or not this agent's" }
) {
  readonly _tag = "AttestedActionNotFound"
  static of(action_uuid: string) {
    return new AttestedActionNotFound({ details: { action_uuid } })
  }
}

export class AttestedActionState extends Schema.Error<AttestedActionState>("AttestedActionState")(refusal("INVALID_ACTION_STATE"), {
  httpApiStatus: 409,
  description: "Only notarized or failed actions can be attested"
}) {
  readonly _tag = "AttestedActionState"
  static of(action_uuid: string, status: string) {
    return new AttestedActionState({ message: `Action is ${status}; only notarized or failed actions can be attested`, details: { action_uuid, status } })
  }
}

export class SelfAttestation extends Schema.Error<SelfAttestation>("SelfAttestation")(
  refusal("SELF_ATTESTATION", "An agent, its organization's other agents and the platform cannot attest the agent's actions"),
  { httpApiStatus: 422, description: "The DID is the agent's, another agent's of its organization, or the platform's" }
) {
  readonly _tag = "SelfAttestation"
  static of(counterparty_did: string) {
    return new SelfAttestation({ details: { counterparty_did } })
  }
}

export class AttestationInvalidSignature extends Schema.Error<AttestationInvalidSignature>("AttestationInvalidSignature")(
  refusal("INVALID_SIGNATURE", "The signature does not verify with an Ed25519 key of the counterparty's DID document"),
  { httpApiStatus: 400, description: "The signature over the attestation's bytes does not verify with the DID's keys" }
) {
  readonly _tag = "AttestationInvalidSignature"
  static of(counterparty_did: string) {
    return new AttestationInvalidSignature({ details: { counterparty_did } })
  }
}

export class DuplicateAttestation extends Schema.Error<DuplicateAttestation>("DuplicateAttestation")(
  refusal("DUPLICATE_ATTESTATION", "This DID already attested this action"),
  { httpApiStatus: 409, description: "One attestation per action and DID" }
) {
  readonly _tag = "DuplicateAttestation"
  static of(action_uuid: string, counterparty_did: string) {
    return new DuplicateAttestation({ details: { action_uuid, counterparty_did } })
  }
}

export class AttestRateLimited extends Schema.Error<AttestRateLimited>("AttestRateLimited")(
  accessRefusal("RATE_LIMIT_EXCEEDED", "Attestations are limited per minute per client IP"),
  { httpApiStatus: 429, description: "Too many attestations this minute from the client's address" }
) {
  readonly _tag = "AttestRateLimited"
  static of(perMinute: number, retryAfterSeconds: number) {
    const message = `Attestations are limited to ${perMinute} per minute per client IP; retry in ${retryAfterSeconds} s`
    return new AttestRateLimited({ message, error: message })
  }
}

const SlugParam = { agent_slug: Schema.String }
const PATH = "/api/v1/agents/:agent_slug/reputation"

export class ReputationGroup extends HttpApiGroup.make("reputation")
  .add(
    HttpApiEndpoint.get("current", PATH, { error: AgentNotFound, params: SlugParam, success: Reputation }).middleware(PublicRoute),
    HttpApiEndpoint.get("history", `${PATH}/history`, {
      error: AgentNotFound,
      params: SlugParam,
      query: PageQuery,
      success: ReputationHistory
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("verify", `${PATH}/verify`, { error: AgentNotFound, params: SlugParam, success: ReputationVerification }).middleware(PublicRoute),
    HttpApiEndpoint.post("attest", `${PATH}/attest`, {
      error: [
        AttestRateLimited,
        AgentNotFound,
        InvalidInput,
        AttestedActionNotFound,
        AttestedActionState,
        SelfAttestation,
        DidNoVerificationMethod,
        DidUnsupportedKeyFormat,
        AttestationInvalidSignature,
        DuplicateAttestation
      ],
      params: SlugParam,
      // Any body reaches the handler, which checks the agent first (404) and then this shape (422).
      payload: Schema.Union([AttestRequest, Schema.Unknown]),
      success: Attested.pipe(HttpApiSchema.status(201))
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Reputation",
      description:
        `Public and signed: score_hash = sha256 of the JCS of {formula_version, inputs, score}, signed with the receipt key; verify answers the inputs so anyone recomputes both. ${FORMULA} Attestations are limited to 10 per minute per client IP.`
    })
  )
{}

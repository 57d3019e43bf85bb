/**
 * Verifiable credentials (spec 001 "Verifiable credentials"): W3C credentials of an agent's
 * capabilities with Ed25519Signature2020 proofs by the platform's root DID, revocable through
 * StatusList2021 lists.
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp, Timestamp } from "./common.js"
import { AgentNotFound, Forbidden, refusal } from "./errors.js"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
/**
 * Signed or processed as JSON-LD: served as application/ld+json, which the transport leaves as
 * it is (no `request_id` added: an unknown term would fail JSON-LD's safe mode and the proof).
 */
const LinkedData = JsonObject.pipe(HttpApiSchema.asJson({ contentType: "application/ld+json" }))

export const CredentialRecord = Schema.Struct({
  vc_id: Schema.String.annotate({ description: "urn:uuid:<uuid>" }),
  vc_json: JsonObject,
  issued_at: Timestamp,
  expires_at: Timestamp,
  revoked_at: NullableTimestamp,
  version: Schema.Number
})
export type CredentialRecord = typeof CredentialRecord.Type

export const VerificationChecks = Schema.Struct({
  signature: Schema.Boolean,
  not_expired: Schema.Boolean,
  not_revoked: Schema.Boolean,
  issuer_valid: Schema.Boolean,
  structure_valid: Schema.Boolean
})

export const CurrentCredential = Schema.Struct({ credential: Schema.NullOr(JsonObject), message: Schema.NullOr(Schema.String) })
export type CurrentCredential = typeof CurrentCredential.Type

export const Verification = Schema.Struct({ valid: Schema.Boolean, checks: VerificationChecks })
export type Verification = typeof Verification.Type

export const CredentialList = Schema.Struct({ credentials: Schema.Array(CredentialRecord), data: Schema.Array(CredentialRecord) })
export type CredentialList = typeof CredentialList.Type

/** `reason` null when none was given (the published SDKs send `""` by default). */
export const Revoked = Schema.Struct({ vc_id: Schema.String, revoked_at: Timestamp, reason: Schema.NullOr(Schema.String) })
export type Revoked = typeof Revoked.Type

export class NoActiveCredential extends Schema.Error<NoActiveCredential>("NoActiveCredential")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "The agent has no active (unrevoked, unexpired) credential"
}) {
  readonly _tag = "NoActiveCredential"
  static of(agent_slug: string) {
    return new NoActiveCredential({ message: `Agent ${agent_slug} has no active credential`, details: { agent_slug } })
  }
}

export class StatusListNotFound extends Schema.Error<StatusListNotFound>("StatusListNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such status list"
}) {
  readonly _tag = "StatusListNotFound"
  static of(list_id: string) {
    return new StatusListNotFound({ message: `Status list ${list_id} not found`, details: { list_id } })
  }
}

const SlugParam = { agent_slug: Schema.String }

export class CredentialsPublicGroup extends HttpApiGroup.make("credentialsPublic")
  .add(
    HttpApiEndpoint.get("current", "/api/v1/agents/:agent_slug/credential", { error: AgentNotFound, params: SlugParam, success: CurrentCredential }).middleware(PublicRoute),
    HttpApiEndpoint.post("verify", "/api/v1/credentials/verify", {
      payload: Schema.Struct({
        credential: JsonObject.annotate({
          description:
            "The credential, or the answer of GET /api/v1/agents/{slug}/credential as the published SDKs send it (`{credential, message}`): then the inner credential is verified (null fails every check)"
        })
      }),
      success: Verification
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("statusList", "/credentials/status/:list_id", { error: StatusListNotFound, params: { list_id: Schema.String }, success: LinkedData }).middleware(
      PublicRoute
    ),
    HttpApiEndpoint.get("context", "/contexts/agent-capability/v1", { success: LinkedData }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Credentials (public)",
      description: "An agent's current credential, verification, StatusList2021 lists (bit 1 = revoked) and the JSON-LD context."
    })
  )
{}

export class CredentialsGroup extends HttpApiGroup.make("credentials")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/agents/:agent_slug/credentials", { error: [Forbidden, AgentNotFound], params: SlugParam, success: CredentialList }),
    HttpApiEndpoint.post("revoke", "/api/v1/agents/:agent_slug/credentials/revoke", { error: [Forbidden, AgentNotFound, NoActiveCredential],
      params: SlugParam,
      // `""` or absent (the published SDKs' default) is no reason given: stored and answered as null.
      payload: Schema.Struct({ reason: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(1000)))) }),
      success: Revoked
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Credentials", description: "The organization's agents' credentials; revocation by admins." }))
{}

/**
 * DIDs and agent cards (spec 001 "DIDs and agent cards"): every agent is
 * `did:web:{host}:agents:{slug}` with an Ed25519 key; documents and cards are public at the root.
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp } from "./common.js"
import { AgentNotFound, Forbidden, refusal } from "./errors.js"

export const ED25519_2020_CONTEXT = "https://w3id.org/security/suites/ed25519-2020/v1"
export const DID_CONTEXT = "https://www.w3.org/ns/did/v1"

export const Ed25519VerificationMethod = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("Ed25519VerificationKey2020"),
  controller: Schema.String,
  publicKeyMultibase: Schema.String.annotate({ description: "`z` + base58btc of 0xed01 followed by the 32-byte public key" })
})

export const DidService = Schema.Struct({ id: Schema.String, type: Schema.String, serviceEndpoint: Schema.String })

export const DidDocument = Schema.Struct({
  "@context": Schema.Array(Schema.String),
  id: Schema.String,
  verificationMethod: Schema.Array(Ed25519VerificationMethod),
  authentication: Schema.Array(Schema.String),
  assertionMethod: Schema.Array(Schema.String),
  service: Schema.Array(DidService)
})
export type DidDocument = typeof DidDocument.Type

/** A resolved remote document: kept as sent (other methods and fields are allowed). */
const AnyDocument = Schema.Record(Schema.String, Schema.Unknown)

export const AgentCard = Schema.Struct({
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  url: Schema.String,
  did: Schema.String,
  capabilities: Schema.Array(Schema.String),
  authentication: Schema.Struct({ type: Schema.String, authorization_url: Schema.String }),
  aira: Schema.Struct({ notarization: Schema.Boolean, mutual_signing: Schema.Boolean, reputation_score: Schema.NullOr(Schema.Number) }).annotate({
    description: "the platform block"
  }),
  platform: Schema.Struct({ notarization: Schema.Boolean, mutual_signing: Schema.Boolean, reputation_score: Schema.NullOr(Schema.Number) }).annotate({
    description: "the platform block again, under a neutral name"
  })
})

export type AgentCard = typeof AgentCard.Type

/** The DID has no document we could fetch and read (absent, unreachable, not JSON, another id). */
export class DidNotResolved extends Schema.Error<DidNotResolved>("DidNotResolved")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "The DID has no document that could be fetched and read"
}) {
  readonly _tag = "DidNotResolved"
  static of(did: string, why: string) {
    return new DidNotResolved({ message: `${did} could not be resolved: ${why}`, details: { did } })
  }
}

const SlugParam = { agent_slug: Schema.String }

export class DidsPublicGroup extends HttpApiGroup.make("didsPublic")
  .add(
    HttpApiEndpoint.get("agentDidDocument", "/agents/:agent_slug/did.json", { error: AgentNotFound, params: SlugParam, success: DidDocument }).middleware(PublicRoute),
    HttpApiEndpoint.get("agentCard", "/agents/:agent_slug/.well-known/agent-card.json", { error: AgentNotFound, params: SlugParam, success: AgentCard }).middleware(
      PublicRoute
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "DIDs (public)", description: "did:web documents and agent cards, resolvable by anyone." }))
{}

export const ResolveDidRequest = Schema.Struct({
  did: Schema.String.check(Schema.isMaxLength(2048), Schema.isPattern(/^did:web:/)).annotate({ description: "a did:web identifier" })
})

/** The organization's view of its agent's DID (an empty document and version 0 when it has no key). */
export const AgentDidInfo = Schema.Struct({
  did: Schema.String,
  document: Schema.Union([DidDocument, Schema.Struct({})]),
  created_at: NullableTimestamp,
  version: Schema.Number
})
export type AgentDidInfo = typeof AgentDidInfo.Type

export const Rotated = Schema.Struct({ new_did: Schema.String, new_version: Schema.Number })
export type Rotated = typeof Rotated.Type

export const Resolved = Schema.Struct({ did: Schema.String, document: AnyDocument, cached: Schema.Boolean })
export type Resolved = typeof Resolved.Type

export class DidsGroup extends HttpApiGroup.make("dids")
  .add(
    HttpApiEndpoint.get("agentDid", "/api/v1/agents/:agent_slug/did", { error: [Forbidden, AgentNotFound], params: SlugParam, success: AgentDidInfo }),
    HttpApiEndpoint.post("rotate", "/api/v1/agents/:agent_slug/did/rotate", { error: [Forbidden, AgentNotFound], params: SlugParam, success: Rotated }),
    HttpApiEndpoint.post("resolve", "/api/v1/dids/resolve", { error: [Forbidden, DidNotResolved], payload: ResolveDidRequest, success: Resolved })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({ title: "DIDs", description: "An agent's DID and key (rotation by admins), and did:web resolution of other parties' DIDs." })
  )
{}

/**
 * The agent registry (spec 001 "Agents"; CONTRACT.md: slugs unique across organizations,
 * `owner_id` = the owning org_uuid, the published SDK's `display_name` for `name`).
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { ActionListItem, ActionStatuses } from "./actions.js"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { AgentNotFound, Forbidden, InvalidInput, refusal } from "./errors.js"

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))
const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))
const Capabilities = Schema.Array(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))).check(Schema.isMaxLength(100))
const Metadata = Schema.Record(Schema.String, Schema.Unknown)

/** Slugs are checked by the service (400 INVALID_SLUG, not 422), so the wire takes any text. */
const SlugText = Schema.String.annotate({ description: "3-64 characters: lowercase letters, digits and hyphens" })

/** What registration and update both take; all optional (registration needs a name or display_name). */
const Editable = {
  name: Schema.optionalKey(Name),
  /** The published SDK's name for `name`. */
  display_name: Schema.optionalKey(Name),
  description: Schema.optionalKey(Schema.NullOr(Text(2000))),
  capabilities: Schema.optionalKey(Schema.NullOr(Capabilities)),
  /** Replaces the stored metadata on update. */
  metadata: Schema.optionalKey(Schema.NullOr(Metadata)),
  /** The published SDKs' flag (default false); stored and answered, it hides nothing (docs/decisions.md). */
  public: Schema.optionalKey(Schema.Boolean)
}

export const RegisterAgentRequest = Schema.Struct({ agent_slug: SlugText, ...Editable })
export type RegisterAgentRequest = typeof RegisterAgentRequest.Type

export const UpdateAgentRequest = Schema.Struct(Editable)
export type UpdateAgentRequest = typeof UpdateAgentRequest.Type

export const AgentStatus = Schema.Literals(["active", "decommissioned"])

export const AgentVersion = Schema.Struct({
  agent_slug: Schema.String,
  version: Schema.String,
  /** Null when published without one (the published SDKs make it optional). */
  instruction_hash: Schema.NullOr(Schema.String),
  changelog: Schema.NullOr(Schema.String),
  published_at: Timestamp,
  // The published SDKs' keys (CONTRACT-sdk-beyond §8).
  id: Schema.String.annotate({ description: "`{agent_slug}@{version}`" }),
  status: Schema.Literal("published"),
  created_at: Timestamp.annotate({ description: "= published_at" }),
  model_id: Schema.NullOr(Schema.String),
  config_hash: Schema.NullOr(Schema.String)
})
export type AgentVersion = typeof AgentVersion.Type

/** The fields every view of an agent starts with. */
const Described = {
  agent_slug: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  capabilities: Schema.Array(Schema.String),
  status: AgentStatus
}

/** Newest first, at most this many, wherever an agent answers its versions. */
export const MAX_AGENT_VERSIONS = 20

/** The published SDKs' keys, present wherever an agent appears (CONTRACT-sdk-beyond §8). */
const SdkKeys = {
  id: Schema.String.annotate({ description: "= agent_slug" }),
  display_name: Schema.String.annotate({ description: "= name" }),
  public: Schema.Boolean,
  registered_at: Timestamp.annotate({ description: "= created_at" }),
  metadata: Schema.NullOr(Metadata),
  versions: Schema.Array(AgentVersion).annotate({ description: `The agent's versions, newest first, at most ${MAX_AGENT_VERSIONS}` })
}

export const RegisteredAgent = Schema.Struct({ ...Described, owner_id: Schema.String, created_at: Timestamp, ...SdkKeys })
export type RegisteredAgent = typeof RegisteredAgent.Type

export const AgentView = Schema.Struct({
  ...RegisteredAgent.fields,
  metadata: Metadata,
  current_version: Schema.NullOr(Schema.String),
  versions: Schema.Array(AgentVersion),
  action_count: Schema.Number,
  decommissioned_at: NullableTimestamp,
  updated_at: Timestamp
})
export type AgentView = typeof AgentView.Type

export const AgentListItem = Schema.Struct({
  agent_slug: Schema.String,
  name: Schema.String,
  status: AgentStatus,
  current_version: Schema.NullOr(Schema.String),
  action_count: Schema.Number,
  created_at: Timestamp,
  description: Schema.NullOr(Schema.String),
  capabilities: Schema.Array(Schema.String),
  ...SdkKeys
})
export type AgentListItem = typeof AgentListItem.Type

export const PublicAgent = Schema.Struct({
  ...Described,
  current_version: Schema.NullOr(Schema.String),
  owner_verified: Schema.Boolean,
  action_count: Schema.Number,
  created_at: Timestamp
})
export type PublicAgent = typeof PublicAgent.Type

/** Semantic Versioning 2.0.0 (major.minor.patch, optional pre-release and build). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/

export const PublishVersionRequest = Schema.Struct({
  version: Schema.String.check(Schema.isMaxLength(128), Schema.isPattern(SEMVER)).annotate({ description: "A semantic version, e.g. 1.2.0" }),
  instruction_hash: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)))),
  changelog: Schema.optionalKey(Schema.NullOr(Text(10_000))),
  model_id: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)))),
  config_hash: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))))
})
export type PublishVersionRequest = typeof PublishVersionRequest.Type

const OrgId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))

/** `target_org_id`, or the published SDKs' `to_org_uuid` (one is required; both must agree). */
export const TransferRequest = Schema.Struct({
  target_org_id: Schema.optionalKey(OrgId),
  to_org_uuid: Schema.optionalKey(OrgId),
  signature: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)).annotate({
    description: "`hmac-sha256:` + hex HMAC-SHA256 of the JCS of {agent_slug, from_org, to_org}, keyed by the bearer credential of this request"
  })
})

export type TransferRequest = typeof TransferRequest.Type

/** `{}` (the published SDKs' body) is a decommission with no reason given. */
export const DecommissionRequest = Schema.Struct({ reason: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1000)))) })

/** The whole agent (the Python SDK reads one), plus when and why. */
export const Decommissioned = Schema.Struct({ ...AgentView.fields, decommissioned_at: Timestamp, reason: Schema.NullOr(Schema.String) })
export type Decommissioned = typeof Decommissioned.Type

export const Transferred = Schema.Struct({
  agent_slug: Schema.String,
  previous_owner: Schema.String,
  new_owner: Schema.String,
  transferred_at: Timestamp,
  transfer_receipt_id: Schema.String
})
export type Transferred = typeof Transferred.Type

/* Refusals of the registry (the shared AgentNotFound is in errors.ts). */

export class InvalidSlug extends Schema.Error<InvalidSlug>("InvalidSlug")(
  refusal("INVALID_SLUG", "agent_slug must be 3-64 characters of lowercase letters, digits and hyphens"),
  { httpApiStatus: 400, description: "The slug is not 3-64 lowercase letters, digits and hyphens, or is reserved" }
) {
  readonly _tag = "InvalidSlug"
  static of(agent_slug: string) {
    return new InvalidSlug({ details: { agent_slug } })
  }
}

export class SlugTaken extends Schema.Error<SlugTaken>("SlugTaken")(refusal("SLUG_TAKEN"), {
  httpApiStatus: 409,
  description: "The slug is registered already (by any organization)"
}) {
  readonly _tag = "SlugTaken"
  static of(agent_slug: string) {
    return new SlugTaken({ message: `The agent slug ${agent_slug} is already registered`, details: { agent_slug } })
  }
}

export class AgentVersionExists extends Schema.Error<AgentVersionExists>("AgentVersionExists")(refusal("VERSION_EXISTS"), {
  httpApiStatus: 409,
  description: "That version of the agent is published already"
}) {
  readonly _tag = "AgentVersionExists"
  static of(agent_slug: string, version: string) {
    return new AgentVersionExists({ message: `Version ${version} of ${agent_slug} is already published`, details: { agent_slug, version } })
  }
}

export class DecommissionedAgent extends Schema.Error<DecommissionedAgent>("DecommissionedAgent")(refusal("AGENT_DECOMMISSIONED"), {
  httpApiStatus: 422,
  description: "The agent is decommissioned (irreversibly)"
}) {
  readonly _tag = "DecommissionedAgent"
  static of(agent_slug: string) {
    return new DecommissionedAgent({ message: `Agent ${agent_slug} is decommissioned`, details: { agent_slug } })
  }
}

export class InvalidTransferSignature extends Schema.Error<InvalidTransferSignature>("InvalidTransferSignature")(
  refusal(
    "INVALID_SIGNATURE",
    "signature is not the owner's signature of this transfer (see docs/decisions.md: hmac-sha256 of the JCS terms, keyed by the request's bearer credential)"
  ),
  { httpApiStatus: 400, description: "The signature is not the owner's signature of this transfer" }
) {
  readonly _tag = "InvalidTransferSignature"
  static of(agent_slug: string) {
    return new InvalidTransferSignature({ details: { agent_slug } })
  }
}

export class TargetOrgNotFound extends Schema.Error<TargetOrgNotFound>("TargetOrgNotFound")(refusal("TARGET_ORG_NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No organization with that id"
}) {
  readonly _tag = "TargetOrgNotFound"
  static of(target_org_id: string) {
    return new TargetOrgNotFound({ message: `Organization ${target_org_id} not found`, details: { target_org_id } })
  }
}

const SlugParam = { agent_slug: Schema.String }
const AgentPage = Schema.Struct({ agents: Schema.Array(AgentListItem), data: Schema.Array(AgentListItem), pagination: Pagination })
export type AgentPage = typeof AgentPage.Type
/** A bare array, newest first (the published SDKs read one); `request_id` is only in X-Request-Id. */
const VersionList = Schema.Array(AgentVersion)
export type VersionList = typeof VersionList.Type
const ActionPage = Schema.Struct({ actions: Schema.Array(ActionListItem), data: Schema.Array(ActionListItem), pagination: Pagination })

export class AgentsGroup extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("register", "/api/v1/agents", { error: [Forbidden, InvalidSlug, SlugTaken, InvalidInput],
      payload: RegisterAgentRequest,
      success: RegisteredAgent.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("list", "/api/v1/agents", { error: Forbidden, query: { ...PageQuery, status: Schema.optionalKey(AgentStatus) }, success: AgentPage }),
    HttpApiEndpoint.get("get", "/api/v1/agents/:agent_slug", { error: [Forbidden, AgentNotFound], params: SlugParam, success: AgentView }),
    HttpApiEndpoint.put("update", "/api/v1/agents/:agent_slug", { error: [Forbidden, AgentNotFound, InvalidInput],
      params: SlugParam,
      payload: UpdateAgentRequest,
      success: AgentView
    }),
    HttpApiEndpoint.post("publishVersion", "/api/v1/agents/:agent_slug/versions", { error: [Forbidden, AgentNotFound, AgentVersionExists, DecommissionedAgent],
      params: SlugParam,
      payload: PublishVersionRequest,
      success: AgentVersion.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("versions", "/api/v1/agents/:agent_slug/versions", { error: [Forbidden, AgentNotFound], params: SlugParam, success: VersionList }),
    HttpApiEndpoint.post("decommission", "/api/v1/agents/:agent_slug/decommission", { error: [Forbidden, AgentNotFound, DecommissionedAgent],
      params: SlugParam,
      payload: DecommissionRequest,
      success: Decommissioned
    }),
    HttpApiEndpoint.post("transfer", "/api/v1/agents/:agent_slug/transfer", {
      error: [Forbidden, AgentNotFound, DecommissionedAgent, InvalidTransferSignature, TargetOrgNotFound, InvalidInput],
      params: SlugParam,
      payload: TransferRequest,
      success: Transferred
    }),
    HttpApiEndpoint.get("actions", "/api/v1/agents/:agent_slug/actions", { error: [Forbidden, AgentNotFound],
      params: SlugParam,
      query: { ...PageQuery, action_type: Schema.optionalKey(Schema.String), status: Schema.optionalKey(Schema.Literals(ActionStatuses)) },
      success: ActionPage
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Agents",
      description:
        "The organization's registered agents. Slugs are permanent and unique across organizations; a decommissioned agent cannot notarize or publish versions."
    })
  )
{}

export class AgentsPublicGroup extends HttpApiGroup.make("agentsPublic")
  .add(
    HttpApiEndpoint.get("publicAgent", "/api/v1/agents/public/:agent_slug", { error: AgentNotFound, params: SlugParam, success: PublicAgent }).middleware(
      PublicRoute
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Agents (public)", description: "What anyone may read about a registered agent." }))
{}

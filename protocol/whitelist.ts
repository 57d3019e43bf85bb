/** Endpoint whitelist and endpoint approval requests (spec 000 "Endpoint whitelist"). */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal } from "./errors.js"

export const WhitelistEntry = Schema.Struct({
  id: Schema.String,
  url_pattern: Schema.String,
  name: Schema.String,
  status: Schema.String,
  tls_fingerprint: Schema.NullOr(Schema.String),
  // The user (or, failing that, the key) that added the entry.
  created_by: Schema.NullOr(Schema.String),
  created_at: Timestamp
})

export const EndpointApproval = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  url_pattern_suggested: Schema.String,
  status: Schema.String,
  requested_at: Timestamp,
  resolved_at: NullableTimestamp,
  action_type: Schema.NullOr(Schema.String).annotate({ description: "the action type of the blocked request (null for requests filed before it was recorded)" }),
  grant_expires_at: NullableTimestamp.annotate({
    description: "once approved: until when the same agent, action type and URL may authorize once (null before approval or without an action type)"
  }),
  grant_used_at: NullableTimestamp.annotate({ description: "when the authorize the approval let through happened" })
})

export class EntryNotFound extends Schema.Error<EntryNotFound>("EntryNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such whitelist entry in the caller's organization"
}) {
  readonly _tag = "EntryNotFound"
  static of(id: string) {
    return new EntryNotFound({ message: `Whitelist entry ${id} not found`, details: { id } })
  }
}

export class ApprovalNotFound extends Schema.Error<ApprovalNotFound>("ApprovalNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such endpoint approval request in the caller's organization"
}) {
  readonly _tag = "ApprovalNotFound"
  static of(id: string) {
    return new ApprovalNotFound({ message: `Endpoint approval ${id} not found`, details: { id } })
  }
}

export class AlreadyResolved extends Schema.Error<AlreadyResolved>("AlreadyResolved")(refusal("ALREADY_RESOLVED"), {
  httpApiStatus: 409,
  description: "The approval request was already approved or rejected"
}) {
  readonly _tag = "AlreadyResolved"
  static of(id: string, status: string) {
    return new AlreadyResolved({ message: `The approval request is already ${status}`, details: { id } })
  }
}

export const WhitelistModes = ["strict", "permissive"] as const
const WhitelistMode = Schema.Literals(WhitelistModes)
const Settings = Schema.Struct({ mode: WhitelistMode })
const IdParam = { id: Schema.String }
const Resolved = Schema.Struct({ id: Schema.String, status: Schema.String })

export class WhitelistGroup extends HttpApiGroup.make("whitelist")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/endpoint-whitelist", { error: Forbidden,
      success: Schema.Struct({ entries: Schema.Array(WhitelistEntry), data: Schema.Array(WhitelistEntry) })
    }),
    HttpApiEndpoint.post("add", "/api/v1/endpoint-whitelist", { error: [Forbidden, InvalidInput],
      payload: Schema.Struct({
        url_pattern: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)),
        name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
        tls_fingerprint: Schema.optionalKey(
          Schema.NullOr(Schema.String.check(Schema.isPattern(/^sha256:[0-9a-fA-F]{64}$/)).annotate({ description: "sha256:<64 hex>" }))
        )
      }),
      success: WhitelistEntry.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("settings", "/api/v1/endpoint-whitelist/settings", { error: Forbidden, success: Settings }),
    HttpApiEndpoint.put("setSettings", "/api/v1/endpoint-whitelist/settings", { error: Forbidden, payload: Settings, success: Settings }),
    HttpApiEndpoint.post("approve", "/api/v1/endpoint-whitelist/:id/approve", { error: [Forbidden, EntryNotFound], params: IdParam, success: Resolved }),
    HttpApiEndpoint.post("reject", "/api/v1/endpoint-whitelist/:id/reject", { error: [Forbidden, EntryNotFound], params: IdParam, success: Resolved }),
    HttpApiEndpoint.delete("remove", "/api/v1/endpoint-whitelist/:id", { error: [Forbidden, EntryNotFound],
      params: IdParam,
      success: Schema.Struct({ id: Schema.String, deleted: Schema.Boolean })
    }),
    HttpApiEndpoint.get("approvals", "/api/v1/endpoint-approvals", { error: Forbidden,
      success: Schema.Struct({ approvals: Schema.Array(EndpointApproval), data: Schema.Array(EndpointApproval) })
    }),
    HttpApiEndpoint.post("approveRequest", "/api/v1/endpoint-approvals/:id/approve", { error: [Forbidden, ApprovalNotFound, AlreadyResolved, InvalidInput],
      params: IdParam,
      // The body is optional: a separate `Null` member makes HttpApi decode an empty body as null
      // (a union containing Null does not). No body, `null` or `{}` all mean "do not add the pattern".
      payload: [Schema.Struct({ add_pattern: Schema.optionalKey(Schema.Boolean) }), Schema.Null],
      success: Schema.Struct({ id: Schema.String, status: Schema.String, entry: Schema.NullOr(WhitelistEntry) })
    }),
    HttpApiEndpoint.post("rejectRequest", "/api/v1/endpoint-approvals/:id/reject", { error: [Forbidden, ApprovalNotFound, AlreadyResolved], params: IdParam, success: Resolved })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Endpoint whitelist",
      description:
        "Patterns match scheme, host and path; a trailing `*` matches any rest of the path. Mode `strict` blocks and files an approval request; `permissive` (default) warns."
    })
  )
{}

/**
 * Feature flags (spec 002 "Feature flags"): the caller's organization's resolved
 * flags and its own toggle (API key), and platform administration behind `X-Admin-Key`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { AdminKey, Authenticated } from "./auth.js"
import { Timestamp } from "./common.js"
import { Forbidden, refusal } from "./errors.js"

export const FLAG_KEY_PATTERN = /^[a-z][a-z0-9_]{1,98}[a-z0-9]$/

export const FlagKey = Schema.String.check(Schema.isPattern(FLAG_KEY_PATTERN)).annotate({
  description: "3-100 characters: a lowercase letter, then lowercase letters, digits or `_`, ending in a letter or digit"
})

const OrgId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))
const OrgIds = Schema.Array(OrgId).check(Schema.isMaxLength(10_000))
const Rollout = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 }))
const Description = Schema.NullOr(Schema.String.check(Schema.isMaxLength(2_000)))

export const FeatureFlag = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  description: Schema.NullOr(Schema.String),
  enabled_global: Schema.Boolean,
  rollout_percentage: Schema.Int,
  enabled_org_ids: Schema.Array(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
})
export type FeatureFlag = typeof FeatureFlag.Type

export const CreateFlag = Schema.Struct({
  key: FlagKey,
  description: Schema.optionalKey(Description),
  enabled_global: Schema.optionalKey(Schema.Boolean),
  rollout_percentage: Schema.optionalKey(Rollout),
  enabled_org_ids: Schema.optionalKey(OrgIds)
})
export type CreateFlag = typeof CreateFlag.Type

export const UpdateFlag = Schema.Struct({
  description: Schema.optionalKey(Description),
  enabled_global: Schema.optionalKey(Schema.Boolean),
  rollout_percentage: Schema.optionalKey(Rollout),
  enabled_org_ids: Schema.optionalKey(OrgIds)
})
export type UpdateFlag = typeof UpdateFlag.Type

export class FlagNotFound extends Schema.Error<FlagNotFound>("FlagNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No feature flag with this key (`details.key`)"
}) {
  readonly _tag = "FlagNotFound"
  static of(key: string) {
    return new FlagNotFound({ message: `Feature flag ${key} not found`, details: { key } })
  }
}

export class FlagExists extends Schema.Error<FlagExists>("FlagExists")(refusal("FLAG_EXISTS"), {
  httpApiStatus: 409,
  description: "A feature flag with this key already exists (`details.key`)"
}) {
  readonly _tag = "FlagExists"
  static of(key: string) {
    return new FlagExists({ message: `Feature flag ${key} already exists`, details: { key } })
  }
}

const ADMIN = "/api/v1/admin/feature-flags"
const KeyParam = { key: FlagKey }
const OrgParams = { key: FlagKey, org_uuid: OrgId }

export class FlagsGroup extends HttpApiGroup.make("flags")
  .add(
    HttpApiEndpoint.get("resolved", "/api/v1/feature-flags", {
      error: Forbidden,
      success: Schema.Struct({ flags: Schema.Record(Schema.String, Schema.Boolean) })
    }),
    HttpApiEndpoint.put("toggle", "/api/v1/feature-flags/:key", {
      params: KeyParam,
      payload: Schema.Struct({ enabled: Schema.Boolean }),
      success: Schema.Struct({ key: Schema.String, enabled: Schema.Boolean }),
      error: [Forbidden, FlagNotFound]
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Feature flags",
      description:
        "Flags resolved for the caller's organization: its id in `enabled_org_ids`, else `enabled_global` with a stable hash of the organization id against `rollout_percentage`, else (self-hosted, flag not stored) `ENABLE_<KEY>`. The toggle (admin role) adds or removes the organization in `enabled_org_ids` and answers the resolved value."
    })
  )
{}

export class FlagsAdminGroup extends HttpApiGroup.make("flagsAdmin")
  .add(
    HttpApiEndpoint.get("list", ADMIN, { success: Schema.Array(FeatureFlag) }),
    HttpApiEndpoint.post("create", ADMIN, { payload: CreateFlag, success: FeatureFlag.pipe(HttpApiSchema.status(201)), error: FlagExists }),
    HttpApiEndpoint.put("update", `${ADMIN}/:key`, { params: KeyParam, payload: UpdateFlag, success: FeatureFlag, error: FlagNotFound }),
    HttpApiEndpoint.delete("remove", `${ADMIN}/:key`, { params: KeyParam, success: HttpApiSchema.NoContent }),
    HttpApiEndpoint.post("enableOrg", `${ADMIN}/:key/enable-org/:org_uuid`, { params: OrgParams, success: FeatureFlag, error: FlagNotFound }),
    HttpApiEndpoint.post("disableOrg", `${ADMIN}/:key/disable-org/:org_uuid`, { params: OrgParams, success: FeatureFlag, error: FlagNotFound })
  )
  .middleware(AdminKey)
  .annotateMerge(
    OpenApi.annotations({
      title: "Feature flags (administration)",
      description: "Platform routes behind `X-Admin-Key`. Every change reaches every node's flag cache through the fan-out channel."
    })
  )
{}

/**
 * `/api/v1/admin/*`: platform administration behind `X-Admin-Key` (CONTRACT.md "Running it"):
 * an organization's plan, and the rotation of the receipt-signing key.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { OrganizationNotFound, Plans } from "./accounts.js"
import { AdminKey } from "./auth.js"
import { RotationInProgress, RotationResult } from "./receipts.js"

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.put("setPlan", "/orgs/:org_uuid/plan", {
      params: { org_uuid: Schema.String },
      payload: Schema.Struct({ plan: Schema.Literals(Plans) }),
      success: Schema.Struct({ org_uuid: Schema.String, plan: Schema.String }),
      error: OrganizationNotFound
    }),
    HttpApiEndpoint.post("rotateSigningKey", "/signing-keys/rotate", { success: RotationResult, error: RotationInProgress })
  )
  .prefix("/api/v1/admin")
  .middleware(AdminKey)
  .annotateMerge(
    OpenApi.annotations({
      title: "Administration",
      description: "Platform routes behind `X-Admin-Key`. A rotated signing key stays published and verifiable once retired."
    })
  )
{}

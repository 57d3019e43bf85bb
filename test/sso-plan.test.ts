/**
 * The SSO plan rule reads the organization's current plan, in the default self-hosted mode too:
 * an organization an administrator moved to `starter` is refused configuration (403
 * PLAN_REQUIRED) until it is moved back to Business or higher.
 */
import { describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { useServer } from "./support/server.js"

const server = useServer()

const setPlan = (orgUuid: string, plan: string) =>
  call(server.url, "PUT", `/api/v1/admin/orgs/${orgUuid}/plan`, { body: { plan }, headers: { "x-admin-key": "test-admin-key" } })

// Metadata that is not XML: past the plan rule this is a 400 SSO_CONFIG_ERROR, never a 403.
const configure = (token: string) => call(server.url, "POST", "/api/v1/sso/configure", { token, body: { idp_metadata_xml: "not metadata" } })

describe("SSO plan rule", () => {
  it("follows plan changes at once", async () => {
    const org = await registerOrg(server.url, "Plan Changes Co")
    expect((await configure(org.token)).status).toBe(400)

    expect((await setPlan(org.orgUuid, "starter")).status).toBe(200)
    const refused = await configure(org.token)
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ code: "PLAN_REQUIRED", details: { plan: "starter" } })

    expect((await setPlan(org.orgUuid, "business")).status).toBe(200)
    expect((await configure(org.token)).status).toBe(400)
  })
})

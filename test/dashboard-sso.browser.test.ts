/**
 * Single sign-on's landing page in Chromium: the one-time code the identity provider's redirect
 * carries is spent for a session (the user lands signed in on the dashboard, the code gone from
 * the address bar); a spent code and the error redirects explain themselves. The code is written
 * as the SSO service writes it (a keyed digest) so the page spends a real one.
 */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { hmacSha256Hex } from "../src/platform/hmac.js"
import { Secrets } from "../src/platform/secrets.js"
import { chromiumAvailable, useChromium } from "./support/browser.js"
import { addMember, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard single sign-on test")

describe.skipIf(!available)("single sign-on landing page in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "SSO landing"))
  const { problems, newPage } = useChromium(server, { expectedStatuses: /status of 40[014]/ })

  /** A fresh exchange code for `userUuid`, stored as the service stores it. */
  const issueCode = (userUuid: string) =>
    server.run(
      Effect.gen(function* () {
        const code = randomBytes(24).toString("base64url")
        const { pepper } = yield* Secrets
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO sso_exchange_codes (code_digest, org_uuid, user_uuid, expires_at)
                   VALUES (${hmacSha256Hex(pepper, `sso-code:${code}`)}, ${org.orgUuid}, ${userUuid}, ${new Date(Date.now() + 60_000)})`
        return code
      })
    )

  it("spends the code for a session and lands on the dashboard; a spent code explains itself", async () => {
    const member = await addMember(server.url, org, "member")
    const code = await issueCode(member.userUuid)
    const page = await newPage()
    await page.goto(`${server.url}/dashboard/sso/callback?code=${code}`)
    await page.getByRole("heading", { level: 1, name: "Pending approvals" }).waitFor({ timeout: 10_000 })
    expect(new URL(page.url()).pathname).toBe("/dashboard")
    const stored = await page.evaluate(() => sessionStorage.getItem("gateway.dashboard.session"))
    expect(JSON.parse(stored!)).toMatchObject({ email: member.email, orgUuid: org.orgUuid, role: "member" })
    await page.goBack()
    expect(page.url()).not.toContain(code)

    const again = await newPage()
    await again.goto(`${server.url}/dashboard/sso/callback?code=${code}`)
    await again.getByRole("alert").filter({ hasText: "already used or has expired" }).waitFor({ timeout: 5_000 })
    expect(new URL(again.url()).search).toBe("")
    expect(problems).toEqual([])
  }, 60_000)

  it("says why an identity provider's redirect failed", async () => {
    const page = await newPage()
    await page.goto(`${server.url}/dashboard/sso/callback?error=sso_validation_failed`)
    await page.getByRole("alert").filter({ hasText: "could not be verified" }).waitFor({ timeout: 5_000 })
    await page.getByRole("link", { name: "Sign in again" }).click()
    await page.getByRole("button", { name: "Sign in" }).waitFor()
    expect(problems).toEqual([])
  }, 60_000)
})

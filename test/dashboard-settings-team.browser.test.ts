
import { join, } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ARTIFACTS, chromiumAvailable, useChromium } from "./support/browser.js"
import { addMember, call, registerOrg, uniqueEmail } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard settings and team browser test")


describe.skipIf(!available)("dashboard keys, team and channels in Chromium", () => {
  const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
  const org = useFixture(() => registerOrg(server.url, "Settings Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Settings Elsewhere"))
  const { problems, newPage, signIn, browserContext } = useChromium(server, { expectedStatuses: /status of 40[134]/ })
  // No CSP violation, script error or foreign request in any page of this file (expected 401/403 answers aside).
  afterAll(() => expect(problems).toEqual([]))

  it("creates a scoped API key shown once, which works with its scope only, then revokes it", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/keys")
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    await expect(page.getByRole("link", { name: "Keys" }).getAttribute("aria-current")).resolves.toBe("page")

    // A name is required: the error is tied to the field, which gets focus.
    await page.getByRole("button", { name: "Create key" }).click()
    const name = page.getByLabel("Name", { exact: true })
    await page.getByText("Give the key a name of 1 to 100 characters.").waitFor()
    expect(await name.getAttribute("aria-invalid")).toBe("true")
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("key-name")

    await name.fill("reader from the dashboard")
    await page.getByRole("checkbox", { name: "actions:read" }).check()
    // An expiry in the past is refused beside its field.
    await page.getByLabel("Expires on (optional)").fill("2020-01-01")
    await page.getByRole("button", { name: "Create key" }).click()
    await page.getByText(/^Choose a day from today on/).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("key-expires")
    const nextYear = `${new Date().getFullYear() + 1}-06-30`
    await page.getByLabel("Expires on (optional)").fill(nextYear)
    await page.getByRole("button", { name: "Create key" }).click()
    await page.getByText("you will not see it again", { exact: false }).waitFor()
    const key = (await page.locator("[data-new-key]").textContent())!.trim()
    expect(key).toMatch(/^svc_live_/)
    await browserContext().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url })
    await page.getByRole("button", { name: "Copy key" }).click()
    await page.getByText("Copied.").waitFor()
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(key)

    expect((await call(server.url, "GET", "/api/v1/actions", { token: key })).status).toBe(200)
    const write = await call(server.url, "POST", "/api/v1/actions", { token: key, body: { action_type: "x", details: "y" } })
    expect(write.status).toBe(403)

    // Listed with its scope; after a reload the full key is nowhere on the page.
    const row = page.locator("tr", { hasText: "reader from the dashboard" })
    await row.getByText("actions:read").waitFor()
    const listed = await call(server.url, "GET", "/api/v1/api-keys", { token: org.token })
    const stored = listed.body.data.find((entry: { name: string }) => entry.name === "reader from the dashboard")
    expect(stored.scopes).toEqual(["actions:read"])
    expect(new Date(stored.expires_at).getFullYear()).toBe(new Date().getFullYear() + 1)
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    await row.getByText("actions:read").waitFor()
    expect(await page.content()).not.toContain(key)

    // Revoke, with a confirmation (Keep cancels, focus back on Revoke).
    await row.getByRole("button", { name: "Revoke reader from the dashboard" }).click()
    await row.getByRole("button", { name: "Keep" }).click()
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe("Revoke reader from the dashboard")
    await row.getByRole("button", { name: "Revoke reader from the dashboard" }).click()
    await row.getByRole("button", { name: "Yes, revoke" }).click()
    await row.getByText(/^revoked /).waitFor()
    expect((await call(server.url, "GET", "/api/v1/actions", { token: key })).status).toBe(401)
    await page.close()
  })

  it("invites a member who registers with the code, sets default approvers, and works at phone width", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/team")
    await page.getByRole("heading", { level: 1, name: "Team" }).waitFor()
    await page.locator(`tr[data-member="${org.email}"]`).getByRole("cell", { name: "owner", exact: true }).waitFor()

    const email = uniqueEmail("invited")
    await page.getByLabel("E-mail", { exact: true }).fill(email)
    await page.getByLabel("Role", { exact: true }).selectOption("admin")
    await page.getByRole("button", { name: "Invite" }).click()
    const code = (await page.locator("[data-invite-code]").textContent())!.trim()
    expect(code.length).toBeGreaterThan(8)
    const joined = await call(server.url, "POST", "/api/v1/auth/register", { body: { email, password: "a long enough password", invite_code: code } })
    expect(joined.status).toBe(201)
    expect(joined.body.org_uuid).toBe(org.orgUuid)
    expect(joined.body.role).toBe("admin")

    await page.reload()
    const invited = page.locator(`tr[data-member="${email}"]`)
    await invited.waitFor()
    // Owner changes the new admin to member.
    await invited.getByLabel(`Role of ${email}`).selectOption("member")
    await expect.poll(async () => (await call(server.url, "GET", "/api/v1/team/members", { token: org.token })).body.data.find((m: { email: string }) => m.email === email)?.role).toBe("member")

    // Default approvers: add two, remove one, save; the API agrees.
    await page.getByLabel("Approver e-mail").fill("not an address")
    await page.getByRole("button", { name: "Add approver" }).click()
    await page.getByText("Enter an e-mail address.").waitFor()
    for (const address of [org.email, email, "cfo@example.test"]) {
      await page.getByLabel("Approver e-mail").fill(address)
      await page.getByLabel("Approver e-mail").press("Enter")
    }
    await page.getByRole("button", { name: `Remove ${email}` }).click()
    await page.getByRole("button", { name: "Save approvers" }).click()
    await page.getByText("Default approvers saved.").first().waitFor()
    const approvers = await call(server.url, "GET", "/api/v1/team/default-approvers", { token: org.token })
    expect([...approvers.body.emails].sort()).toEqual([org.email, "cfo@example.test"].sort())

    await page.screenshot({ path: join(ARTIFACTS, "dashboard-team.png"), fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    // Loaded content first (a table, the channels form), then nothing wider than the screen.
    for (const [path, loaded] of [
      ["/dashboard/keys", "tbody tr"],
      ["/dashboard/channels", "form"],
      ["/dashboard/team", `tr[data-member="${email}"]`]
    ] as const) {
      await page.goto(server.url + path)
      await page.locator(loaded).first().waitFor()
      expect(await page.evaluate("document.documentElement.scrollWidth"), path).toBeLessThanOrEqual(390)
    }
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-team-phone.png"), fullPage: true })
    await page.close()
  })

  it("shows a member the 403 inline when inviting", async () => {
    const member = await addMember(server.url, org, "member")
    const page = await newPage()
    await signIn(page, member, "/dashboard/team")
    await page.locator(`tr[data-member="${member.email}"]`).waitFor()
    // A member gets no role controls.
    expect(await page.getByRole("combobox", { name: /^Role of / }).count()).toBe(0)
    await page.getByLabel("E-mail", { exact: true }).fill(uniqueEmail("nope"))
    await page.getByRole("button", { name: "Invite" }).click()
    await page.getByRole("alert").filter({ hasText: "Only an owner or admin can invite" }).waitFor()
    expect(await page.locator("[data-invite-code]").count()).toBe(0)
    await page.close()
  })

  it("stores a chat webhook without showing it back", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/channels")
    await page.getByRole("heading", { level: 1, name: "Notification channels" }).waitFor()
    const slack = page.getByRole("group", { name: "Slack" })
    await slack.getByText("Webhook: not configured").waitFor()
    // Enabled without a URL: refused in the form, focus on the field.
    await slack.getByRole("checkbox", { name: "Post approval requests to Slack" }).check()
    await page.getByRole("button", { name: "Save channels" }).click()
    await slack.getByText("Enabled needs a webhook URL.").waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("channel-slack")

    const hook = "http://127.0.0.1:9/services/T000/B000/secret-token-xyz"
    await slack.getByLabel("Webhook URL").fill(hook)
    await page.getByLabel("Recipients (one per line)").fill("ops@example.test")
    await page.getByRole("button", { name: "Save channels" }).click()
    await page.getByText("Notification channels saved.").first().waitFor()
    await slack.getByText("Webhook: configured").waitFor()
    const stored = await call(server.url, "GET", "/api/v1/approvers/notification-channels", { token: org.token })
    expect(stored.body.slack.enabled).toBe(true)
    expect(stored.body.slack.webhook_url).not.toBeNull()
    expect(stored.body.email.recipients).toEqual(["ops@example.test"])
    await page.reload()
    await page.getByRole("group", { name: "Slack" }).getByText("Webhook: configured").waitFor()
    const html = await page.content()
    expect(html).not.toContain("secret-token-xyz")
    expect(html).not.toContain(stored.body.slack.webhook_url)
    await page.close()
  })

  it("shows another organization none of these keys or members", async () => {
    const page = await newPage()
    await signIn(page, other, "/dashboard/keys")
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    await page.locator("tbody tr").first().waitFor()
    expect(await page.content()).not.toContain("reader from the dashboard")
    await page.getByRole("link", { name: "Team" }).click()
    await page.locator(`tr[data-member="${other.email}"]`).waitFor()
    expect(await page.locator("tbody tr").count()).toBe(1)
    expect(await page.content()).not.toContain(org.email)
    await page.close()
  })
})


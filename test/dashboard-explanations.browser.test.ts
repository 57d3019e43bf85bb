/**
 * The signed explanation on an action's page in a real browser: a policy sent the action to a human
 * who approved it on the dashboard; the page shows the recorded policy decision and the approval,
 * checks the envelope with the published keys in the page, and downloads the signed JSON (which the
 * public verify accepts) and the PDF (which pdftotext reads). Skips (with a printed line) where
 * /usr/bin/chromium is not installed.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { ARTIFACTS, chromiumAvailable, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard explanations browser test")

describe.skipIf(!available)("dashboard explanations in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Explained"))
  const browser = useChromium(server, { acceptDownloads: true, viewport: { width: 1280, height: 900 } })
  const { problems, newPage } = browser
  const signIn = (page: Page, who: Org, path: string) => browser.signIn(page, who, path, false)

  it("shows the policy chain and the approval, verifies the envelope in the page, and downloads the JSON and the PDF", async () => {
    const actionType = `refund.${Date.now().toString(36)}`
    const policy = await call(server.url, "POST", "/api/v1/policies", {
      token: org.key,
      body: { activate: true, name: "refunds need a human", mode: "rules", decision: "require_approval", conditions: [{ field: "action_type", op: "eq", value: actionType }] }
    })
    expect(policy.status).toBe(201)
    const authorized = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: actionType, details: "refund 40 EUR", agent_id: "refund-bot" } })
    expect(authorized.body.status).toBe("pending_approval")
    const actionUuid = authorized.body.action_uuid as string
    expect((await call(server.url, "POST", `/api/v1/actions/${actionUuid}/dashboard-approve`, { token: org.token })).status).toBe(200)
    expect((await call(server.url, "POST", `/api/v1/actions/${actionUuid}/notarize`, { token: org.key, body: { outcome: "completed" } })).status).toBe(200)

    const page = await newPage()
    await signIn(page, org, `/dashboard/actions/${actionUuid}`)
    await page.getByRole("heading", { level: 2, name: "Explanation" }).waitFor()
    await page.getByRole("status", { name: "Explanation verdict" }).filter({ hasText: "Valid" }).waitFor({ timeout: 5_000 })
    const decisions = page.getByRole("table", { name: "Policy decisions" })
    await expect(decisions.textContent()).resolves.toContain("refunds need a human")
    await expect(decisions.textContent()).resolves.toContain("require_approval")
    await expect(page.getByRole("list", { name: "Human oversight" }).textContent()).resolves.toContain(`approval by ${org.email} via dashboard`)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-explanation-laptop.png"), fullPage: true })

    // The JSON as downloaded verifies at the public route; the page showed its content hash.
    const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download signed explanation (JSON)" }).click()])
    expect(json.suggestedFilename()).toBe(`explanation-${actionUuid}.json`)
    const explanation = JSON.parse(readFileSync((await json.path())!, "utf8"))
    await page.getByText(explanation._envelope.content_hash).waitFor()
    const verified = await call(server.url, "POST", "/api/v1/verify/explanation", { body: { explanation } })
    expect(verified.body).toMatchObject({ valid: true, signing_key_id: explanation._envelope.signing_key_id })

    const [pdf] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download explanation (PDF)" }).click()])
    expect(pdf.suggestedFilename()).toBe(`explanation-${actionUuid}.pdf`)
    const bytes = readFileSync((await pdf.path())!)
    expect(bytes.subarray(0, 5).toString()).toBe("%PDF-")
    if (pdftotextPath !== undefined) expect(pdfText(bytes).replace(/\s/g, "")).toContain(explanation._envelope.content_hash)
    await page.close()
    expect(problems).toEqual([])
  }, 30_000)
})

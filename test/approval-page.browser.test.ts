/**
 * The approval page in a real browser: the form is reachable through its
 * accessible names, the deny reason is typed into the labelled textarea, and
 * the submission lands on the result page. Skips (with a printed line) where
 * /usr/bin/chromium is not installed. With APPROVAL_SCREENSHOT=<file.png> set,
 * the review page is also saved as a screenshot there.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CHROMIUM, chromiumAvailable } from "./support/browser.js"
import { call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { enableApprovalMail, useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the approval page browser test")

describe.skipIf(!available)("approval page in Chromium", () => {
  const inbox = useInbox()
  const server = useServer(() => ({ SMTP_URL: inbox.url }))
  const org = useFixture(() => registerOrg(server.url, "Browser"))
  let browser: BrowserContext
  // A fresh profile per run: no state leaks between runs, nothing written to $HOME.
  const profile = mkdtempSync(join(tmpdir(), "approval-chromium-"))

  beforeAll(async () => {
    await enableApprovalMail(server.url, org)
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  const pendingCode = async (actionType: string) => {
    const reply = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: actionType, details: "details", require_approval: true }
    })
    expect(reply.status).toBe(201)
    const { code } = await inbox.grant(reply.body.action_uuid, org.email)
    return { actionUuid: reply.body.action_uuid as string, code }
  }

  it("denies with a typed reason through the labelled controls", async () => {
    const { actionUuid, code } = await pendingCode("files.delete")
    const page = await browser.newPage()
    await page.goto(`${server.url}/approve/${code}`)
    expect(await page.getAttribute("html", "lang")).toBe("en")
    await page.getByLabel("Reason for denying (optional)").fill("not expected")
    await page.getByRole("button", { name: "Deny" }).click()
    await expect(page.getByRole("heading", { name: "Action denied" }).isVisible()).resolves.toBe(true)
    const action = await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })
    expect(action.body.status).toBe("denied_by_human")
    await page.close()
  })

  it("approves with the Approve button", async () => {
    const { actionUuid, code } = await pendingCode("email.send")
    const page = await browser.newPage()
    await page.goto(`${server.url}/approve/${code}`)
    await expect(page.getByRole("heading", { level: 1, name: "Approval requested: email.send" }).isVisible()).resolves.toBe(true)
    const screenshot = await page.screenshot({ fullPage: true, ...(process.env.APPROVAL_SCREENSHOT ? { path: process.env.APPROVAL_SCREENSHOT } : {}) })
    expect(screenshot.byteLength).toBeGreaterThan(1_000)
    await page.getByRole("button", { name: "Approve" }).click()
    await expect(page.getByRole("heading", { name: "Action approved" }).isVisible()).resolves.toBe(true)
    expect((await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })).body.status).toBe("approved")
    await page.close()
  })
})

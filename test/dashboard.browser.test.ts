
import { join, } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { ARTIFACTS, chromiumAvailable, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard browser test")

/** A new live event must show within this (CONTRACT: pushed as they appear). */
const LIVE_MS = 1_000

describe.skipIf(!available)("dashboard in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Elsewhere"))
  const browser = useChromium(server, {})
  const { problems, newPage } = browser
  const signIn = (page: Page, who: Org, path = "/dashboard") => browser.signIn(page, who, path, false)

  const live = (page: Page) => page.getByRole("status", { name: "Connection" }).filter({ hasText: /^Live$/ }).waitFor({ timeout: 5_000 })

  const authorize = async (actionType: string, details = "pay 10 EUR to ACME") => {
    const reply = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: actionType, details, agent_id: "billing-bot", require_approval: true, store_details: true }
    })
    expect(reply.status).toBe(201)
    expect(reply.body.status).toBe("pending_approval")
    return reply.body.action_uuid as string
  }

  it("shows a new approval live on every page of the organization, and approving it removes it everywhere", async () => {
    const first = await newPage()
    const second = await newPage()
    const outsider = await newPage()
    await signIn(first, org)
    await signIn(second, org)
    await signIn(outsider, other)
    for (const page of [first, second, outsider]) {
      await page.getByRole("heading", { level: 1, name: "Pending approvals" }).waitFor()
      await live(page)
    }
    expect(await first.evaluate(() => localStorage.length)).toBe(0)

    const actionType = `payments.send.${Date.now().toString(36)}`
    const actionUuid = await authorize(actionType)
    const heading = (page: Page) => page.getByRole("heading", { level: 2, name: actionType })
    await heading(first).waitFor({ timeout: LIVE_MS })
    await heading(second).waitFor({ timeout: LIVE_MS })
    const card = first.getByRole("article", { name: actionType })
    await expect(card.getByText("billing-bot").isVisible()).resolves.toBe(true)
    await expect(card.getByText(/^sha256:[0-9a-f]{64}$/).first().isVisible()).resolves.toBe(true)
    await expect(card.getByText(/^\d+ d \d+ h$/).isVisible()).resolves.toBe(true)
    // The details the agent stored, read by its approvers only.
    await card.getByText("pay 10 EUR to ACME").waitFor({ timeout: 2_000 })

    await first.screenshot({ path: join(ARTIFACTS, "dashboard-inbox-laptop.png"), fullPage: true })
    await second.setViewportSize({ width: 390, height: 844 })
    await second.screenshot({ path: join(ARTIFACTS, "dashboard-inbox-phone.png"), fullPage: true })
    // Phone width: nothing wider than the screen.
    expect(await second.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)

    await card.getByRole("button", { name: "Approve" }).click()
    await heading(first).waitFor({ state: "detached", timeout: 2_000 })
    await heading(second).waitFor({ state: "detached", timeout: LIVE_MS })

    const action = await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })
    expect(action.body.status).toBe("approved")
    expect(action.body.approved_by).toBe(org.email)
    const notarized = await call(server.url, "POST", `/api/v1/actions/${actionUuid}/notarize`, { token: org.key, body: { outcome: "completed" } })
    expect(notarized.status).toBe(200)

    // The other organization saw none of it.
    expect(await heading(outsider).count()).toBe(0)
    await expect(outsider.getByText("Nothing is waiting for a decision.").isVisible()).resolves.toBe(true)
    expect(await outsider.getByRole("article").count()).toBe(0)
    for (const page of [first, second, outsider]) await page.close()
    expect(problems).toEqual([])
  })

  it("opens an action's review link after sign-in and denies it with a reason", async () => {
    const actionType = `files.delete.${Date.now().toString(36)}`
    const actionUuid = await authorize(actionType, "rm -rf /srv/archive")
    const page = await newPage()
    await signIn(page, org, `/dashboard/actions/${actionUuid}`)
    await page.waitForURL(`${server.url}/dashboard/actions/${actionUuid}`)
    await page.getByRole("heading", { level: 1, name: actionType }).waitFor()
    // The page opens with focus on its heading.
    await expect.poll(() => page.evaluate("document.activeElement?.tagName")).toBe("H1")
    await page.getByLabel("Reason for denying (optional)").fill("not during business hours")
    await page.getByRole("button", { name: "Deny" }).click()
    await page.getByText("denied by human").waitFor()
    await page.getByText("Reason: not during business hours").waitFor()
    const action = await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })
    expect(action.body.status).toBe("denied_by_human")
    expect(action.body.denial_reason).toBe("not during business hours")
    await page.close()
    expect(problems).toEqual([])
  })

  it("sends the user back to sign-in on a 401 and then to the page they were on; signs out", async () => {
    const actionUuid = await authorize(`mail.send.${Date.now().toString(36)}`)
    const page = await newPage()
    await signIn(page, org, `/dashboard/actions/${actionUuid}`)
    await page.waitForURL(`${server.url}/dashboard/actions/${actionUuid}`)
    await live(page)
    // A token the gateway no longer accepts.
    await page.evaluate(() => {
      const key = "gateway.dashboard.session"
      sessionStorage.setItem(key, JSON.stringify({ ...JSON.parse(sessionStorage.getItem(key)!), token: "expired.jwt.token" }))
    })
    await page.reload()
    await page.waitForURL(`${server.url}/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/actions/${actionUuid}`)}`)
    await page.getByText("Your session has ended. Sign in again to continue.").waitFor()
    await page.getByLabel("E-mail").fill(org.email)
    await page.getByLabel("Password").fill(org.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(`${server.url}/dashboard/actions/${actionUuid}`)

    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor()
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0)
    await page.goto(`${server.url}/dashboard`)
    await page.waitForURL(/\/dashboard\/sign-in\?next=%2Fdashboard$/)
    await page.close()
    expect(problems).toEqual([])
  })
})

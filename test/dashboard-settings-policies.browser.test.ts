
import { join, } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { parseConditionValue } from "../dashboard/src/condition-value.js"
import { ARTIFACTS, chromiumAvailable, useChromium } from "./support/browser.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard policies and webhooks browser test")


describe("condition values (dashboard)", () => {
  it("reads numbers, booleans, arrays and quoted strings as JSON, anything else as text", () => {
    expect(parseConditionValue("wire")).toBe("wire")
    expect(parseConditionValue("5")).toBe(5)
    expect(parseConditionValue("-1.5")).toBe(-1.5)
    expect(parseConditionValue("true")).toBe(true)
    expect(parseConditionValue('["a", 2]')).toEqual(["a", 2])
    expect(parseConditionValue('"5"')).toBe("5")
    expect(parseConditionValue("[not json")).toBe("[not json")
    expect(parseConditionValue("5 apples")).toBe("5 apples")
  })
})

describe.skipIf(!available)("dashboard policies and webhooks in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Policies Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Policies Elsewhere"))
  const { problems, newPage, signIn } = useChromium(server, { expectedStatuses: /status of 40[01349]/ })
  const state: { policyId?: string; webhookId?: string } = {}

  const go = (page: Page, path: string) => page.evaluate(`history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent("popstate"))`)

  const dryRun = async (page: Page, actionType: string) => {
    await page.getByLabel("Action type").fill(actionType)
    await page.getByLabel("Details", { exact: true }).fill("x")
    await page.getByRole("button", { name: "Run dry run" }).click()
    return page.locator(".dry-run-result [data-decision]").getAttribute("data-decision")
  }

  it("creates a rules policy in the page, activates it, dry-runs it and enforces it; delete waits for deactivation", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/policies")
    await page.getByRole("heading", { level: 1, name: "Policies" }).waitFor()
    await expect(page.getByRole("link", { name: "Policies" }).getAttribute("aria-current")).resolves.toBe("page")
    await page.getByText("No policies match.").waitFor()

    // No conditions: the API's 400 shown next to the form, focused.
    await page.getByLabel("Name", { exact: true }).fill("No wires")
    await page.getByRole("button", { name: "Remove condition 1" }).click()
    await page.getByRole("button", { name: "Create policy" }).click()
    const refusal = page.getByRole("alert").filter({ hasText: "CONDITIONS_REQUIRED" })
    await refusal.waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("new-policy-error")

    await page.getByRole("button", { name: "Add condition" }).click()
    await page.getByLabel("Field").fill("action_type")
    await page.getByLabel("Operator").selectOption("eq")
    await page.getByLabel("Value").fill("wire")
    await page.getByLabel("Decision").selectOption("deny")
    await page.getByLabel("Priority").fill("10")
    await page.getByRole("button", { name: "Create policy" }).click()
    await page.waitForURL(/\/dashboard\/policies\/[^/]+$/)
    state.policyId = decodeURIComponent(page.url().split("/").pop()!)
    await page.getByRole("heading", { level: 1, name: "No wires" }).waitFor()
    await page.locator('[data-policy-status="draft"]').waitFor()
    await page.getByText("action_type eq wire").waitFor()

    await page.getByRole("button", { name: "Activate" }).click()
    await page.locator('[data-policy-status="active"]').waitFor()

    expect(await dryRun(page, "wire")).toBe("deny")
    expect(await dryRun(page, "read")).toBe("allow")
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-policy.png"), fullPage: true })

    const denied = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "wire", details: "x" } })
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe("POLICY_DENIED")

    // Edit: the priority saved.
    await page.getByLabel("Priority").fill("20")
    await page.getByRole("button", { name: "Save" }).click()
    await page.locator(".facts dd").filter({ hasText: /^20$/ }).waitFor()

    // Delete while active: refused inline; deactivate, then delete goes back to the list.
    await page.getByRole("button", { name: "Delete" }).click()
    await page.getByRole("button", { name: "Yes, delete" }).click()
    await page.getByRole("alert").filter({ hasText: "deactivate it before deleting it" }).waitFor()
    expect((await call(server.url, "GET", `/api/v1/policies/${state.policyId}`, { token: org.token })).status).toBe(200)
    await page.getByRole("button", { name: "Deactivate" }).click()
    await page.locator('[data-policy-status="inactive"]').waitFor()
    await page.getByRole("button", { name: "Delete" }).click()
    await page.getByRole("button", { name: "Yes, delete" }).click()
    await page.waitForURL(/\/dashboard\/policies$/)
    await page.getByText("No policies match.").waitFor()
    expect((await call(server.url, "GET", `/api/v1/policies/${state.policyId}`, { token: org.token })).status).toBe(404)

    // A policy that stays, for the other organization's check; the filters narrow the list.
    const kept = await call(server.url, "POST", "/api/v1/policies", {
      token: org.token,
      body: { name: "Kept", mode: "rules", decision: "require_approval", conditions: [{ field: "action_type", op: "eq", value: "pay" }] }
    })
    expect(kept.status).toBe(201)
    state.policyId = kept.body.id
    await page.reload()
    await page.locator(`tr[data-policy-id="${kept.body.id}"]`).waitFor()
    await page.getByLabel("Status").selectOption("active")
    await page.getByText("No policies match.").waitFor()
    await page.getByLabel("Status").selectOption("draft")
    await page.locator(`tr[data-policy-id="${kept.body.id}"]`).waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 20_000)

  it("shows a member's refused change inline", async () => {
    const member = await addMember(server.url, org, "member")
    const page = await newPage()
    await signIn(page, member, `/dashboard/policies/${state.policyId}`)
    await page.getByRole("heading", { level: 1, name: "Kept" }).waitFor()
    await page.getByRole("button", { name: "Activate" }).click()
    await page.getByRole("alert").filter({ hasText: "Only owners and admins can change policies." }).waitFor()
    await page.close()
    expect(problems).toEqual([])
  })

  it("creates a webhook with its secret shown once, and shows its deliveries", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/webhooks")
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor()
    await page.getByText("No webhooks yet.").waitFor()

    await page.getByLabel("HTTPS URL").fill("http://hooks.example.com/x")
    await page.getByRole("button", { name: "Create webhook" }).click()
    await page.getByRole("alert").filter({ hasText: "Enter an HTTPS URL" }).waitFor()

    await page.getByLabel("HTTPS URL").fill("https://hooks.example.com/x")
    await page.getByLabel("All events").uncheck()
    await page.getByLabel("action.denied_by_policy").check()
    await page.getByRole("button", { name: "Create webhook" }).click()
    await page.getByText("you will not see it again").waitFor()
    const secret = await page.getByRole("textbox", { name: "Secret" }).inputValue()
    expect(secret).toMatch(/^whsec_/)
    await page.getByRole("button", { name: "Copy secret" }).click()
    await page.getByRole("status").filter({ hasText: /Copied\.|copy it with your keyboard/ }).waitFor()
    const row = page.locator("li[data-webhook-id]")
    await row.filter({ hasText: "action.denied_by_policy" }).waitFor()
    state.webhookId = (await row.getAttribute("data-webhook-id"))!

    await page.reload()
    await row.waitFor()
    expect(await page.getByRole("textbox", { name: "Secret" }).count()).toBe(0)
    expect(await page.content()).not.toContain(secret)

    await row.getByRole("link", { name: "https://hooks.example.com/x" }).click()
    await page.getByRole("heading", { level: 1, name: "Deliveries" }).waitFor()
    await page.getByText("No deliveries yet.").waitFor()
    await page.close()
    expect(problems).toEqual([])
  })

  it("refuses a member's webhook delete inline; the owner deletes it", async () => {
    const member = await addMember(server.url, org, "member")
    const page = await newPage()
    await signIn(page, member, "/dashboard/webhooks")
    const row = page.locator(`li[data-webhook-id="${state.webhookId}"]`)
    await row.getByRole("button", { name: "Delete" }).click()
    await row.getByRole("button", { name: "Yes, delete" }).click()
    await page.getByRole("alert").filter({ hasText: "Only owners and admins can change webhooks." }).waitFor()
    expect((await call(server.url, "GET", "/api/v1/webhooks", { token: org.token })).body).toHaveLength(1)
    await page.close()

    // A second webhook, deleted by the owner (the first stays for the other organization's check).
    const extra = await call(server.url, "POST", "/api/v1/webhooks", { token: org.token, body: { url: "https://hooks.example.com/y" } })
    expect(extra.status).toBe(201)
    const owner = await newPage()
    await signIn(owner, org, "/dashboard/webhooks")
    const extraRow = owner.locator(`li[data-webhook-id="${extra.body.id}"]`)
    await extraRow.getByRole("button", { name: "Delete" }).click()
    await extraRow.getByRole("button", { name: "Yes, delete" }).click()
    await extraRow.waitFor({ state: "detached" })
    await owner.locator(`li[data-webhook-id="${state.webhookId}"]`).waitFor()
    expect((await call(server.url, "GET", "/api/v1/webhooks", { token: org.token })).body).toHaveLength(1)
    await owner.close()
    expect(problems).toEqual([])
  })

  it("shows another organization none of it", async () => {
    const page = await newPage()
    await signIn(page, other, "/dashboard/policies")
    await page.getByText("No policies match.").waitFor()
    await go(page, `/dashboard/policies/${state.policyId}`)
    await page.getByRole("heading", { level: 1, name: "Policy not found" }).waitFor()
    await go(page, "/dashboard/webhooks")
    await page.getByText("No webhooks yet.").waitFor()
    await go(page, `/dashboard/webhooks/${state.webhookId}`)
    await page.getByRole("heading", { level: 1, name: "Webhook not found" }).waitFor()
    // Phone width: the policies page still fits.
    await page.setViewportSize({ width: 390, height: 844 })
    await go(page, "/dashboard/policies")
    await page.getByRole("heading", { level: 1, name: "Policies" }).waitFor()
    expect(await page.evaluate("document.documentElement.scrollWidth <= innerWidth")).toBe(true)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-policies-phone.png"), fullPage: true })
    await page.close()
    expect(problems).toEqual([])
  })
})

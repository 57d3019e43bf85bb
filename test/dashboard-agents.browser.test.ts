/**
 * The agents area in a real browser: an agent registered through the API is found in the list, its
 * credential revoked (keyboard only) and the agent decommissioned after a confirmation; its DID
 * document, agent card and mutual-signing request are shown; an agent is transferred to another
 * organization; another organization's agent id shows the not-found state; a list of 101 agents
 * pages 50 at a time and filters by status. axe finds nothing on each page.
 */
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { ARTIFACTS, accessibilityProblems, chromiumAvailable, tabTo, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard agents browser test")

describe.skipIf(!available)("dashboard agents in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Agents Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Agents Elsewhere"))
  const many = useFixture(() => registerOrg(server.url, "Agents Many"))
  const browser = useChromium(server, { expectedStatuses: /status of 40[14]/ })
  const { problems, newPage } = browser
  const signIn = (page: Page, who: Org, path: string) => browser.signIn(page, who, path, false)
  const suffix = Date.now().toString(36)

  const register = async (who: Org, slug: string, name: string) => {
    const reply = await call(server.url, "POST", "/api/v1/agents", {
      token: who.key,
      body: { agent_slug: slug, name, description: "Pays approved invoices", capabilities: ["payments.send"], metadata: { team: "finance" } }
    })
    expect(reply.status).toBe(201)
  }


  it("walks list → agent → DID → credentials (revoke, keyboard only) → mutual signing → decommission", async () => {
    const slug = `payer-${suffix}`
    await register(org, slug, "Invoice payer")
    // A second version: a second credential, the first superseded (revoked) in its status list.
    const version = await call(server.url, "POST", `/api/v1/agents/${slug}/versions`, {
      token: org.key,
      body: { version: "1.1.0", instruction_hash: "sha256:abc", changelog: "Pays in EUR too" }
    })
    expect(version.status).toBe(201)
    // An action of the agent with a mutual-signing request.
    const action = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "invoice.pay", details: "pay 12 EUR", agent_id: slug } })
    expect(action.status).toBe(201)
    const requested = await call(server.url, "POST", `/api/v1/actions/${action.body.action_uuid}/mutual-sign/request`, {
      token: org.key,
      body: { counterparty_did: "did:web:bank.example" }
    })
    expect(requested.status).toBe(200)

    const page = await newPage()
    await signIn(page, org, "/dashboard/agents")
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor()
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Agents" }).getAttribute("aria-current")).toBe("page")
    const row = page.locator(`tr[data-agent="${slug}"]`)
    await row.waitFor()
    await expect(row.textContent()).resolves.toContain("1.1.0")
    expect(await accessibilityProblems(page)).toEqual([])

    await row.getByRole("link", { name: "Invoice payer" }).click()
    await page.waitForURL(`${server.url}/dashboard/agents/${slug}`)
    await page.getByRole("heading", { level: 1, name: "Invoice payer" }).waitFor()
    await page.locator('[data-agent-status="active"]').waitFor()
    await page.getByRole("cell", { name: "Pays in EUR too" }).waitFor()
    await page.getByText("No reputation yet").waitFor()
    expect(await page.getByRole("link", { name: "Actions by this agent" }).getAttribute("href")).toBe(`/dashboard/actions?agent_id=${slug}`)
    expect(await accessibilityProblems(page)).toEqual([])

    // DID document and agent card.
    await page.getByRole("navigation", { name: "Agent sections" }).getByRole("link", { name: "DID and agent card" }).click()
    await page.waitForURL(`${server.url}/dashboard/agents/${slug}/identity`)
    const did = await page.locator("[data-did]").textContent()
    expect(did).toMatch(new RegExp(`^did:web:.+:agents:${slug}$`))
    const documentText = await page.getByRole("region", { name: "DID document as JSON" }).textContent()
    expect(JSON.parse(documentText!)).toMatchObject({ id: did, verificationMethod: [{ type: "Ed25519VerificationKey2020" }] })
    await page.getByRole("region", { name: "Agent card as JSON" }).filter({ hasText: '"mutual_signing": true' }).waitFor()
    expect(await accessibilityProblems(page)).toEqual([])

    // Credentials: version 2 active, version 1 superseded, as the status list says.
    await page.getByRole("link", { name: "Credentials" }).click()
    await page.waitForURL(`${server.url}/dashboard/agents/${slug}/credentials`)
    const rows = page.locator("tr[data-credential]")
    await rows.first().waitFor()
    expect(await rows.count()).toBe(2)
    expect(await rows.nth(0).getAttribute("data-state")).toBe("active")
    expect(await rows.nth(1).getAttribute("data-state")).toBe("revoked")
    await rows.nth(0).locator('[data-status-bit="clear"]').waitFor()
    await rows.nth(1).locator('[data-status-bit="set"]').waitFor()
    expect(await accessibilityProblems(page)).toEqual([])

    // Revoke, keyboard only: an empty reason is refused; Enter on the button asks; Enter on "Yes" revokes.
    await page.getByRole("link", { name: "Credentials" }).focus()
    await tabTo(page, "revoke-reason")
    await page.keyboard.press("Tab")
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Revoke credential")
    await page.keyboard.press("Enter")
    await page.getByText("Give a reason of 1 to 1000 characters.").waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("revoke-reason")
    await page.keyboard.type("Key material leaked")
    await page.keyboard.press("Tab")
    await page.keyboard.press("Enter")
    await page.getByText("Revoke credential version 2 for good?").waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Yes, revoke credential")
    await page.keyboard.press("Enter")
    await page.getByText("Credential version 2 revoked.").waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Credential version 2 revoked.")
    await page.locator('tr[data-credential][data-state="active"]').waitFor({ state: "detached" })
    await rows.nth(0).locator('[data-status-bit="set"]').waitFor()
    await page.getByText("No credential is active, so there is nothing to revoke.").waitFor()
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-agent-credentials.png"), fullPage: true })
    const listed = await call(server.url, "GET", `/api/v1/agents/${slug}/credentials`, { token: org.key })
    expect(listed.body.credentials[0].revoked_at).not.toBeNull()
    expect((await call(server.url, "GET", `/api/v1/agents/${slug}/credential`)).body.credential).toBeNull()

    // Mutual signing: the action's pending request.
    await page.getByRole("link", { name: "Mutual signing" }).click()
    await page.waitForURL(`${server.url}/dashboard/agents/${slug}/mutual-signing`)
    const mutual = page.locator(`tr[data-action="${action.body.action_uuid}"]`)
    await mutual.waitFor()
    expect(await mutual.getAttribute("data-mutual")).toBe("pending")
    await expect(mutual.textContent()).resolves.toContain("did:web:bank.example")
    expect(await accessibilityProblems(page)).toEqual([])

    // Decommission: a reason, then "Yes".
    await page.getByRole("link", { name: "Overview" }).click()
    await page.waitForURL(`${server.url}/dashboard/agents/${slug}`)
    await page.getByLabel("Reason (required)").fill("Replaced by payer v2")
    await page.getByRole("button", { name: "Decommission agent" }).click()
    await page.getByRole("button", { name: "Cancel" }).click()
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Decommission agent")
    await page.getByRole("button", { name: "Decommission agent" }).click()
    await page.getByRole("button", { name: "Yes, decommission agent" }).click()
    await page.getByText("Invoice payer is decommissioned. Reason: Replaced by payer v2").waitFor()
    await page.locator('[data-agent-status="decommissioned"]').waitFor()
    expect(await page.getByRole("button", { name: "Decommission agent" }).count()).toBe(0)
    expect((await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: org.key })).body.status).toBe("decommissioned")
    await page.locator('[data-reputation-tier="decommissioned"]').waitFor()
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-agent.png"), fullPage: true })

    // The actions page, filtered by this agent from the link.
    await page.getByRole("link", { name: "Actions by this agent" }).click()
    await page.waitForURL(`${server.url}/dashboard/actions?agent_id=${slug}`)
    expect(await page.getByLabel("Agent id").inputValue()).toBe(slug)
    await page.getByRole("link", { name: "invoice.pay" }).waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 30_000)

  it("transfers an agent to another organization after a confirmation; the other organization's agent is not found here", async () => {
    const slug = `mover-${suffix}`
    await register(org, slug, "Mover")
    const stranger = `stranger-${suffix}`
    await register(other, stranger, "Stranger")

    const page = await newPage()
    await signIn(page, org, `/dashboard/agents/${stranger}`)
    await page.getByRole("heading", { level: 1, name: "Agent not found" }).waitFor()
    await page.getByRole("alert").filter({ hasText: "does not exist or belongs to another organization" }).waitFor()
    expect(await page.getByText("Stranger").count()).toBe(0)
    await page.goto(`${server.url}/dashboard/agents/${stranger}/credentials`)
    await page.getByRole("heading", { level: 1, name: "Agent not found" }).waitFor()
    expect(await page.locator("tr[data-credential]").count()).toBe(0)

    await page.goto(`${server.url}/dashboard/agents/${slug}`)
    await page.getByRole("heading", { level: 1, name: "Mover" }).waitFor()
    await page.getByRole("button", { name: "Transfer agent" }).click()
    await page.getByText("Enter the id of the organization to transfer to.").waitFor()
    await page.getByLabel("Target organization id").fill(other.orgUuid)
    await page.getByRole("button", { name: "Transfer agent" }).click()
    await page.getByText(`Transfer Mover to organization ${other.orgUuid}? You will no longer see it.`).waitFor()
    await page.getByRole("button", { name: "Yes, transfer agent" }).click()
    await page.waitForURL(`${server.url}/dashboard/agents`)
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor()
    await page.locator("tr[data-agent]").first().waitFor()
    expect(await page.locator(`tr[data-agent="${slug}"]`).count()).toBe(0)
    expect((await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: org.key })).status).toBe(404)
    const moved = await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: other.key })
    expect(moved.status).toBe(200)
    expect(moved.body.owner_id).toBe(other.orgUuid)
    await page.close()
    expect(problems).toEqual([])
  }, 20_000)

  it("shows the empty state, then pages 101 agents 50 at a time and filters them by status", async () => {
    const page = await newPage()
    await signIn(page, many, "/dashboard/agents")
    await page.getByText("No agents registered yet.").waitFor()
    expect(await accessibilityProblems(page)).toEqual([])

    const started = Date.now()
    const slugs = Array.from({ length: 101 }, (_, i) => `bulk-${suffix}-${String(i).padStart(3, "0")}`)
    for (let i = 0; i < slugs.length; i += 10) {
      const replies = await Promise.all(
        slugs.slice(i, i + 10).map((slug) => call(server.url, "POST", "/api/v1/agents", { token: many.key, body: { agent_slug: slug, name: `Bulk ${slug.slice(-3)}` } }))
      )
      for (const reply of replies) expect(reply.status).toBe(201)
    }
    console.log(`registered 101 agents through the API in ${Date.now() - started} ms`)
    expect((await call(server.url, "POST", `/api/v1/agents/${slugs[0]}/decommission`, { token: many.key, body: { reason: "test" } })).status).toBe(200)

    await page.reload()
    const rows = page.locator("tr[data-agent]")
    await page.getByText("1–50 of 101").waitFor()
    expect(await rows.count()).toBe(50)
    await page.getByRole("link", { name: "Next" }).click()
    await page.waitForURL(`${server.url}/dashboard/agents?page=2`)
    await page.getByText("51–100 of 101").waitFor()
    expect(await rows.count()).toBe(50)
    await page.getByRole("link", { name: "Next" }).click()
    await page.getByText("101–101 of 101").waitFor()
    expect(await rows.count()).toBe(1)
    expect(await page.getByRole("link", { name: "Next" }).count()).toBe(0)
    await page.getByRole("link", { name: "Previous" }).click()
    await page.getByText("51–100 of 101").waitFor()

    // Status in the URL: the filter goes back to page 1 and survives a reload.
    await page.getByLabel("Status").selectOption("decommissioned")
    await page.waitForURL(`${server.url}/dashboard/agents?status=decommissioned`)
    // Only the decommissioned one, once the filtered answer has replaced the unfiltered page.
    await expect.poll(() => rows.evaluateAll((found) => found.map((row) => row.getAttribute("data-agent")))).toEqual([slugs[0]])
    await page.getByLabel("Status").selectOption("active")
    await page.getByText("1–50 of 100").waitFor()
    await page.goto(`${server.url}/dashboard/agents?status=active&page=2`)
    await page.getByText("51–100 of 100").waitFor()
    expect(await page.getByLabel("Status").inputValue()).toBe("active")
    expect(await accessibilityProblems(page)).toEqual([])
    await page.close()
    expect(problems).toEqual([])
  }, 45_000)
})

/**
 * The insights area in a real browser: analytics over actions made through the API (allowed, denied
 * by a policy, approved and denied by a person) drawn as charts whose table views hold the expected
 * numbers, the period kept in the URL across a reload, a table view opened with the keyboard only;
 * drift of an agent with a synthetic baseline and a current window of API actions (list, baseline
 * and current mix side by side, score with the threshold, an alert acknowledged); another
 * organization's agent is not found; axe on every page. Screenshots go to test/artifacts/.
 */
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { ARTIFACTS, accessibilityProblems, chromiumAvailable, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard insights browser test")

describe.skipIf(!available)("dashboard insights (analytics and drift) in Chromium", () => {
  const server = useServer()
  const suffix = Date.now().toString(36)
  const agentId = `drift-bot-${suffix}`
  const browser = useChromium(server, { viewport: { width: 1280, height: 900 } })
  const { problems, newPage } = browser
  const signIn = (page: Page, who: Org, path: string) => browser.signIn(page, who, path, false)

  const authorize = async (org: Org, body: Record<string, unknown>, expected: number) => {
    const reply = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { details: "x", ...body } })
    expect(reply.status, JSON.stringify(reply.body)).toBe(expected)
    return reply.body
  }

  /**
   * The organization's actions: the drift agent's 6 email and 4 read (authorized), 2 wires denied by
   * "No wires", one payment approved and one denied by the owner. Then the agent's synthetic baseline
   * (mostly reads) and a check that raises an alert.
   */
  const data = useFixture(async () => {
    const org = await registerOrg(server.url, "Insights")
    const other = await registerOrg(server.url, "Insights Elsewhere")
    const policy = await call(server.url, "POST", "/api/v1/policies", {
      token: org.token,
      body: { name: "No wires", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wire" }], activate: true }
    })
    expect(policy.status).toBe(201)
    const agent = await call(server.url, "POST", "/api/v1/agents", { token: org.key, body: { agent_slug: agentId, name: "Drift bot" } })
    expect(agent.status, JSON.stringify(agent.body)).toBe(201)
    for (let i = 0; i < 6; i++) await authorize(org, { action_type: "email", agent_id: agentId }, 201)
    for (let i = 0; i < 4; i++) await authorize(org, { action_type: "read", agent_id: agentId }, 201)
    await authorize(org, { action_type: "wire" }, 403)
    await authorize(org, { action_type: "wire" }, 403)
    const approved = await authorize(org, { action_type: "pay", require_approval: true }, 201)
    const denied = await authorize(org, { action_type: "pay", require_approval: true }, 201)
    expect((await call(server.url, "POST", `/api/v1/actions/${approved.action_uuid}/dashboard-approve`, { token: org.token })).status).toBe(200)
    expect((await call(server.url, "POST", `/api/v1/actions/${denied.action_uuid}/dashboard-deny`, { token: org.token })).status).toBe(200)

    const baseline = await call(server.url, "POST", `/api/v1/agents/${agentId}/drift/baseline/synthetic`, {
      token: org.key,
      body: { expected_distribution: { read: 9, email: 1 }, expected_actions_per_day: 10 }
    })
    expect(baseline.status, JSON.stringify(baseline.body)).toBe(201)
    const check = await call(server.url, "POST", `/api/v1/agents/${agentId}/drift/check`, { token: org.key })
    expect(check.status).toBe(200)
    expect(check.body.severity).toBe("high")
    return { org, other, policyId: policy.body.id as string }
  })

  /** A chart's table view as rows of { column heading: cell }. */
  const tableOf = async (page: Page, chartId: string): Promise<Array<Record<string, string>>> => {
    const table = page.locator(`figure[aria-labelledby="${chartId}-title"] details table`)
    const heads = await table.locator("thead th").allTextContents()
    const rows = await table.locator("tbody tr").all()
    return Promise.all(rows.map(async (row) => Object.fromEntries((await row.locator("th, td").allTextContents()).map((text, index) => [heads[index]!, text]))))
  }

  const canvasOf = (page: Page, chartId: string) => page.locator(`figure[aria-labelledby="${chartId}-title"] canvas`).first()

  it("draws the analytics charts with their numbers, keeps the period in the URL and opens a table view by keyboard", async () => {
    const { org, policyId } = data
    const page = await newPage()
    await signIn(page, org, "/dashboard/analytics")
    await page.getByRole("heading", { level: 1, name: "Analytics" }).waitFor()
    expect(await page.getByRole("navigation", { name: "Insights sections" }).getByRole("link", { name: "Analytics" }).getAttribute("aria-current")).toBe("page")
    await page.locator('[data-total="actions"]').filter({ hasText: /^14$/ }).waitFor()
    expect(await page.locator('[data-total="decisions"]').textContent()).toBe("2")
    expect(await page.locator('[data-total="denied"]').textContent()).toBe("2")
    for (const chart of ["chart-statuses", "chart-latency", "chart-denials"]) await canvasOf(page, chart).waitFor()

    // Day buckets over 7 days: today's row (the last) holds every action.
    const statuses = await tableOf(page, "chart-statuses")
    expect(statuses).toHaveLength(8)
    expect(statuses.at(-1)).toMatchObject({ authorized: "10", "denied by policy": "2", approved: "1", "denied by human": "1" })
    expect(statuses.slice(0, -1).every((row) => row.authorized === "0")).toBe(true)
    // Two decisions today, seconds apart from their requests; no decision on the days before.
    const latency = await tableOf(page, "chart-latency")
    expect(latency.at(-1)?.Median).toMatch(/^\d+(\.\d+)? s$/)
    expect(latency.at(-1)?.["95th percentile"]).toMatch(/^\d+(\.\d+)? s$/)
    expect(latency.slice(0, -1).every((row) => row.Median === "—")).toBe(true)
    expect(await tableOf(page, "chart-denials")).toEqual([{ Policy: "No wires", Denied: "2" }])
    expect(await page.getByRole("link", { name: "No wires" }).getAttribute("href")).toBe(`/dashboard/policies/${policyId}`)
    expect(await accessibilityProblems(page)).toEqual([])
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-analytics.png"), fullPage: true })

    // The period in the URL, through a reload.
    await page.getByLabel("Period", { exact: true }).selectOption("24h")
    await page.waitForURL(/\/dashboard\/analytics\?period=24h$/)
    await page.getByLabel("Group by", { exact: true }).selectOption("week")
    await page.waitForURL(/period=24h&bucket=week$/)
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Analytics" }).waitFor()
    expect(await page.getByLabel("Period", { exact: true }).inputValue()).toBe("24h")
    expect(await page.getByLabel("Group by", { exact: true }).inputValue()).toBe("week")
    await page.locator('[data-total="actions"]').filter({ hasText: /^14$/ }).waitFor()
    await canvasOf(page, "chart-statuses").waitFor()

    // Keyboard only: from the focused heading, Tab to the first chart's table view and open it.
    await expect.poll(() => page.evaluate("document.activeElement?.tagName")).toBe("H1")
    let reached = false
    for (let i = 0; i < 30 && !reached; i++) {
      await page.keyboard.press("Tab")
      reached =
        (await page.evaluate(`document.activeElement?.tagName === "SUMMARY" && document.activeElement.closest("figure")?.getAttribute("aria-labelledby")`)) ===
        "chart-statuses-title"
    }
    expect(reached).toBe(true)
    await page.keyboard.press("Enter")
    await page.locator('figure[aria-labelledby="chart-statuses-title"] details table').waitFor({ state: "visible" })
    expect(await page.locator('figure[aria-labelledby="chart-statuses-title"] details').getAttribute("open")).not.toBeNull()
    await page.close()
    expect(problems).toEqual([])
  }, 40_000)

  it("lists agents with their drift, shows baseline and current mix, the score with its threshold, and acknowledges an alert", async () => {
    const { org } = data
    const page = await newPage()
    await signIn(page, org, "/dashboard/drift")
    await page.getByRole("heading", { level: 1, name: "Drift" }).waitFor()
    const row = page.locator(`tr[data-agent-id="${agentId}"]`)
    await row.locator('[data-severity="high"]').waitFor()
    expect(await row.textContent()).toContain("drifting (high)")
    expect(await accessibilityProblems(page)).toEqual([])

    await row.getByRole("link", { name: "Drift bot" }).click()
    await page.waitForURL(new RegExp(`/dashboard/drift/${agentId}$`))
    await page.getByRole("heading", { level: 1, name: `Drift of ${agentId}` }).waitFor()
    await canvasOf(page, "chart-distribution").waitFor()
    await canvasOf(page, "chart-score").waitFor()
    expect(await tableOf(page, "chart-distribution")).toEqual([
      { "Action type": "email", Baseline: "10 %", Current: "60 %" },
      { "Action type": "read", Baseline: "90 %", Current: "40 %" }
    ])
    // The alert's score, then the score now; the threshold beside each.
    const scores = await tableOf(page, "chart-score")
    expect(scores).toHaveLength(2)
    expect(scores.every((point) => point["Alert threshold"] === "0.200" && Number(point["KL divergence"]) > 1)).toBe(true)
    const alert = page.locator("tr[data-alert-id]")
    await expect.poll(() => alert.count()).toBe(1)
    expect(await alert.textContent()).toContain("high")
    expect(await accessibilityProblems(page)).toEqual([])
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-drift.png"), fullPage: true })

    await alert.getByRole("button", { name: /^Acknowledge the high alert/ }).click()
    await alert.filter({ hasText: `by ${org.email}` }).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("drift-alerts")

    // The lookback in the URL, through a reload.
    await page.getByLabel("Current window", { exact: true }).selectOption("168")
    await page.waitForURL(/\?lookback=168$/)
    await page.reload()
    expect(await page.getByLabel("Current window", { exact: true }).inputValue()).toBe("168")
    await canvasOf(page, "chart-distribution").waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 30_000)

  it("answers not found for another organization's agent, and says so when there is no baseline", async () => {
    const { other } = data
    const page = await newPage()
    await signIn(page, other, `/dashboard/drift/${agentId}`)
    await page.getByRole("alert").filter({ hasText: "Not found" }).waitFor()
    expect(await page.locator("figure").count()).toBe(0)
    expect(await accessibilityProblems(page)).toEqual([])

    // Its own agent id, carried by an action, without a baseline; its analytics hold none of the first organization's actions.
    await authorize(other, { action_type: "email", agent_id: "lonely-bot" }, 201)
    const tabs = page.getByRole("navigation", { name: "Insights sections" })
    await tabs.getByRole("link", { name: "Drift", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Drift" }).waitFor()
    await page.getByText("No registered agents yet.").waitFor()
    await page.getByLabel("Agent id").fill("lonely-bot")
    await page.getByRole("button", { name: "Open agent" }).click()
    await page.getByRole("heading", { level: 1, name: "Drift of lonely-bot" }).waitFor()
    await page.getByText("This agent has no active baseline").waitFor()
    await page.getByText("No alerts for this agent.").waitFor()
    await tabs.getByRole("link", { name: "Analytics", exact: true }).click()
    await page.locator('[data-total="actions"]').filter({ hasText: /^1$/ }).waitFor()
    await page.getByText("No data for this period yet.").waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 30_000)
})

/**
 * The compliance area in a real browser: a report is created in the page, comes back ready and is
 * verified in the page (PDF hash, Ed25519 signature with the JWKS key, timestamp imprint), and the
 * same report with one signed field changed in transit does not verify; a DORA incident is
 * classified by the RTS criteria (each criterion shown against its threshold), its overdue deadline
 * shown, resolved and reported with a verified signed PDF, and another's deadline counts down; a
 * third party is added, edited and retired; a resilience test is logged with the keyboard only.
 * Every page passes axe; another organization's ids show "not found". Skips (with a printed line)
 * where /usr/bin/chromium is not installed.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { ARTIFACTS, accessibilityProblems, chromiumAvailable, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard compliance browser test")

const HOUR_MS = 3_600_000

describe.skipIf(!available)("dashboard compliance area in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Compliance Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Compliance Elsewhere"))
  const browser = useChromium(server, { acceptDownloads: true, viewport: { width: 1280, height: 900 } })
  const { problems, newPage } = browser
  const signIn = (page: Page, who: Org, path: string) => browser.signIn(page, who, path, false)
  const ids: { report?: string; incident?: string; party?: string; test?: string } = {}

  const api = async (method: string, path: string, body?: unknown, expected = 201) => {
    const reply = await call(server.url, method, path, { token: org.key, body })
    expect(reply.status, reply.text).toBe(expected)
    return reply.body
  }

  const noAxeProblems = async (page: Page) => expect(await accessibilityProblems(page)).toEqual([])

  const check = (page: Page, list: string, name: string) => page.getByRole("list", { name: list }).getByRole("listitem").filter({ hasText: `${name}:` })

  it("creates a report in the page, verifies it in the browser, and a tampered one does not verify", async () => {
    // One notarized action today, so the Article 12 report lists a receipt.
    const action = await api("POST", "/api/v1/actions", { action_type: "ledger.write", details: "x", agent_id: "report-bot" })
    await api("POST", `/api/v1/actions/${action.action_uuid}/notarize`, { outcome: "completed" }, 200)

    const page = await newPage()
    await signIn(page, org, "/dashboard/reports")
    await page.getByRole("heading", { level: 1, name: "Compliance reports" }).waitFor()
    await page.getByText("No reports match.").waitFor()
    expect(await page.getByRole("navigation", { name: "Compliance" }).getByRole("link", { name: "Reports" }).getAttribute("aria-current")).toBe("page")
    await noAxeProblems(page)

    await page.getByRole("link", { name: "New report" }).click()
    await page.getByRole("heading", { level: 1, name: "New compliance report" }).waitFor()
    await page.getByLabel("Framework").selectOption("eu_ai_act_annex_iv")
    await page.getByLabel("1. General description of the AI system").waitFor()
    await noAxeProblems(page)
    await page.getByLabel("Framework").selectOption("eu_ai_act_art12")
    await page.getByRole("button", { name: "Create report" }).click()
    await page.waitForURL(/\/dashboard\/reports\/(?!new$)[^/]+$/)
    ids.report = decodeURIComponent(page.url().split("/").pop()!)
    await page.getByRole("heading", { level: 1, name: /Art\. 12/ }).waitFor()
    await page.locator('[data-report-status="ready"]').waitFor()
    await page.getByRole("status", { name: "Report checks verdict" }).filter({ hasText: "Verified" }).waitFor({ timeout: 10_000 })
    for (const name of ["Signing key", "PDF content hash", "Signature", "Timestamp"])
      await expect(check(page, "Report checks", name).textContent()).resolves.toContain(`${name}: passed`)
    await noAxeProblems(page)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-compliance-report.png"), fullPage: true })

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download PDF" }).click()])
    expect(download.suggestedFilename()).toBe(`eu_ai_act_art12-${ids.report}.pdf`)
    expect(readFileSync((await download.path())!).subarray(0, 5).toString("latin1")).toBe("%PDF-")

    // The list, filtered in the URL.
    await page.getByRole("link", { name: "Back to reports" }).click()
    await page.getByLabel("Framework").selectOption("eu_ai_act_art12")
    await page.getByRole("button", { name: "Filter" }).click()
    await page.waitForURL(/framework=eu_ai_act_art12/)
    await page.locator(`[data-report-id="${ids.report}"]`).waitFor()
    await page.goto(`${server.url}/dashboard/reports?status=failed`)
    await page.getByText("No reports match.").waitFor()
    expect(await page.getByLabel("Status").inputValue()).toBe("failed")

    // One signed field changed on the way: the signature (and the timestamp imprint) no longer hold.
    await page.route(`**/api/v1/compliance/reports/${ids.report}`, async (route) => {
      const response = await route.fetch()
      const report = await response.json()
      await route.fulfill({ response, json: { ...report, receipt_count: report.receipt_count + 1 } })
    })
    await page.goto(`${server.url}/dashboard/reports/${ids.report}`)
    await page.getByRole("status", { name: "Report checks verdict" }).filter({ hasText: "Does not verify" }).waitFor({ timeout: 10_000 })
    await expect(check(page, "Report checks", "Signature").textContent()).resolves.toContain("Signature: failed")
    await expect(check(page, "Report checks", "Signature").textContent()).resolves.toContain("does not match the descriptor")
    await expect(check(page, "Report checks", "PDF content hash").textContent()).resolves.toContain("passed")
    await page.unroute(`**/api/v1/compliance/reports/${ids.report}`)

    // Other PDF bytes than were signed: the content hash fails.
    await page.route(`**/api/v1/compliance/reports/${ids.report}/download`, async (route) => {
      const response = await route.fetch()
      const bytes = Buffer.from(await response.body())
      bytes[bytes.length - 10] ^= 1
      await route.fulfill({ response, body: bytes })
    })
    await page.goto(`${server.url}/dashboard/reports/${ids.report}`)
    await page.getByRole("status", { name: "Report checks verdict" }).filter({ hasText: "Does not verify" }).waitFor({ timeout: 10_000 })
    await expect(check(page, "Report checks", "PDF content hash").textContent()).resolves.toContain("PDF content hash: failed")
    await expect(check(page, "Report checks", "Signature").textContent()).resolves.toContain("Signature: passed")
    await page.close()
    expect(problems).toEqual([])
  }, 40_000)

  it("walks an incident through its lifecycle with the classification explained and the deadline shown", async () => {
    const party = await api("POST", "/api/v1/dora/third-parties", { vendor_name: "CloudCo", service_description: "Hosting", service_type: "cloud_compute", criticality: "supporting" })
    const detected = new Date(Date.now() - 30 * HOUR_MS).toISOString()
    const incident = await api("POST", "/api/v1/dora/incidents", {
      title: "Payments outage",
      description: "Card payments failed",
      detected_at: detected,
      geographic_scope: ["DE", "FR"]
    })
    ids.incident = incident.uuid

    const page = await newPage()
    await signIn(page, org, "/dashboard/incidents")
    await page.getByRole("heading", { level: 1, name: "DORA incidents" }).waitFor()
    await noAxeProblems(page)
    await page.getByRole("link", { name: "Payments outage" }).click()
    await page.getByRole("heading", { level: 1, name: "Payments outage" }).waitFor()
    await page.locator('[data-incident-status="detected"]').waitFor()
    await page.getByText("No Article 19 notification is due").waitFor()
    expect(await page.getByRole("button", { name: "Resolve" }).count()).toBe(0)
    await noAxeProblems(page)

    // Classify by the RTS criteria: the gate, duration, spread (from the scope) and economic impact.
    await page.getByRole("button", { name: "Classify" }).click()
    await page.getByLabel("Severity").selectOption("high")
    await page.getByLabel("Category").selectOption("third_party_failure")
    await page.getByLabel("Third party").selectOption(party.uuid)
    await page.getByLabel("Assess the RTS criteria").check()
    await page.getByLabel("Critical services affected (Art. 6)").selectOption("yes")
    await page.getByLabel("Duration (hours)").fill("30")
    await page.getByLabel("Economic impact (EUR)").fill("150000")
    await noAxeProblems(page)
    await page.getByRole("button", { name: "Save classification" }).click()
    await page.locator('[data-incident-status="classified"]').waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.dataset?.incidentStatus")).toBe("classified")
    await page.locator('[data-major="true"]').filter({ hasText: "basis: rts criteria" }).waitFor()
    await page.getByText("Major: critical services are affected and 3 thresholds are met (two are needed).").waitFor()
    const threshold = (key: string) => page.locator(`tr[data-threshold="${key}"]`).first()
    await expect(threshold("duration").textContent()).resolves.toMatch(/Duration.*: met.*30 h.*above 24 h.*met/)
    await expect(threshold("geographical").textContent()).resolves.toContain("DE, FR (2 EU member states)")
    await expect(threshold("economic").textContent()).resolves.toContain("150,000 EUR")
    await expect(threshold("reputational").textContent()).resolves.toContain("not met")
    // Detected 30 h ago: the 24 h limit passed 6 h ago.
    await page.locator('[data-deadline="overdue"]').filter({ hasText: /Overdue.*6 h 0\d min \d\d s ago/ }).waitFor()
    await noAxeProblems(page)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-compliance-incident.png"), fullPage: true })

    await page.getByRole("button", { name: "Resolve" }).click()
    await page.getByLabel("Resolution summary").fill("Failed over to the second region")
    await page.getByRole("button", { name: "Resolve incident" }).click()
    await page.locator('[data-incident-status="resolved"]').waitFor()
    expect(await page.getByRole("button", { name: /Classify/ }).count()).toBe(0)

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Make and download report" }).click()])
    expect(download.suggestedFilename()).toBe(`dora-incident-${incident.uuid}.pdf`)
    await page.getByRole("status", { name: "Incident report checks verdict" }).filter({ hasText: "Verified" }).waitFor()
    await page.locator('[data-incident-status="reported"]').waitFor()
    await page.locator('[data-deadline="reported"]').waitFor()
    await page.getByRole("button", { name: "Verify report" }).click()
    await page.getByRole("status", { name: "Incident report checks verdict" }).filter({ hasText: "Verified" }).waitFor()

    // Major just now, detected now: due in just under 4 h, counting down each second.
    const fresh = await api("POST", "/api/v1/dora/incidents", { title: "Login failures", description: "SSO down", detected_at: new Date().toISOString() })
    await api("PUT", `/api/v1/dora/incidents/${fresh.uuid}/classify`, { severity: "medium", category: "system_failure", is_major: true }, 200)
    await page.goto(`${server.url}/dashboard/incidents/${fresh.uuid}`)
    const timer = page.locator('[data-deadline="open"]')
    await timer.filter({ hasText: /Initial notification due .*in 3 h 5\d min \d\d s/ }).waitFor()
    await page.getByText("Set explicitly by whoever classified it").waitFor()
    const before = await timer.textContent()
    await expect.poll(() => timer.textContent(), { timeout: 3_000 }).not.toBe(before)

    // Filters in the URL; then open one in the page.
    await page.goto(`${server.url}/dashboard/incidents?status=reported`)
    await page.getByRole("link", { name: "Payments outage" }).waitFor()
    expect(await page.getByRole("link", { name: "Login failures" }).count()).toBe(0)
    await page.getByRole("link", { name: "Open an incident" }).click()
    await page.getByRole("heading", { level: 1, name: "Open a DORA incident" }).waitFor()
    await noAxeProblems(page)
    await page.getByLabel("Title").fill("Batch job stuck")
    await page.getByLabel("Description").fill("Nightly settlement batch did not finish")
    await page.getByLabel("Geographic scope (optional)").fill("NL")
    await page.getByRole("button", { name: "Open incident" }).click()
    await page.getByRole("heading", { level: 1, name: "Batch job stuck" }).waitFor()
    await page.locator('[data-incident-status="detected"]').waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 40_000)

  it("adds, edits and retires a third party; logs a resilience test with the keyboard only", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/third-parties")
    await page.getByRole("heading", { level: 1, name: "ICT third parties" }).waitFor()
    await noAxeProblems(page)
    await page.getByRole("link", { name: "Add a third party" }).click()
    await page.getByRole("heading", { level: 1, name: "Add an ICT third party" }).waitFor()
    await page.getByLabel("Vendor name").fill("PayProc Ltd")
    await page.getByLabel("Service description").fill("Card acquiring")
    await page.getByLabel("Service type").selectOption("payment_processor")
    await page.getByLabel("Criticality").selectOption("critical")
    await page.getByLabel("Contract start (optional)").fill("2026-01-01")
    await noAxeProblems(page)
    await page.getByRole("button", { name: "Add third party" }).click()
    await page.getByRole("heading", { level: 1, name: "PayProc Ltd" }).waitFor()
    ids.party = decodeURIComponent(page.url().split("/").pop()!)
    await page.getByRole("list", { name: "Warnings" }).filter({ hasText: "Art. 28(8)" }).waitFor()
    await noAxeProblems(page)

    await page.getByRole("button", { name: "Edit" }).click()
    await page.getByLabel("Exit strategy (optional)").fill("Move to the second acquirer within 30 days")
    await page.getByLabel("Contract start (optional)").fill("")
    await noAxeProblems(page)
    await page.getByRole("button", { name: "Save changes" }).click()
    await page.getByText("Move to the second acquirer within 30 days").waitFor()
    expect(await page.getByRole("list", { name: "Warnings" }).count()).toBe(0)
    await page.getByText("— to —").waitFor()

    await page.getByRole("button", { name: "Retire" }).click()
    await page.getByRole("button", { name: "Yes, retire" }).click()
    await page.locator('[data-party-active="false"]').waitFor()
    await page.goto(`${server.url}/dashboard/third-parties?is_active=false`)
    await page.getByRole("link", { name: "PayProc Ltd" }).waitFor()
    await page.goto(`${server.url}/dashboard/third-parties?is_active=true`)
    await page.getByRole("link", { name: "CloudCo" }).waitFor()
    expect(await page.getByRole("link", { name: "PayProc Ltd" }).count()).toBe(0)

    // A failed test without a plan carries the Art. 24(5) warning.
    const failed = await api("POST", "/api/v1/dora/tests", {
      test_type: "penetration_test",
      title: "Annual pentest",
      scope: "Public API",
      conducted_at: "2026-03-01",
      conducted_by: "RedTeam GmbH",
      status: "failed"
    })
    ids.test = failed.uuid
    await page.goto(`${server.url}/dashboard/resilience-tests/${failed.uuid}`)
    await page.getByRole("heading", { level: 1, name: "Annual pentest" }).waitFor()
    await page.getByRole("list", { name: "Warnings" }).filter({ hasText: "Art. 24(5)" }).waitFor()
    await noAxeProblems(page)

    // Keyboard only: from the list, Tab to "Log a test", fill the form, submit with Enter.
    await page.goto(`${server.url}/dashboard/resilience-tests`)
    await page.getByRole("heading", { level: 1, name: "Resilience tests" }).waitFor()
    await page.getByRole("link", { name: "Annual pentest" }).waitFor()
    await noAxeProblems(page)
    const tabTo = async (accessibleText: string) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press("Tab")
        const here = await page.evaluate(
          `(() => { const element = document.activeElement; if (element === null) return ""; const label = element.id === "" ? null : document.querySelector('label[for="' + element.id + '"]'); return (label?.textContent ?? element.textContent ?? "").trim() })()`
        )
        if (here === accessibleText) return
      }
      throw new Error(`Tab never reached ${accessibleText}`)
    }
    await tabTo("Log a test")
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Log a resilience test" }).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.tagName")).toBe("H1")
    await tabTo("Title")
    await page.keyboard.type("Failover drill")
    await tabTo("Scope")
    await page.keyboard.type("Payments region failover")
    await tabTo("Conducted by")
    await page.keyboard.type("SRE team")
    await tabTo("Log test")
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Failover drill" }).waitFor()
    await page.getByText("Payments region failover").waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 40_000)

  it("shows another organization's ids as not found and none of its data", async () => {
    const page = await newPage()
    await signIn(page, other, `/dashboard/reports/${ids.report}`)
    await page.getByRole("heading", { level: 1, name: "Report not found" }).waitFor()
    await page.goto(`${server.url}/dashboard/incidents/${ids.incident}`)
    await page.getByRole("heading", { level: 1, name: "Incident not found" }).waitFor()
    await page.goto(`${server.url}/dashboard/third-parties/${ids.party}`)
    await page.getByRole("heading", { level: 1, name: "Third party not found" }).waitFor()
    await page.goto(`${server.url}/dashboard/resilience-tests/${ids.test}`)
    await page.getByRole("heading", { level: 1, name: "Resilience test not found" }).waitFor()
    await noAxeProblems(page)
    await page.goto(`${server.url}/dashboard/incidents`)
    await page.getByText("No incidents match.").waitFor()
    await page.goto(`${server.url}/dashboard/reports`)
    await page.getByText("No reports match.").waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 30_000)
})

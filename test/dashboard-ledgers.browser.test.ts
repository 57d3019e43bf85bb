/**
 * The ledgers area (escrow, settlements, evidence, estate) in a real browser (the page's Merkle
 * verifier alone is tested in test/dashboard-merkle.test.ts). Two settlements sealed through the API show as the log's growth; a
 * receipt's inclusion proof and the consistency proof between the settlements verify in the page,
 * and the same proofs tampered with (intercepted) do not; an escrow account takes a deposit with
 * the keyboard only, is disputed after a confirmation and resolved; an evidence package is sealed
 * from ticked actions, one of its actions' liability chain drawn, the past looked at; a will is
 * written and a death certificate issued after a confirmation. Another organization's ids show the
 * not-found state. axe finds nothing on each page.
 */
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { checkInclusion } from "../dashboard/src/areas/ledgers/merkle.js"
import { ARTIFACTS, accessibilityProblems, chromiumAvailable, tabTo, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard ledgers browser test")

describe.skipIf(!available)("dashboard ledgers in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Ledgers Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Ledgers Elsewhere"))
  const many = useFixture(() => registerOrg(server.url, "Ledgers Many"))
  const browser = useChromium(server, { expectedStatuses: /status of 40[14]/ })
  const { problems, newPage } = browser
  const signIn = (page: Page, who: Org, path: string) => browser.signIn(page, who, path, false)
  const suffix = Date.now().toString(36)
  const agent = `ledger-agent-${suffix}`
  const state: {
    actions: Record<string, string>
    receipts: Record<string, string>
    settlements: string[]
    account?: string
    packageUuid?: string
    deceased?: string
  } = { actions: {}, receipts: {}, settlements: [] }

  const api = async (method: string, path: string, body?: unknown, status = 200) => {
    const reply = await call(server.url, method, path, { token: org.key, body })
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(status)
    return reply.body
  }

  /** Authorizes and notarizes an action (a receipt); `parent` links it into a liability chain. */
  const notarized = async (name: string, parent?: string) => {
    const type = `ledger.${name}.${suffix}`
    const action = await api("POST", "/api/v1/actions", { action_type: type, details: `run ${name}`, agent_id: agent, ...(parent === undefined ? {} : { parent_action_uuid: parent }) }, 201)
    const receipt = await api("POST", `/api/v1/actions/${action.action_uuid}/notarize`, { outcome: "completed" })
    state.actions[name] = action.action_uuid
    state.receipts[name] = receipt.receipt_uuid
    return type
  }

  const axe = async (page: Page, what: string) => expect(await accessibilityProblems(page), what).toEqual([])


  const verdict = (page: Page, label: string) => page.getByRole("region", { name: label }).getByRole("status")

  it("settlements: the log's growth, inclusion and consistency verified in the page, tampered proofs refused", async () => {
    await notarized("plan")
    await notarized("execute", state.actions.plan)
    await notarized("pay", state.actions.execute)
    state.settlements.push((await api("POST", "/api/v1/settlements", undefined, 201)).id)
    await notarized("report")
    state.settlements.push((await api("POST", "/api/v1/settlements", undefined, 201)).id)
    const [first, second] = state.settlements as [string, string]

    // The server's proof checks out with the page's module in Node too.
    const proof = await api("GET", `/api/v1/settlements/inclusion-proof/${state.receipts.execute}`)
    const receipt = await api("GET", `/api/v1/receipts/${state.receipts.execute}`)
    expect((await checkInclusion(proof, receipt, (await api("GET", `/api/v1/settlements/${first}`)).merkle_root)).verified).toBe(true)

    const page = await newPage()
    await signIn(page, org, "/dashboard/settlements")
    await page.getByRole("heading", { level: 1, name: "Settlements" }).waitFor()
    expect(await page.getByRole("navigation", { name: "Ledgers" }).getByRole("link", { name: "Settlements" }).getAttribute("aria-current")).toBe("page")
    await page.getByRole("figure", { name: "Log size after each settlement (receipts)" }).waitFor()
    await page.getByText("Table view").click()
    const growth = page.getByRole("table", { name: "Log size after each settlement (receipts)" }).getByRole("row")
    expect(await growth.count()).toBe(3)
    await expect.poll(() => growth.nth(1).locator("td").textContent()).toBe("3 receipts")
    await expect.poll(() => growth.nth(2).locator("td").textContent()).toBe("4 receipts")
    await axe(page, "settlements list")

    // Inclusion of a receipt entered by id.
    await page.getByLabel("Receipt id").fill(state.receipts.execute!)
    await page.getByRole("button", { name: "Verify inclusion" }).click()
    await verdict(page, "Inclusion proof").filter({ hasText: "Verified" }).waitFor()
    await page.getByText(/leaf 1 of 3 with 2 sibling hashes leads to the signed root/).waitFor()

    // Consistency between the two settlements, chosen in the form (kept in the address).
    await page.getByLabel("Older settlement").selectOption(second)
    await page.waitForURL(new RegExp(`from=${second}`))
    await page.getByLabel("Older settlement").selectOption(first)
    await page.waitForURL(new RegExp(`from=${first}`))
    await page.getByLabel("Newer settlement").selectOption(second)
    await page.getByRole("button", { name: "Verify consistency" }).click()
    await verdict(page, "Consistency proof").filter({ hasText: "Verified" }).waitFor()
    await axe(page, "settlements list with verdicts")
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-settlements.png"), fullPage: true })

    // The same proofs altered on the way: the page says they do not verify, and why.
    await page.route("**/api/v1/settlements/inclusion-proof/**", async (route) => {
      const response = await route.fetch()
      const body = await response.json()
      const sibling: string = body.siblings[0]
      body.siblings[0] = sibling.slice(0, -1) + (sibling.endsWith("0") ? "1" : "0")
      await route.fulfill({ response, json: body })
    })
    await page.getByRole("button", { name: "Verify inclusion" }).click()
    await verdict(page, "Inclusion proof").filter({ hasText: "Does not verify" }).waitFor()
    await page.getByRole("list", { name: "Inclusion proof steps" }).getByRole("listitem").filter({ hasText: "Audit path: fails" }).waitFor()
    await page.route("**/api/v1/settlements/consistency?**", async (route) => {
      const response = await route.fetch()
      const body = await response.json()
      body.proof[0] = `sha256:${"ab".repeat(32)}`
      await route.fulfill({ response, json: body })
    })
    await page.getByRole("button", { name: "Verify consistency" }).click()
    await verdict(page, "Consistency proof").filter({ hasText: "Does not verify" }).waitFor()
    await page.getByRole("list", { name: "Consistency proof steps" }).getByRole("listitem").filter({ hasText: "Consistency: fails" }).waitFor()
    await page.unrouteAll()

    // A settlement's page: its root, its checkpoint, its receipts each verifiable.
    await page.getByRole("link", { name: `Settlement ${first}` }).click()
    await page.waitForURL(`${server.url}/dashboard/settlements/${first}`)
    await page.getByRole("heading", { level: 1, name: `Settlement ${first.slice(0, 8)}` }).waitFor()
    await page.getByText("The checkpoint names this settlement's root and size.").waitFor()
    await page.getByRole("button", { name: `Verify inclusion of receipt ${state.receipts.pay}` }).click()
    await verdict(page, "Inclusion proof").filter({ hasText: "Verified" }).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.className")).toBe("inclusion-result")
    await axe(page, "settlement page")
    await page.close()
  }, 60_000)

  it("escrow: balance chart from the transactions, a deposit with the keyboard only, a dispute confirmed then resolved", async () => {
    const account = await api("POST", "/api/v1/escrow/accounts", { purpose: `Supplier deposit ${suffix}`, currency: "EUR", counterparty: { name: "Supplier AG", type: "organization" } }, 201)
    state.account = account.account_uuid
    await api("POST", `/api/v1/escrow/accounts/${account.account_uuid}/deposit`, { amount: "100.00", description: "first" }, 201)
    await api("POST", `/api/v1/escrow/accounts/${account.account_uuid}/release`, { amount: "30.00", description: "partial" })

    const page = await newPage()
    await signIn(page, org, "/dashboard/escrow")
    await page.getByRole("heading", { level: 1, name: "Escrow accounts" }).waitFor()
    await axe(page, "escrow list")
    await page.getByRole("link", { name: `Supplier deposit ${suffix}` }).click()
    await page.getByRole("heading", { level: 1, name: `Escrow account: Supplier deposit ${suffix}` }).waitFor()
    await expect.poll(() => page.locator("[data-balance]").textContent()).toBe("70.00 EUR")
    await page.getByText("Table view").click()
    const balance = page.getByRole("table", { name: "Balance of the account (EUR)" }).getByRole("row")
    expect(await balance.count()).toBe(4)
    expect(await balance.locator("td").allTextContents()).toEqual(["0 EUR", "100 EUR", "70 EUR"])
    await axe(page, "escrow account")

    // Keyboard only: a deposit, then a dispute confirmed with Enter.
    await tabTo(page, "movement-amount")
    await page.keyboard.type("5.50")
    await page.keyboard.press("Enter")
    await page.locator("[data-balance]").filter({ hasText: "75.50 EUR" }).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("movement-amount")
    await tabTo(page, "dispute-amount")
    await page.keyboard.type("20.00")
    await tabTo(page, "dispute-reason")
    await page.keyboard.type("Goods not delivered")
    await page.keyboard.press("Tab")
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Open dispute")
    await page.keyboard.press("Enter")
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Yes, open dispute")
    await page.keyboard.press("Enter")
    await page.getByText("Frozen by an open dispute").waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("disputes-title")
    await page.getByRole("listitem", { name: "Dispute of 20.00 EUR" }).locator(".dispute-open").waitFor()
    await axe(page, "escrow account, frozen")

    await page.getByLabel("Resolution").selectOption("dismissed")
    await page.getByLabel("Note (optional)").fill("Delivered after all")
    await page.getByRole("button", { name: "Resolve dispute" }).click()
    await page.getByRole("heading", { level: 2, name: "Deposit or release" }).waitFor()
    await page.getByRole("listitem", { name: "Dispute of 20.00 EUR" }).locator(".dispute-resolved").waitFor()
    await page.getByRole("listitem", { name: "Dispute of 20.00 EUR" }).getByText("Delivered after all").waitFor()
    await page.getByRole("heading", { name: "Open a dispute" }).waitFor()
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-escrow.png"), fullPage: true })
    await page.close()
  }, 40_000)

  it("evidence: a package sealed from ticked actions, a liability chain drawn as linked boxes, the past looked at", async () => {
    expect(state.actions.pay).toBeDefined()
    const page = await newPage()
    await signIn(page, org, "/dashboard/evidence")
    await page.getByRole("heading", { level: 1, name: "Evidence packages" }).waitFor()
    await page.getByText("No evidence packages yet.").waitFor()
    await axe(page, "evidence list")
    await page.getByRole("link", { name: "New package" }).click()
    await page.getByRole("heading", { level: 1, name: "New evidence package" }).waitFor()
    await page.getByLabel("Agent id").fill(agent)
    await page.getByRole("button", { name: "Filter" }).click()
    await page.waitForURL(/agent_id=/)
    await page.getByRole("checkbox", { name: new RegExp(`ledger\\.pay\\.${suffix}`) }).check()
    await page.getByRole("checkbox", { name: new RegExp(`ledger\\.execute\\.${suffix}`) }).check()
    await page.getByText("2 actions chosen.").waitFor()
    await axe(page, "new package")
    await page.getByLabel("Title").fill(`Incident ${suffix}`)
    await page.getByLabel("Purpose (optional)").fill("Regulator request")
    await page.getByRole("button", { name: "Seal package" }).click()
    await page.getByRole("heading", { level: 1, name: `Evidence package: Incident ${suffix}` }).waitFor()
    state.packageUuid = new URL(page.url()).pathname.split("/").pop()
    expect(await page.getByRole("table", { name: "Actions in the package" }).getByRole("row").count()).toBe(3)
    await axe(page, "package page")

    await page.getByRole("link", { name: `Liability chain of ledger.pay.${suffix} ${state.actions.pay!.slice(0, 8)}` }).click()
    await page.getByRole("heading", { level: 1, name: `Liability chain of ${state.actions.pay!.slice(0, 8)}` }).waitFor()
    const boxes = page.getByRole("list", { name: "Liability chain, from the action to its root" }).getByRole("listitem")
    await boxes.first().waitFor()
    expect(await boxes.count()).toBe(3)
    await expect(boxes.nth(0).textContent()).resolves.toContain(`ledger.pay.${suffix}`)
    await expect(boxes.nth(1).textContent()).resolves.toContain(`ledger.execute.${suffix}`)
    await expect(boxes.nth(2).textContent()).resolves.toContain(`ledger.plan.${suffix}`)
    await axe(page, "liability chain")
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-liability-chain.png"), fullPage: true })

    // As of now (a second ago), this agent's four actions, notarized.
    await page.goto(`${server.url}/dashboard/evidence/time-travel`)
    await page.getByRole("heading", { level: 1, name: "Time travel" }).waitFor()
    const local = await page.evaluate("(() => { const d = new Date(Date.now() - 1000); d.setMinutes(d.getMinutes() - d.getTimezoneOffset()); return d.toISOString().slice(0, 19) })()")
    await page.getByLabel("As of").fill(local as string)
    await page.getByLabel("Reason (recorded)").fill("Audit of the ledger agent")
    await page.getByLabel("Agent id").fill(agent)
    await page.getByRole("button", { name: "Look back" }).click()
    await page.getByRole("heading", { level: 2, name: /^4 actions as of/ }).waitFor()
    await page.waitForURL(/reason=/)
    await axe(page, "time travel")
    await page.close()
  }, 40_000)

  it("estate: a will written in the page, a death certificate issued after a confirmation, the succession shown", async () => {
    const heir = `heir-${suffix}`
    const deceased = `retiring-${suffix}`
    state.deceased = deceased
    await api("POST", "/api/v1/agents", { agent_slug: heir, name: "Heir agent" }, 201)
    await api("POST", "/api/v1/agents", { agent_slug: deceased, name: "Retiring agent" }, 201)

    const page = await newPage()
    await signIn(page, org, "/dashboard/estate")
    await page.getByRole("heading", { level: 1, name: "Estate" }).waitFor()
    await axe(page, "estate list")
    await page.getByRole("link", { name: deceased }).click()
    await page.getByRole("heading", { level: 1, name: "Estate of Retiring agent" }).waitFor()
    await page.getByText("No will yet.").waitFor()
    await page.getByText(/A death certificate is issued for a decommissioned agent only/).waitFor()
    await page.getByLabel("Succession", { exact: true }).selectOption("transfer_to_successor")
    await page.getByLabel("Successor agent (slug)").fill(heir)
    await page.getByLabel("Keep data for (days)").fill("30")
    await page.getByLabel(/Whom to tell/).fill("ops@example.test")
    await page.getByRole("button", { name: "Save will" }).click()
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    await page.getByRole("definition").filter({ hasText: "email ops@example.test" }).waitFor()
    await page.getByRole("heading", { name: "Replace the will" }).waitFor()
    await axe(page, "estate of an agent")

    await api("POST", `/api/v1/agents/${deceased}/decommission`, { reason: "replaced by the heir" })
    await page.reload()
    await page.getByRole("heading", { name: "Issue the death certificate" }).waitFor()
    await page.getByLabel("Cause", { exact: true }).selectOption("replaced")
    await page.getByRole("button", { name: "Issue certificate" }).click()
    await page.getByRole("button", { name: "Cancel" }).click()
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Issue certificate")
    await page.getByRole("button", { name: "Issue certificate" }).click()
    await page.getByRole("button", { name: "Yes, issue certificate" }).click()
    const succession = page.getByRole("definition").filter({ hasText: heir })
    await succession.first().waitFor()
    await page.getByText("yes", { exact: true }).waitFor()
    await axe(page, "estate with a death certificate")
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-estate.png"), fullPage: true })
    await page.close()
  }, 40_000)

  it("pages a list past 100, 50 at a time, the page number in the address", async () => {
    for (let i = 0; i < 101; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, 101 - i) }, (_, j) =>
          call(server.url, "POST", "/api/v1/escrow/accounts", { token: many.key, body: { purpose: `Account ${String(i + j).padStart(3, "0")}` } }).then((reply) =>
            expect(reply.status).toBe(201)
          )
        )
      )
    }
    const page = await newPage()
    await signIn(page, many, "/dashboard/escrow")
    const pages = page.getByRole("navigation", { name: "Escrow accounts pages" })
    await pages.getByText("1–50 of 101").waitFor()
    expect(await page.getByRole("table", { name: "Escrow accounts" }).getByRole("row").count()).toBe(51)
    await pages.getByRole("link", { name: "Next" }).click()
    await page.waitForURL(/page=2/)
    await pages.getByText("51–100 of 101").waitFor()
    await page.goto(`${server.url}/dashboard/escrow?page=3`)
    await pages.getByText("101–101 of 101").waitFor()
    expect(await page.getByRole("table", { name: "Escrow accounts" }).getByRole("row").count()).toBe(2)
    await page.close()
  }, 30_000)

  it("another organization sees none of it: each id shows the not-found state", async () => {
    const outsider = await newPage()
    await signIn(outsider, other, `/dashboard/escrow/${state.account}`)
    await outsider.getByRole("heading", { level: 1, name: "Escrow account not found" }).waitFor()
    await axe(outsider, "not found")
    const go = async (path: string, heading: string) => {
      await outsider.goto(server.url + path)
      await outsider.getByRole("heading", { level: 1, name: heading }).waitFor()
    }
    await go(`/dashboard/settlements/${state.settlements[0]}`, "Settlement not found")
    await go(`/dashboard/evidence/${state.packageUuid}`, "Evidence package not found")
    await go(`/dashboard/evidence/chain/${state.actions.pay}`, "Action not found")
    await go(`/dashboard/estate/${state.deceased}`, "Agent not found")
    await go("/dashboard/settlements", "Settlements")
    await outsider.getByText("No settlements yet.").first().waitFor()
    await outsider.getByLabel("Receipt id").fill(state.receipts.pay!)
    await outsider.getByRole("button", { name: "Verify inclusion" }).click()
    await outsider.getByText("No settlement holds this receipt").waitFor()
    await go("/dashboard/escrow", "Escrow accounts")
    await outsider.getByText("No escrow accounts yet.").waitFor()
    await outsider.close()
    expect(problems).toEqual([])
  }, 30_000)
})

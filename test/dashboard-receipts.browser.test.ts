/**
 * The actions list and receipt verification in a real browser: two notarized actions of one agent
 * are listed; the second one's page runs the portable verifier in the page (signature, payload hash,
 * chain link to the first, timestamp imprint) and all pass; the download is the receipt file; the
 * same file with one signed field changed fails in the import box. Another organization sees none of
 * it. Skips (with a printed line) where /usr/bin/chromium is not installed. A screenshot of the
 * receipt page goes to test/artifacts/.
 */
import { readFileSync, } from "node:fs"
import { join, } from "node:path"
import * as ed from "@noble/ed25519"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { base64UrlEncode, canonicalBytes, payloadHash } from "../protocol/verifier/index.js"
import { ARTIFACTS, chromiumAvailable, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard receipts browser test")


describe.skipIf(!available)("dashboard actions and receipts in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Receipts"))
  const other = useFixture(() => registerOrg(server.url, "Outsiders"))
  const browser = useChromium(server, { acceptDownloads: true, viewport: { width: 1280, height: 900 } })
  const { problems, newPage } = browser
  const signIn = (page: Page, who: Org, path = "/dashboard") => browser.signIn(page, who, path, false)

  /** Authorizes and notarizes one action of the agent: a receipt in the agent's chain. */
  const notarized = async (agentId: string, actionType: string) => {
    const authorized = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: actionType, details: `run ${actionType}`, agent_id: agentId }
    })
    expect(authorized.status).toBe(201)
    const uuid = authorized.body.action_uuid as string
    const done = await call(server.url, "POST", `/api/v1/actions/${uuid}/notarize`, { token: org.key, body: { outcome: "completed" } })
    expect(done.status).toBe(200)
    return uuid
  }

  const check = (page: Page, list: string, name: string) => page.getByRole("list", { name: list }).getByRole("listitem").filter({ hasText: `${name}:` })

  it("lists the agent's actions and verifies the second receipt in the page: signature, hash, chain, timestamp", async () => {
    const suffix = Date.now().toString(36)
    const agentId = `ledger-bot-${suffix}`
    const firstType = `ledger.write.${suffix}`
    const secondType = `ledger.close.${suffix}`
    await notarized(agentId, firstType)
    const second = await notarized(agentId, secondType)

    const page = await newPage()
    await signIn(page, org, "/dashboard/actions")
    await page.waitForURL(`${server.url}/dashboard/actions`)
    await page.getByRole("heading", { level: 1, name: "Actions" }).waitFor()
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Actions" }).getAttribute("aria-current")).toBe("page")

    // Filter by agent: just these two, newest first.
    await page.getByLabel("Agent id").fill(agentId)
    await page.getByLabel("Status").selectOption("notarized")
    await page.getByRole("button", { name: "Filter" }).click()
    await page.waitForURL(/agent_id=/)
    const rows = page.getByRole("table").getByRole("row")
    await page.getByRole("link", { name: secondType }).waitFor()
    expect(await rows.count()).toBe(3)
    await expect(rows.nth(1).textContent()).resolves.toContain(secondType)
    await expect(rows.nth(2).textContent()).resolves.toContain(firstType)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-actions-laptop.png"), fullPage: true })

    // The page's verdict comes from the verifier running here, not from the server's `valid`.
    await page.getByRole("link", { name: secondType }).click()
    await page.waitForURL(`${server.url}/dashboard/actions/${second}`)
    await page.getByRole("heading", { level: 1, name: secondType }).waitFor()
    await page.getByRole("status", { name: "Receipt checks verdict" }).filter({ hasText: "Valid" }).waitFor({ timeout: 5_000 })
    for (const name of ["Signature", "Payload hash", "Chain link", "Timestamp"]) {
      await expect(check(page, "Receipt checks", name).textContent()).resolves.toContain(`${name}: passed`)
    }
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-receipt-laptop.png"), fullPage: true })

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download receipt" }).click()])
    expect(download.suggestedFilename()).toMatch(/^receipt-[\w-]+\.json$/)
    const text = readFileSync((await download.path())!, "utf8")
    const file = JSON.parse(text)
    expect(file.action_uuid).toBe(second)
    expect(file.signed_payload.agent_sequence).toBe(2)
    expect(file.public_key).toMatchObject({ kty: "OKP", crv: "Ed25519", kid: file.public_key_id })
    expect(file.previous.payload_hash).toBe(file.signed_payload.previous_payload_hash)

    // The file as downloaded verifies in the import box, key recognised.
    const box = page.getByLabel("Receipt JSON (as downloaded)")
    await box.fill(text)
    await page.getByRole("button", { name: "Verify", exact: true }).click()
    await page.getByRole("status", { name: "Imported receipt checks verdict" }).filter({ hasText: "Valid" }).waitFor()
    await page.getByText(`Key ${file.public_key_id} is published by this gateway.`).waitFor()

    // One signed field changed: the signature (and the hash) no longer hold.
    await box.fill(JSON.stringify({ ...file, signed_payload: { ...file.signed_payload, outcome: "failed" } }))
    await page.getByRole("button", { name: "Verify", exact: true }).click()
    await page.getByRole("status", { name: "Imported receipt checks verdict" }).filter({ hasText: "Invalid" }).waitFor()
    await expect(check(page, "Imported receipt checks", "Signature").textContent()).resolves.toContain("Signature: failed")
    await expect(check(page, "Imported receipt checks", "Payload hash").textContent()).resolves.toContain("Payload hash: failed")

    // Re-signed with a key of its own: the checks hold, but the page says the gateway never published that key.
    const secret = ed.utils.randomSecretKey()
    const forged = { ...file.signed_payload, outcome: "failed" }
    await box.fill(
      JSON.stringify({
        ...file,
        signed_payload: forged,
        payload_hash: payloadHash(forged),
        signature: `ed25519:${base64UrlEncode(ed.sign(canonicalBytes(forged), secret))}`,
        public_key: { kty: "OKP", crv: "Ed25519", x: base64UrlEncode(ed.getPublicKey(secret)) }
      })
    )
    await page.getByRole("button", { name: "Verify", exact: true }).click()
    await page.getByText(/is not published by this gateway/).waitFor()
    await expect(check(page, "Imported receipt checks", "Signature").textContent()).resolves.toContain("Signature: passed")

    // Not JSON: a message, no verdict.
    await box.fill("{not json")
    await page.getByRole("button", { name: "Verify", exact: true }).click()
    await page.getByRole("alert").filter({ hasText: "This is not valid JSON." }).waitFor()

    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-receipt-phone.png"), fullPage: true })
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)

    // The first receipt of the chain has no link to check.
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goBack()
    await page.getByRole("link", { name: firstType }).click()
    await page.getByRole("heading", { level: 1, name: firstType }).waitFor()
    await page.getByRole("status", { name: "Receipt checks verdict" }).filter({ hasText: "Valid" }).waitFor({ timeout: 5_000 })
    await expect(check(page, "Receipt checks", "Chain link").textContent()).resolves.toContain("Chain link: not applicable")
    await page.close()

    // Another organization: the page is not found, the list is empty.
    const outsider = await newPage()
    await signIn(outsider, other, `/dashboard/actions/${second}`)
    await outsider.getByRole("heading", { level: 1, name: "Action not found" }).waitFor()
    await outsider.goto(`${server.url}/dashboard/actions?agent_id=${agentId}`)
    await outsider.getByText("No actions match.").waitFor()
    await outsider.goto(`${server.url}/dashboard/actions`)
    await outsider.getByRole("heading", { level: 1, name: "Actions" }).waitFor()
    await outsider.getByText("No actions match.").waitFor()
    await outsider.close()
    expect(problems).toEqual([])
  }, 30_000)

  it("pages through the list: 25 a page, next and previous", async () => {
    const agentId = `pager-bot-${Date.now().toString(36)}`
    for (let i = 0; i < 26; i++) {
      const reply = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: `page.item.${i}`, details: "x", agent_id: agentId } })
      expect(reply.status).toBe(201)
    }
    const page = await newPage()
    await signIn(page, org, `/dashboard/actions?agent_id=${agentId}`)
    await page.getByText("Page 1 of 2 (26 actions)").waitFor()
    const rows = page.getByRole("table").getByRole("row")
    expect(await rows.count()).toBe(26)
    expect(await page.getByRole("link", { name: "← Previous" }).count()).toBe(0)
    await page.getByRole("link", { name: "Next →" }).click()
    await page.getByText("Page 2 of 2 (26 actions)").waitFor()
    expect(page.url()).toBe(`${server.url}/dashboard/actions?agent_id=${agentId}&page=2`)
    expect(await rows.count()).toBe(2)
    await expect(rows.nth(1).textContent()).resolves.toContain("page.item.0")
    // The filter box still shows the filter after paging.
    expect(await page.getByLabel("Agent id").inputValue()).toBe(agentId)
    await page.getByRole("link", { name: "← Previous" }).click()
    await page.getByText("Page 1 of 2 (26 actions)").waitFor()
    await page.close()
    expect(problems).toEqual([])
  }, 20_000)
})

/**
 * The action page in a real browser for an action authorized with a replay context: the four fields
 * and their hash are shown, and "Download receipt" saves the gateway's JSON export (1.3 receipt,
 * exact signed text, TSA certificate), which the import box verifies. Skips (with a printed line)
 * where /usr/bin/chromium is not installed.
 */
import { readFileSync } from "node:fs"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { chromiumAvailable, useChromium } from "./support/browser.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard replay context browser test")

describe.skipIf(!available)("dashboard replay context and receipt export in Chromium", () => {
  const server = useServer()
  const org = useFixture(() => registerOrg(server.url, "Replay"))
  const browser = useChromium(server, { acceptDownloads: true, viewport: { width: 1280, height: 900 } })
  const { newPage } = browser
  const signIn = (page: Page, who: Org, path: string) => browser.signIn(page, who, path, false)

  it("shows the replay context and its hash, and downloads the JSON export", async () => {
    const body = {
      action_type: "report.send",
      details: "send the report",
      agent_id: "replay-page-bot",
      system_prompt_hash: "sha256:system-prompt-v7",
      tool_inputs_hash: "sha256:tool-args-v2",
      model_params: { temperature: 0.3, seed: 11 },
      execution_env: { framework: "vercel-ai", sdk_version: "3.4.0" }
    }
    const authorized = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body })
    expect(authorized.status).toBe(201)
    const id = authorized.body.action_uuid as string
    const done = await call(server.url, "POST", `/api/v1/actions/${id}/notarize`, { token: org.key, body: { outcome: "completed" } })
    expect(done.status).toBe(200)
    const detail = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })

    const page = await newPage()
    await signIn(page, org, `/dashboard/actions/${id}`)
    await page.getByRole("heading", { level: 2, name: "Replay context" }).waitFor()
    const shown = (await page.getByLabel("Replay context fields").textContent()) ?? ""
    for (const value of [body.system_prompt_hash, body.tool_inputs_hash, '"temperature": 0.3', '"framework": "vercel-ai"', detail.body.replay_context_hash]) {
      expect(shown).toContain(value)
    }

    await page.getByRole("status", { name: "Receipt checks verdict" }).filter({ hasText: "Valid" }).waitFor({ timeout: 5_000 })
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download receipt" }).click()])
    expect(download.suggestedFilename()).toBe(`receipt-${done.body.receipt_uuid}.json`)
    const text = readFileSync((await download.path())!, "utf8")
    const file = JSON.parse(text)
    expect(file).toMatchObject({ format: "gateway-receipt/1", export_version: "1.0", receipt_uuid: done.body.receipt_uuid, action_uuid: id, previous: null })
    expect(file.signed_payload).toMatchObject({ receipt_version: "1.3", replay_context_hash: detail.body.replay_context_hash })
    expect(file.canonical_payload).toBeTypeOf("string")
    expect(file.tsa_certificate).toMatch(/^-----BEGIN CERTIFICATE-----/)
    expect(file).not.toHaveProperty("request_id")

    await page.getByLabel("Receipt JSON (as downloaded)").fill(text)
    await page.getByRole("button", { name: "Verify", exact: true }).click()
    await page.getByRole("status", { name: "Imported receipt checks verdict" }).filter({ hasText: "Valid" }).waitFor()
    await page.close()

    // An action sent without a replay context shows no such section.
    const plain = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "plain", details: "d" } })
    const other = await newPage()
    await signIn(other, org, `/dashboard/actions/${plain.body.action_uuid}`)
    await other.getByRole("heading", { level: 1, name: "plain" }).waitFor()
    expect(await other.getByRole("heading", { level: 2, name: "Replay context" }).count()).toBe(0)
    await other.close()
  }, 120_000)
})

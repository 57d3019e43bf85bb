
import { join, } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { SseParser } from "../dashboard/src/sse.js"
import { ARTIFACTS, chromiumAvailable, useChromium } from "./support/browser.js"
import { call, registerOrg } from "./support/client.js"
import { startFakeLlm } from "./support/fake-llm.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard cases browser test")


describe("SSE parser (dashboard)", () => {
  it("parses events split across chunks anywhere, with CRLF, CR, comments and multi-line data", () => {
    const text = ': hello\r\nevent: started\r\ndata: {"a":1}\r\n\r\nevent:model_complete\ndata: {"b":\ndata: "é"}\n\nid: 3\n\revent: done\rdata: {}\r\r\n'
    const bytes = new TextEncoder().encode(text)
    const whole = new SseParser().push(bytes)
    expect(whole).toEqual([
      { event: "started", data: '{"a":1}' },
      { event: "model_complete", data: '{"b":\n"é"}' },
      { event: "done", data: "{}" }
    ])
    // Every split point, including between CR and LF and inside the two-byte é.
    for (let cut = 1; cut < bytes.length; cut++) {
      const parser = new SseParser()
      expect([...parser.push(bytes.slice(0, cut)), ...parser.push(bytes.slice(cut))]).toEqual(whole)
    }
    // Byte by byte; an event without data dispatches nothing.
    const parser = new SseParser()
    const single = [...bytes].flatMap((byte) => parser.push(Uint8Array.of(byte)))
    expect(single).toEqual(whole)
    expect(new SseParser().push("event: x\n\ndata: y\n\n")).toEqual([{ event: "message", data: "y" }])
  })
})

describe.skipIf(!available)("dashboard cases in Chromium", () => {
  const llm = useFixture(startFakeLlm, (fake) => fake.close())
  const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
  const PATHS = ["slow/300/approve", "slow/600/deny", "approve", "lower", "slow/1000/approve", "slow/1600/deny"]
  const org = useFixture(async () => {
    const owner = await registerOrg(server.url, "Cases Dashboard")
    for (const path of PATHS) {
      const reply = await call(server.url, "POST", "/api/v1/models/custom", {
        token: owner.key,
        body: { name: path, model_id: path.replace(/\//g, "-"), endpoint_url: `${llm.url}/${path}/v1`, timeout_ms: 10_000 }
      })
      expect(reply.status).toBe(201)
    }
    return owner
  })
  const other = useFixture(() => registerOrg(server.url, "Cases Elsewhere"))
  const modelId = (path: string) => `custom:${path.replace(/\//g, "-")}`
  const { problems, newPage, signIn } = useChromium(server, {})
  /** Case ids the tests below share, in order. */
  const state: { mixedCaseId?: string } = {}

  /** In-app navigation (no reload: the socket stays up). */
  const go = (page: Page, path: string) => page.evaluate(`history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent("popstate"))`)

  const chooseModels = async (page: Page, paths: ReadonlyArray<string>) => {
    for (const path of paths) await page.getByRole("checkbox", { name: new RegExp(modelId(path)) }).check()
  }

  /** What the run section showed after each DOM change: answers in order, consensus, receipt, done. */
  /** Records what the run section showed after each DOM change: answers in order, consensus, receipt, done. */
  const recordRun = (page: Page) =>
    page.evaluate(`(() => {
      const snapshots = []
      window.__snapshots = snapshots
      new MutationObserver(() => {
        const run = document.querySelector(".run")
        if (run === null) return
        snapshots.push({
          models: [...run.querySelectorAll("[data-model]")].map((element) => element.getAttribute("data-model")),
          consensus: run.querySelector(".consensus") !== null,
          receipt: run.querySelector("[data-receipt]") !== null,
          done: /^Done in \\d+ ms\\.$/.test(run.querySelector(".run-state")?.textContent ?? "")
        })
      }).observe(document.body, { childList: true, subtree: true, characterData: true })
    })()`)

  it("streams a case from the cases page: answers in completion order, then consensus, receipt and done", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/cases")
    await page.getByRole("heading", { level: 1, name: "Cases" }).waitFor()
    await expect(page.getByRole("link", { name: "Cases" }).getAttribute("aria-current")).resolves.toBe("page")

    // Fewer than two models: refused in the form, focus on the message.
    await page.getByLabel("Details").fill("Wire 40,000 EUR to a new supplier")
    await chooseModels(page, ["slow/600/deny"])
    await page.getByRole("button", { name: "Run case" }).click()
    await page.getByRole("alert").filter({ hasText: "Choose 2 or 3 models." }).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Choose 2 or 3 models.")

    // Chosen slow-first: the answers still come in completion order.
    await chooseModels(page, ["slow/300/approve"])
    await recordRun(page)
    await page.getByRole("button", { name: "Run case" }).click()
    const run = page.locator(".run")
    await run.getByText(/^Done in \d+ ms\.$/).waitFor({ timeout: 5_000 })
    const snapshots: Array<{ models: string[]; consensus: boolean; receipt: boolean; done: boolean }> = await page.evaluate("window.__snapshots")
    // One answer was on screen, alone, before the consensus.
    expect(snapshots.some((shot) => shot.models.length === 1 && shot.models[0] === modelId("slow/300/approve") && !shot.consensus)).toBe(true)
    const last = snapshots.at(-1)!
    expect(last).toEqual({ models: [modelId("slow/300/approve"), modelId("slow/600/deny")], consensus: true, receipt: true, done: true })
    // Consensus only after both answers; the receipt only with or after the consensus.
    for (const shot of snapshots) {
      if (shot.consensus) expect(shot.models).toHaveLength(2)
      if (shot.receipt) expect(shot.consensus).toBe(true)
    }
    const first = run.getByRole("article", { name: `${modelId("slow/300/approve")}: APPROVE` })
    await expect(first.getByText("90 %").isVisible()).resolves.toBe(true)
    await expect(first.getByText("reversible", { exact: true }).isVisible()).resolves.toBe(true)
    await expect(first.getByText("The action is routine and reversible.").isVisible()).resolves.toBe(true)
    await expect(run.getByRole("heading", { name: "Consensus: MIXED" }).isVisible()).resolves.toBe(true)
    await expect(run.getByText(/^needed: /).isVisible()).resolves.toBe(true)
    expect(await run.getAttribute("aria-live")).toBe("polite")
    const receiptUuid = await run.locator("[data-receipt]").getAttribute("data-receipt")

    // The case is stored as streamed, and listed.
    const href = await run.getByRole("link", { name: "Open the case" }).getAttribute("href")
    const caseId = decodeURIComponent(href!.split("/").at(-1)!)
    const stored = await call(server.url, "GET", `/api/v1/cases/${caseId}`, { token: org.key })
    expect(stored.body.receipt.receipt_uuid).toBe(receiptUuid)
    expect(stored.body.review.status).toBe("pending")
    await page.locator(`tr[data-case-id="${caseId}"]`).getByText("pending").waitFor()
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-case-run.png"), fullPage: true })
    state.mixedCaseId = caseId

    // Agreeing models at phone width: APPROVE, no review; nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.getByLabel("Details").fill("Refund order #1234 (19.99 EUR)")
    for (const path of ["slow/300/approve", "slow/600/deny"]) await page.getByRole("checkbox", { name: new RegExp(modelId(path)) }).uncheck()
    await chooseModels(page, ["approve", "lower"])
    await page.getByRole("button", { name: "Run case" }).click()
    await run.getByRole("heading", { name: "Consensus: APPROVE" }).waitFor({ timeout: 5_000 })
    await run.getByText("not needed").waitFor()
    await run.getByText(/^Done in \d+ ms\.$/).waitFor()
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-cases-phone.png"), fullPage: true })
    await page.setViewportSize({ width: 1280, height: 800 })

    // Cancel: the run stops, says so, and the gateway cancels the slow model's call.
    await chooseModels(page, ["slow/1000/approve"])
    await page.getByRole("checkbox", { name: new RegExp(modelId("lower")) }).uncheck()
    await page.getByRole("button", { name: "Run case" }).click()
    await run.getByText(/^Running case /).waitFor()
    await page.getByRole("button", { name: "Cancel" }).click()
    await run.getByText("Cancelled. The gateway stops the model calls.").waitFor()
    // Focus stays in the form (the Cancel button is gone).
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Run case")
    // The fast model had answered; the slow one never does.
    expect(await run.locator("[data-model]").evaluateAll((elements) => elements.map((element) => element.getAttribute("data-model")))).toEqual([modelId("approve")])
    await expect.poll(() => llm.aborted.some((path) => path.includes("slow/1000/approve")), { timeout: 2_000 }).toBe(true)
    await page.close()
    expect(problems).toEqual([])
  })

  it("shows a refusal before the stream (422) with its reason", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/cases")
    await chooseModels(page, ["approve", "lower"])
    // Disabled for cases after the form listed it: the gateway refuses before streaming.
    const disabled = await call(server.url, "PUT", "/api/v1/models/preferences", { token: org.token, body: { disabled_models: [modelId("lower")] } })
    expect(disabled.status).toBe(200)
    try {
      await page.getByLabel("Details").fill("Rotate the signing key")
      await page.getByRole("button", { name: "Run case" }).click()
      await page
        .locator(".run")
        .getByRole("alert")
        .filter({ hasText: `The case was refused: models: ${modelId("lower")} is disabled for cases in this organization` })
        .waitFor()
      await expect(page.getByRole("button", { name: "Run case" }).isEnabled()).resolves.toBe(true)
    } finally {
      await call(server.url, "PUT", "/api/v1/models/preferences", { token: org.token, body: { disabled_models: [] } })
    }
    await page.close()
    expect(problems.filter((problem) => !/status of 422/.test(problem))).toEqual([])
    problems.length = 0
  })

  it("lists the case review in the approvals inbox and approves it on the case page", async () => {
    const caseId = state.mixedCaseId!
    expect(caseId).toBeDefined()
    const page = await newPage()
    await signIn(page, org, "/dashboard")
    const reviews = page.getByRole("list", { name: "Case reviews" })
    const card = reviews.locator(`article[data-case-id="${caseId}"]`)
    await card.waitFor()
    await expect(card.getByText(/Models disagree/).isVisible()).resolves.toBe(true)
    await card.getByRole("link", { name: /Case review needed: MIXED/ }).click()
    await page.waitForURL(`${server.url}/dashboard/cases/${caseId}`)
    await page.getByRole("heading", { level: 1, name: "Case MIXED" }).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.tagName")).toBe("H1")
    await page.getByText("Review pending").waitFor()
    expect(await page.getByRole("list", { name: "Model answers" }).locator("[data-model]").count()).toBe(2)
    await page.getByLabel("Reason (optional)").fill("supplier verified by phone")
    await page.getByRole("button", { name: "Approve" }).click()
    await page.getByText(`Review approved by ${org.email}`, { exact: false }).waitFor()
    await page.getByText(/Reason: supplier verified by phone/).waitFor()
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0)
    const stored = await call(server.url, "GET", `/api/v1/cases/${caseId}`, { token: org.key })
    expect(stored.body.review).toMatchObject({ status: "approved", reviewed_by: org.email, reason: "supplier verified by phone" })

    // Back in the inbox, it is gone.
    await page.getByRole("link", { name: "Approvals" }).click()
    await page.getByRole("heading", { level: 1, name: "Pending approvals" }).waitFor()
    await page.getByText("Nothing is waiting for a decision.").waitFor()
    await page.close()
    expect(problems).toEqual([])
  })

  it("shows a running case's answers live on its page, then the stored case with its review", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard")
    // Started by an agent over the API; the page opens it while the models are still working.
    const controller = new AbortController()
    const response = await fetch(`${server.url}/api/v1/cases/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
      body: JSON.stringify({ details: "Delete the staging tenant", models: [modelId("slow/1600/deny"), modelId("slow/1000/approve")] }),
      signal: controller.signal
    })
    const reader = response.body!.getReader()
    const parser = new SseParser()
    let caseId: string | undefined
    while (caseId === undefined) {
      const { value, done } = await reader.read()
      if (done) throw new Error("stream ended before started")
      for (const event of parser.push(value)) if (event.event === "started") caseId = JSON.parse(event.data).case_id
    }
    // Keep reading so the stream runs to its end.
    const drained = (async () => {
      while (!(await reader.read()).done) {}
    })()
    await go(page, `/dashboard/cases/${caseId}`)
    await page.getByRole("heading", { level: 1, name: "Case running" }).waitFor({ timeout: 1_500 })
    const live = page.locator(".run")
    await live.locator(`[data-model="${modelId("slow/1000/approve")}"]`).waitFor({ timeout: 1_500 })
    expect(await live.locator("[data-model]").count()).toBe(1)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-case-live.png"), fullPage: true })
    // Done: the stored case replaces the live view.
    await page.getByRole("heading", { level: 1, name: "Case MIXED" }).waitFor({ timeout: 3_000 })
    await page.getByText("Review pending").waitFor()
    await drained
    const answers = await page.getByRole("list", { name: "Model answers" }).locator("[data-model]").evaluateAll((elements) => elements.map((element) => element.getAttribute("data-model")))
    // Stored in the order requested.
    expect(answers).toEqual([modelId("slow/1600/deny"), modelId("slow/1000/approve")])
    await page.close()
    expect(problems).toEqual([])
  })

  it("shows another organization none of it", async () => {
    const caseId = state.mixedCaseId!
    const page = await newPage()
    await signIn(page, other, "/dashboard/cases")
    await page.getByRole("heading", { level: 1, name: "Cases" }).waitFor()
    await page.getByText("No cases yet.").waitFor()
    expect(await page.locator("tr[data-case-id]").count()).toBe(0)
    // Only the models every organization has: none of the first one's custom models.
    expect(await page.getByRole("checkbox", { name: /custom:/ }).count()).toBe(0)
    await go(page, `/dashboard/cases/${caseId}`)
    await page.getByRole("heading", { level: 1, name: "Case not found" }).waitFor()
    await go(page, "/dashboard")
    await page.getByText("Nothing is waiting for a decision.").waitFor()
    expect(await page.getByRole("list", { name: "Case reviews" }).count()).toBe(0)
    expect((await call(server.url, "GET", `/api/v1/cases/${caseId}`, { token: other.token })).status).toBe(404)
    await page.close()
    expect(problems).toEqual([])
  })
})

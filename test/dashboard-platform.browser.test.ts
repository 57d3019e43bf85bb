/**
 * The dashboard's platform area in Chromium: the model catalogue filtered through the URL and a
 * preference saved; a provider credential added whose secret never reaches the page again, then
 * deleted after a confirmation; a custom model registered, tested against a local
 * OpenAI-compatible server and deleted, another organization's model id answering not found;
 * feature flags toggled for the organization and administered with an administration key held in
 * memory only; SAML single sign-on configured, enforced and removed; the sanitize playground's
 * findings marked per type (keyboard only) and a file's before and after with its download.
 * axe on every page, and no console error or CSP violation anywhere.
 */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { ARTIFACTS, accessibilityProblems, chromiumAvailable, tabTo, useChromium } from "./support/browser.js"
import { call, registerOrg } from "./support/client.js"
import { startFakeLlm } from "./support/fake-llm.js"
import { useFixture } from "./support/fixture.js"
import { textImage } from "./support/sanitize-files.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard platform browser test")

const ADMIN_KEY = "test-admin-key"
const SECRET = "sk-platform-SECRET-7f3a9c2e51"
const EMAIL = "jane.roe@example.com"
const CARD = "4539 1488 0343 6467"

const metadataXml = (entityId: string) =>
  `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>MIIBdGVzdGNlcnRpZmljYXRl</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.test/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`

describe.skipIf(!available)("dashboard platform area in Chromium", () => {
  const llm = useFixture(startFakeLlm, (fake) => fake.close())
  // The fake model listens on plain HTTP on loopback.
  const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
  const org = useFixture(() => registerOrg(server.url, "Platform Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Platform Elsewhere"))
  const { problems, newPage, signIn } = useChromium(server, { expectedStatuses: /status of 40[0-49]/, acceptDownloads: true })

  const go = (page: Page, path: string) => page.evaluate(`history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent("popstate"))`)
  const heading = (page: Page, name: string) => page.getByRole("heading", { level: 1, name }).waitFor()
  const axe = async (page: Page) => expect(await accessibilityProblems(page)).toEqual([])

  it("filters the catalogue through the URL and saves a model preference", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/models?provider=direct_b")
    await heading(page, "Models")
    await expect(page.getByRole("link", { name: "Models" }).first().getAttribute("aria-current")).resolves.toBe("page")
    const rows = page.locator("[data-testid=catalogue] tbody tr")
    await rows.first().waitFor()
    expect(new Set(await rows.locator('td[data-label="Provider"]').allTextContents())).toEqual(new Set(["direct_b"]))
    await page.getByLabel("Provider").selectOption("direct_c")
    await page.waitForURL(/provider=direct_c/)
    await page.locator('tr[data-model-id="gemini-2.5-pro"]').waitFor()
    expect(await page.locator('tr[data-model-id="gpt-5"]').count()).toBe(0)
    await axe(page)

    // Policy evaluation: gpt-4o turned off and saved.
    await page.getByLabel("Feature").selectOption("policy")
    await page.waitForURL(/feature=policy/)
    const gpt4o = page.getByRole("group", { name: "Models enabled for policy evaluation" }).getByRole("checkbox", { name: /gpt-4o$/ })
    await gpt4o.uncheck()
    await page.getByRole("button", { name: "Save policy evaluation models" }).click()
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    const saved = await call(server.url, "GET", "/api/v1/models/policy-preferences", { token: org.token })
    expect(saved.body.disabled_models).toEqual(["gpt-4o"])
    await page.getByLabel("Feature").selectOption("chat")
    await page.getByRole("button", { name: "Save chat models" }).waitFor()
    await axe(page)
    await page.close()
    expect(problems).toEqual([])
  })

  it("adds a provider credential whose secret never comes back, and deletes it after asking", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/provider-credentials")
    await heading(page, "Provider credentials")
    const row = page.locator('tr[data-provider="direct_a"]')
    await expect.poll(() => row.locator('td[data-label="Configured"]').textContent()).toBe("no")
    await axe(page)
    await row.getByRole("button", { name: "Add credentials for direct_a" }).click()
    await page.waitForURL(/provider=direct_a/)
    const secretField = page.getByLabel(/^API key/)
    expect(await secretField.getAttribute("type")).toBe("password")
    expect(await secretField.getAttribute("autocomplete")).toBe("off")
    await secretField.fill(SECRET)
    await page.getByRole("button", { name: "Save credentials" }).click()
    await page.getByRole("status").filter({ hasText: "Credentials for direct_a saved." }).waitFor()
    await expect.poll(() => row.locator('td[data-label="Configured"]').textContent()).toBe("yes")
    expect(await secretField.inputValue()).toBe("")
    expect(await page.content()).not.toContain(SECRET)
    expect(await page.evaluate<string>("JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + location.href")).not.toContain(SECRET)
    await page.reload()
    await row.waitFor()
    expect(await page.content()).not.toContain(SECRET)
    const listed = await call(server.url, "GET", "/api/v1/provider-credentials", { token: org.token })
    expect(listed.text).not.toContain(SECRET)
    expect(listed.body.providers.find((entry: { slug: string }) => entry.slug === "direct_a").configured).toBe(true)

    await row.getByRole("button", { name: "Delete" }).click()
    await row.getByRole("button", { name: "Yes, delete" }).click()
    await page.getByRole("status").filter({ hasText: "Credentials for direct_a deleted." }).waitFor()
    await expect.poll(() => row.locator('td[data-label="Configured"]').textContent()).toBe("no")
    await page.close()
    expect(problems).toEqual([])
  })

  it("registers a custom model, tests it against a local endpoint, and deletes it; another organization's id is not found", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/custom-models")
    await heading(page, "Custom models")
    await page.getByText("No custom models yet.").waitFor()
    await axe(page)
    await page.getByLabel("Name").fill("Local approver")
    await page.getByLabel("Model id").fill("local-approver")
    await page.getByLabel("Endpoint URL").fill(`${llm.url}/approve/v1`)
    const auth = page.getByLabel("Authorization header value (optional)")
    expect(await auth.getAttribute("type")).toBe("password")
    await auth.fill("Bearer local-model-token-abc123")
    await page.getByRole("button", { name: "Register model" }).click()
    await page.waitForURL(/\/dashboard\/custom-models\/[^/]+$/)
    const modelId = decodeURIComponent(page.url().split("/").pop()!)
    await heading(page, "Local approver")
    await page.getByText("set (hidden)").waitFor()
    expect(await page.content()).not.toContain("local-model-token-abc123")

    await page.getByRole("button", { name: "Test" }).click()
    const result = page.locator('[data-test-status="ok"]')
    await result.waitFor()
    await result.getByText("APPROVE").waitFor()
    expect(llm.calls.some((entry) => entry.headers.authorization === "Bearer local-model-token-abc123")).toBe(true)
    await axe(page)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-platform-custom-model.png"), fullPage: true })

    // Another organization's model: its id here answers not found, never its data.
    const theirs = await call(server.url, "POST", "/api/v1/models/custom", {
      token: other.token,
      body: { name: "Their model", model_id: "theirs", endpoint_url: `${llm.url}/deny/v1` }
    })
    expect(theirs.status).toBe(201)
    await go(page, `/dashboard/custom-models/${theirs.body.id}`)
    await heading(page, "Custom model not found")
    await page.getByRole("alert").filter({ hasText: "Not found" }).waitFor()
    expect(await page.content()).not.toContain("Their model")

    await go(page, "/dashboard/custom-models")
    const row = page.locator(`tr[data-custom-model="${modelId}"]`)
    await row.waitFor()
    await expect.poll(() => row.locator(".status").textContent()).toBe("ok")
    await row.getByRole("button", { name: "Delete" }).click()
    await row.getByRole("button", { name: "Yes, delete" }).click()
    await page.getByText("No custom models yet.").waitFor()
    expect((await call(server.url, "GET", `/api/v1/models/custom/${modelId}`, { token: org.token })).status).toBe(404)
    await page.close()
    expect(problems).toEqual([])
  })

  it("turns a flag on for the organization and administers flags with a key held in memory only", async () => {
    const created = await call(server.url, "POST", "/api/v1/admin/feature-flags", {
      headers: { "x-admin-key": ADMIN_KEY },
      body: { key: "dashboard_demo", description: "A demo flag", enabled_global: false }
    })
    expect(created.status).toBe(201)
    const page = await newPage()
    await signIn(page, org, "/dashboard/flags")
    await heading(page, "Feature flags")
    const demo = page.locator('tr[data-flag="dashboard_demo"]')
    await expect.poll(() => demo.locator('td[data-label="State"]').textContent()).toBe("Off")
    await demo.getByRole("button", { name: "Turn on dashboard_demo" }).click()
    await demo.getByRole("button", { name: "Turn off dashboard_demo" }).waitFor()
    await expect.poll(() => demo.locator('td[data-label="State"]').textContent()).toBe("On")
    expect((await call(server.url, "GET", "/api/v1/feature-flags", { token: org.token })).body.flags.dashboard_demo).toBe(true)
    await axe(page)

    // A wrong key is refused in words (and the user stays signed in).
    const keyField = page.getByLabel("Administration key")
    expect(await keyField.getAttribute("type")).toBe("password")
    await keyField.fill("not-the-key")
    await page.getByRole("button", { name: "Use key" }).click()
    await page.getByRole("alert").filter({ hasText: "administration key was refused" }).waitFor()
    await page.getByRole("button", { name: "Forget key" }).click()
    await page.getByLabel("Administration key").fill(ADMIN_KEY)
    await page.getByRole("button", { name: "Use key" }).click()
    const item = page.locator('li[data-admin-flag="dashboard_demo"]')
    await item.getByText("1 (yours included)").waitFor()
    await page.getByLabel("Key", { exact: true }).fill("dashboard_second")
    await page.getByRole("button", { name: "Create flag" }).click()
    await page.locator('li[data-admin-flag="dashboard_second"]').waitFor()
    await axe(page)
    const stored = await page.evaluate<string>("JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + location.href")
    expect(stored).not.toContain(ADMIN_KEY)
    await page.locator('li[data-admin-flag="dashboard_second"]').getByRole("button", { name: "Delete" }).click()
    await page.getByRole("button", { name: "Yes, delete" }).click()
    await page.locator('li[data-admin-flag="dashboard_second"]').waitFor({ state: "detached" })
    // A reload forgets the key.
    await page.reload()
    await page.getByLabel("Administration key").waitFor()
    await page.close()
    expect(problems).toEqual([])
  })

  it("configures SAML single sign-on, enforces it after asking, and removes it", async () => {
    expect((await call(server.url, "PUT", `/api/v1/admin/orgs/${org.orgUuid}/plan`, { headers: { "x-admin-key": ADMIN_KEY }, body: { plan: "business" } })).status).toBe(200)
    const page = await newPage()
    await signIn(page, org, "/dashboard/sso")
    await heading(page, "Single sign-on")
    await page.locator('[data-sso-enabled="false"]').waitFor()
    await axe(page)
    await page.getByLabel("Identity provider metadata (XML)").fill(metadataXml("https://idp.example.test/metadata"))
    await page.getByRole("button", { name: "Configure SAML" }).click()
    await page.getByRole("status").filter({ hasText: "SAML single sign-on configured." }).waitFor()
    await page.locator('[data-sso-enabled="true"]').getByText("https://idp.example.test/metadata").waitFor()
    await page.getByRole("button", { name: "Enforce" }).click()
    await page.getByRole("button", { name: "Yes, enforce" }).click()
    await page.getByRole("status").filter({ hasText: "Single sign-on is now enforced." }).waitFor()
    expect((await call(server.url, "GET", "/api/v1/sso", { token: org.token })).body.enforced).toBe(true)
    await axe(page)
    await page.getByRole("button", { name: "Remove" }).click()
    await page.getByRole("button", { name: "Yes, remove" }).click()
    await page.locator('[data-sso-enabled="false"]').waitFor()
    expect((await call(server.url, "GET", "/api/v1/sso", { token: org.token })).body.enabled).toBe(false)
    await page.close()
    expect(problems).toEqual([])
  })

  it("marks a text's findings per type (keyboard only) and shows a file before and after", async () => {
    const page = await newPage()
    await signIn(page, org, "/dashboard/sanitize?mode=tokenize")
    await heading(page, "Sanitize")
    await expect(page.getByLabel("Mode").inputValue()).resolves.toBe("tokenize")
    await axe(page)

    // Keyboard only: from the heading, Tab to the text, type, Tab to the button, Enter.
    await tabTo(page, "sanitize-content")
    await page.keyboard.type(`Write to ${EMAIL} and charge card ${CARD} tomorrow.`)
    for (let i = 0; i < 5 && (await page.evaluate("document.activeElement?.textContent")) !== "Sanitize text"; i++) await page.keyboard.press("Tab")
    await page.keyboard.press("Enter")
    const result = page.locator(".sanitize-result").first()
    await result.getByRole("heading", { name: "Result" }).waitFor()
    await expect.poll(() => page.evaluate("document.activeElement?.classList.contains('sanitize-result')")).toBe(true)

    const yours = page.getByRole("region", { name: "Your text with the findings marked" })
    const email = yours.locator("mark.finding-email-address")
    await expect.poll(() => email.textContent()).toBe(`[email_address: ${EMAIL}]`)
    await expect(email.getAttribute("title")).resolves.toBe("email_address")
    const card = yours.locator('mark[data-type="credit_card"]')
    await expect(card.innerText()).resolves.toContain(CARD)
    // Each type has its own colour, named in the legend.
    expect(await email.getAttribute("class")).not.toBe(await card.getAttribute("class"))
    await page.locator('.findings-legend tr[data-finding="email_address"]').waitFor()
    await page.locator('.findings-legend tr[data-finding="credit_card"]').waitFor()
    const output = page.getByRole("region", { name: "Sanitized output" })
    expect(await output.innerText()).not.toContain(EMAIL)
    await output.locator('mark[data-type="email_address"]').getByText(/<EMAIL_ADDRESS_\d+>/).waitFor()
    await axe(page)

    // Redact mode through the URL: markers marked in the output.
    await page.getByLabel("Mode").selectOption("redact")
    await page.waitForURL((url) => !url.search.includes("mode="))
    await page.getByRole("button", { name: "Sanitize text" }).click()
    await output.locator('mark[data-type="email_address"]').getByText("[REDACTED_EMAIL_ADDRESS]").waitFor()

    // A file: an image with an e-mail address, blacked out; before and after drawn; the cleaned file downloaded.
    const image = await textImage([`Contact ${EMAIL} today`])
    await page.getByLabel(/^File \(/).setInputFiles({ name: "contact.png", mimeType: "image/png", buffer: image })
    await page.getByLabel("Also black out text found in the pixels (images and DICOM)").check()
    await page.getByRole("button", { name: "Sanitize file" }).click()
    const fileResult = page.locator(".sanitize-result").filter({ hasText: "Result for contact.png" })
    await fileResult.waitFor({ timeout: 30_000 })
    await fileResult.getByRole("img", { name: "The original contact.png" }).waitFor()
    await fileResult.getByRole("img", { name: "The sanitized contact.png" }).waitFor()
    await fileResult.locator('tr[data-finding="email_address"]').waitFor()
    const [download] = await Promise.all([page.waitForEvent("download"), fileResult.getByRole("button", { name: "Download sanitized file" }).click()])
    expect(download.suggestedFilename()).toBe("sanitized_contact.png")
    await axe(page)
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-platform-sanitize.png"), fullPage: true })

    // Too large: refused before anything is sent, the limit said.
    const uploads: Array<string> = []
    page.on("request", (request) => request.url().includes("/sanitize/file") && uploads.push(request.url()))
    const huge = join(mkdtempSync(join(tmpdir(), "platform-upload-")), "huge.pdf")
    writeFileSync(huge, "%PDF-1.7\n")
    truncateSync(huge, 50 * 1024 * 1024 + 1)
    await page.getByLabel(/^File \(/).setInputFiles(huge)
    await page.getByRole("button", { name: "Sanitize file" }).click()
    await page.getByRole("alert").filter({ hasText: "up to 50 MB" }).waitFor()
    expect(uploads).toEqual([])
    rmSync(dirname(huge), { recursive: true, force: true })
    await page.close()
    expect(problems).toEqual([])
  }, 60_000)
})

/**
 * Headless Debian Chromium for the dashboard's browser tests (playwright-core): one persistent
 * context per test file, pages that record what must never happen (CSP violations and other console
 * errors, script errors, requests to another origin), and sign-in through the page.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll } from "vitest"

export const CHROMIUM = "/usr/bin/chromium"
export const ARTIFACTS = resolve(import.meta.dirname, "..", "artifacts")

/**
 * Whether the browser is installed; says so when it is not, so a skip is never silent. Under CI a
 * missing browser fails the run instead: a skipped page suite must not pass for a green one.
 */
export const chromiumAvailable = (what: string) => {
  const available = existsSync(CHROMIUM)
  if (!available && /^(1|true|yes|on)$/i.test(process.env.CI ?? "")) throw new Error(`${CHROMIUM} not found under CI: ${what} cannot run`)
  if (!available) console.log(`${CHROMIUM} not found: skipping ${what}`)
  return available
}

export interface BrowserOptions {
  readonly viewport?: { readonly width: number; readonly height: number }
  readonly acceptDownloads?: boolean
  /** Console errors for answers the test provokes on purpose (default 401 and 404). */
  readonly expectedStatuses?: RegExp
}

/** Inside a `describe`: launches Chromium before its tests and closes it after. */
export const useChromium = (server: { readonly url: string }, options: BrowserOptions = {}) => {
  const profile = mkdtempSync(join(tmpdir(), "dashboard-chromium-"))
  const expected = options.expectedStatuses ?? /status of 40[14]/
  const problems: Array<string> = []
  let context: BrowserContext | undefined

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads: options.acceptDownloads ?? false,
      viewport: options.viewport ?? { width: 1280, height: 800 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    })
  }, 60_000)

  afterAll(async () => {
    await context?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  const newPage = async (): Promise<Page> => {
    const page = await context!.newPage()
    const origin = new URL(server.url)
    page.on("console", (message) => {
      if (message.type() === "error" && !expected.test(message.text())) problems.push(`console: ${message.text()}`)
    })
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
    page.on("request", (request) => {
      const url = new URL(request.url())
      if (url.host !== origin.host && url.protocol !== "blob:") problems.push(`request to another origin: ${request.url()}`)
    })
    return page
  }

  /** Opens `path` signed out, signs in on the page it is sent to, and (unless told not to) waits for the live socket. */
  const signIn = async (page: Page, who: { readonly email: string; readonly password: string }, path = "/dashboard", waitForLive = true) => {
    await page.goto(server.url + path)
    await page.waitForURL(/\/dashboard\/sign-in\?next=/)
    await page.getByLabel("E-mail", { exact: true }).fill(who.email)
    await page.getByLabel("Password").fill(who.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    if (waitForLive) await page.getByRole("status", { name: "Connection" }).filter({ hasText: /^Live$/ }).waitFor({ timeout: 5_000 })
  }

  /** The browser context itself (permissions, downloads), once launched. */
  const browserContext = () => context!

  return { problems, newPage, signIn, browserContext }
}

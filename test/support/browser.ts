/**
 * Headless Debian Chromium for the dashboard's browser tests (playwright-core): one persistent
 * context per test file, pages that record what must never happen (CSP violations and other console
 * errors, script errors, requests to another origin), and sign-in through the page.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
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
  // CI's second pass (real PostgreSQL and Redis) sets this: the pages were tested in the first pass and
  // read the same API, so running them again would only spend minutes.
  if (process.env.BROWSER_TESTS === "0") {
    console.log(`BROWSER_TESTS=0: skipping ${what}`)
    return false
  }
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

let axeSource: string | undefined

/**
 * The axe-core check of what the page shows now (WCAG 2.1 A and AA rules): answers each violation as
 * "rule: help (selectors)", so a failing test names what to fix. axe is put into the page through the
 * DevTools protocol, which the page's CSP does not govern; the page itself never loads it.
 */
export const accessibilityProblems = async (page: Page, include?: string): Promise<Array<string>> => {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
  await page.evaluate(`${axeSource};0`)
  return page.evaluate(async (scope) => {
    const page = globalThis as unknown as {
      document: unknown
      axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<{ id: string; help: string; nodes: Array<{ target: Array<string> }> }> }> }
    }
    const result = await page.axe.run(scope ?? page.document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    return result.violations.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(" ")).join(", ")})`)
  }, include)
}

/** Presses Tab until the element with `id` has the focus (keyboard-only paths); fails after `limit` presses. */
export const tabTo = async (page: Page, id: string, limit = 80) => {
  for (let i = 0; i < limit; i++) {
    if ((await page.evaluate("document.activeElement?.id")) === id) return
    await page.keyboard.press("Tab")
  }
  if ((await page.evaluate("document.activeElement?.id")) !== id) throw new Error(`Tab never reached #${id}`)
}

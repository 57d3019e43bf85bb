/**
 * Code review in the dashboard, in Chromium: a real review of a pull request (the local GitHub fake
 * and the fake reviewing model) shows a "Code review" section on its action page with a link to the
 * pull request's violations; that page lists them, pages through a long list with the page in the
 * URL and links back to the action. An action that is not a review asks nothing about code review,
 * and another organization reads the same pull request as never reviewed. axe on every page, and no
 * console error or CSP violation anywhere.
 */
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityProblems, chromiumAvailable, useChromium } from "./support/browser.js"
import { call, registerOrg } from "./support/client.js"
import { type Connected, connect, deliverPull, reviewSettled } from "./support/code-review.js"
import { startFakeReviewModel } from "./support/fake-review-model.js"
import { useFixture } from "./support/fixture.js"
import { startGithubFake, unifiedDiff } from "./support/github-fake.js"
import { useServer } from "./support/server.js"

const available = chromiumAvailable("the dashboard code review browser test")

describe.skipIf(!available)("dashboard code review in Chromium", () => {
  const github = useFixture(() => startGithubFake(), (fake) => fake.close())
  const model = useFixture(startFakeReviewModel, (fake) => fake.close())
  // The fakes listen on plain HTTP on loopback; reviews are picked up quickly.
  const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true", CODE_REVIEW_POLL_MS: "50" })
  const org = useFixture(() => registerOrg(server.url, "Reviewed Dashboard"))
  const other = useFixture(() => registerOrg(server.url, "Reviewed Elsewhere"))
  const connected = useFixture(() => connect(server, org, github, model))
  const { problems, newPage, signIn } = useChromium(server)

  const heading = (page: Page, name: string) => page.getByRole("heading", { level: 1, name }).waitFor()
  const axe = async (page: Page) => expect(await accessibilityProblems(page)).toEqual([])
  const go = (page: Page, path: string) => page.evaluate(`history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent("popstate"))`)

  /** Opens the pull request with `added` lines in one file, delivers it, and waits for its review to end. */
  const reviewed = async (repository: Connected, number: number, path: string, added: Array<string>) => {
    const pull = github.setPull(repository.repository, { number, diff: unifiedDiff([{ path, added }]) })
    const accepted = await deliverPull(server, repository, pull)
    expect(accepted.status, accepted.text).toBe(202)
    const read = await reviewSettled(server, org.key, repository.repository, number)
    expect(read.body.pull_request.status).toBe("completed")
    return { pull, read }
  }

  it("links a review's action to its violations, and the violations back to the action", async () => {
    const { pull, read } = await reviewed(connected, 5, "src/keys.ts", ["const AWS_SECRET = 'AKIA-not-real'", "// TODO rotate", "export const ok = 1"])
    const actionUuid = read.body.pull_request.action_uuid as string
    const name = `${connected.repository}#5`

    const page = await newPage()
    const asked: Array<string> = []
    page.on("request", (request) => {
      if (request.url().includes("/api/v1/code-review/")) asked.push(request.url())
    })
    await signIn(page, org, `/dashboard/actions/${actionUuid}`)
    await heading(page, "code_review.github.review")
    const section = page.getByRole("region", { name: "Code review" })
    await section.waitFor()
    const facts = section.getByRole("definition")
    await expect.poll(() => facts.allTextContents()).toEqual([name, pull.head_sha.slice(0, 7), "completed", "1 critical, 1 warning", "not merged"])
    expect(asked.some((url) => url.endsWith(`/api/v1/code-review/actions/${actionUuid}`))).toBe(true)
    await axe(page)

    await section.getByRole("link", { name: `Violations of ${name}` }).click()
    const [owner, repo] = connected.repository.split("/")
    await page.waitForURL(new RegExp(`/dashboard/code-review/${owner}/${repo}/5$`))
    await heading(page, `Violations of ${name}`)
    await page.getByText("The repository is connected to your organization's code review.").waitFor()
    const rows = page.locator("[data-testid=violations] tbody tr")
    await rows.first().waitFor()
    const cells = (label: string) => rows.locator(`td[data-label="${label}"]`).allTextContents()
    const findings = read.body.data as Array<{ severity: string; file: string; line: number | null; finding: string }>
    expect(findings.map((v) => [v.severity, `${v.file}:${v.line}`])).toEqual([
      ["critical", "src/keys.ts:1"],
      ["warning", "src/keys.ts:2"]
    ])
    expect(await cells("Severity")).toEqual(["critical", "warning"])
    expect(await cells("Where")).toEqual(["src/keys.ts:1", "src/keys.ts:2"])
    expect(await cells("Category")).toEqual(["Security", "Code quality"])
    expect(await cells("Finding")).toEqual(findings.map((v) => v.finding))
    expect(await cells("Blocks merge")).toEqual(["yes", "no"])
    const summary = page.getByRole("region", { name: "Pull request" })
    await summary.getByText("completed").waitFor()
    await summary.getByText(pull.head_sha.slice(0, 7)).waitFor()
    await axe(page)

    // Back to the review's action from the summary.
    await summary.getByRole("link", { name: actionUuid }).click()
    await page.waitForURL(new RegExp(`/dashboard/actions/${actionUuid}$`))
    await heading(page, "code_review.github.review")
    await page.close()
    expect(problems).toEqual([])
  })

  it("pages through a long list with the page in the URL; a clean review says so", async () => {
    const todos = Array.from({ length: 53 }, (_, i) => `// TODO item ${i + 1}`)
    await reviewed(connected, 8, "src/todo.ts", todos)
    await reviewed(connected, 9, "README.md", ["Hello"])
    const [owner, repo] = connected.repository.split("/")

    const page = await newPage()
    await signIn(page, org, `/dashboard/code-review/${owner}/${repo}/8`)
    await heading(page, `Violations of ${connected.repository}#8`)
    const rows = page.locator("[data-testid=violations] tbody tr")
    await expect.poll(() => rows.count()).toBe(50)
    const pager = page.getByRole("navigation", { name: "Violations pages" })
    await pager.getByText("1–50 of 53").waitFor()
    await pager.getByRole("link", { name: "Next" }).click()
    await page.waitForURL(/\/8\?page=2$/)
    await pager.getByText("51–53 of 53").waitFor()
    await expect.poll(() => rows.locator('td[data-label="Where"]').allTextContents()).toEqual(["src/todo.ts:51", "src/todo.ts:52", "src/todo.ts:53"])
    await axe(page)

    await go(page, `/dashboard/code-review/${owner}/${repo}/9`)
    await heading(page, `Violations of ${connected.repository}#9`)
    await page.getByText("No violations.").waitFor()
    expect(await page.locator("[data-testid=violations]").count()).toBe(0)
    await axe(page)
    await page.close()
    expect(problems).toEqual([])
  })

  it("shows no code review section for other actions, and asks nothing about one", async () => {
    const authorized = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "invoice.pay", details: "pay 12 EUR", agent_id: "billing-bot" } })
    expect(authorized.status, authorized.text).toBe(201)
    const page = await newPage()
    const asked: Array<string> = []
    page.on("request", (request) => {
      if (request.url().includes("/api/v1/code-review/")) asked.push(request.url())
    })
    // The explanation is loaded by the same render that would ask about a review, so once it is asked for, so would the review have been.
    const explanation = page.waitForRequest((request) => request.url().includes(`/api/v1/actions/${authorized.body.action_uuid}/explanation`))
    await signIn(page, org, `/dashboard/actions/${authorized.body.action_uuid}`)
    await heading(page, "invoice.pay")
    await explanation
    expect(await page.getByRole("region", { name: "Code review" }).count()).toBe(0)
    expect(asked).toEqual([])
    await axe(page)
    await page.close()
    expect(problems).toEqual([])
  })

  it("another organization's user reads the pull request as never reviewed", async () => {
    const { read } = await reviewed(connected, 12, "src/leak.ts", ["const AWS_SECRET = 'AKIA-other'"])
    expect(read.body.data).toHaveLength(1)
    const [owner, repo] = connected.repository.split("/")
    const page = await newPage()
    await signIn(page, other, `/dashboard/code-review/${owner}/${repo}/12`)
    await heading(page, `Violations of ${connected.repository}#12`)
    await page.getByText("Not reviewed yet.").waitFor()
    await page.getByText("The repository is not connected to your organization's code review.").waitFor()
    expect(await page.locator("[data-testid=violations]").count()).toBe(0)
    expect(await page.content()).not.toContain("AKIA-other")
    expect(await page.content()).not.toContain(read.body.pull_request.action_uuid)
    await axe(page)
    await page.close()
    expect(problems).toEqual([])
  })
})

/**
 * The test fakes for code review (test/support/github-fake.ts, test/support/fake-review-model.ts),
 * exercised directly over HTTP: the diff/JSON negotiation, credentials, GitHub's line check on
 * review comments, merges and their failures, holding the diff, delivery signatures, and each
 * behaviour of the reviewing model (also through the AI SDK the gateway uses).
 */
import { createHmac } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFakeReviewModel } from "./support/fake-review-model.js"
import { type GithubFake, githubDelivery, newSideLines, pingEvent, pullRequestEvent, startGithubFake, unifiedDiff } from "./support/github-fake.js"

let github: GithubFake
beforeAll(async () => {
  github = await startGithubFake({ token: "ghp_test_token" })
})
afterAll(() => github.close())

const gh = (method: string, path: string, options: { body?: unknown; accept?: string; auth?: string | null } = {}) =>
  fetch(`${github.url}${path}`, {
    method,
    headers: {
      ...(options.auth === null ? {} : { authorization: options.auth ?? `Bearer ${github.token}` }),
      accept: options.accept ?? "application/vnd.github+json",
      ...(options.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })

const DIFF = unifiedDiff([
  { path: "src/a.ts", added: ["const one = 1", "const two = 2"] },
  { path: "src/b.ts", added: ["export {}"] }
])

describe("GitHub fake", () => {
  it("answers the diff as text with the diff media type, else the pull request as JSON", async () => {
    const pull = github.setPull("Acme/Widget", { number: 1, diff: DIFF, author: "alice" })
    const diff = await gh("GET", "/repos/acme/WIDGET/pulls/1", { accept: "application/vnd.github.diff" })
    expect(diff.status).toBe(200)
    expect(diff.headers.get("content-type")).toBe("application/vnd.github.diff; charset=utf-8")
    expect(await diff.text()).toBe(DIFF)
    const v3 = await gh("GET", "/repos/Acme/Widget/pulls/1", { accept: "application/vnd.github.v3.diff" })
    expect(await v3.text()).toBe(DIFF)

    const json = await gh("GET", "/repos/Acme/Widget/pulls/1")
    expect(json.headers.get("content-type")).toContain("application/json")
    expect(await json.json()).toMatchObject({
      number: 1,
      state: "open",
      draft: false,
      merged: false,
      mergeable_state: "clean",
      mergeable: true,
      head: { sha: pull.head_sha, ref: "feature-1" },
      base: { ref: "main" },
      user: { login: "alice" },
      html_url: "https://github.com/Acme/Widget/pull/1"
    })
    expect(pull.head_sha).toMatch(/^[0-9a-f]{40}$/)
    expect((await gh("GET", "/repos/Acme/Widget/pulls/99")).status).toBe(404)
    expect(await (await gh("GET", "/repos/Acme/Other/pulls/1")).json()).toMatchObject({ message: "Not Found" })
    expect((await gh("GET", "/nothing/here")).status).toBe(404)
    const last = github.requests.at(-1)!
    expect(last).toMatchObject({ method: "GET", path: "/nothing/here", authorization: `Bearer ${github.token}` })
  })

  it("refuses a missing or wrong token with 401 and takes `token <t>` as well as Bearer", async () => {
    github.setPull("acme/auth", { number: 2 })
    const wrong = await gh("GET", "/repos/acme/auth/pulls/2", { auth: "Bearer nope" })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toMatchObject({ message: "Bad credentials" })
    expect((await gh("GET", "/repos/acme/auth/pulls/2", { auth: null })).status).toBe(401)
    expect((await gh("GET", "/repos/acme/auth/pulls/2", { auth: `token ${github.token}` })).status).toBe(200)
  })

  it("posts commit statuses and validates state and description", async () => {
    const sha = "a".repeat(40)
    const ok = await gh("POST", `/repos/acme/status/statuses/${sha}`, { body: { state: "failure", context: "aira/code-review", description: "2 critical", target_url: "https://x.test/a" } })
    expect(ok.status).toBe(201)
    expect(await ok.json()).toMatchObject({ state: "failure", context: "aira/code-review" })
    expect(github.statuses.at(-1)).toEqual({ repository: "acme/status", sha, state: "failure", context: "aira/code-review", description: "2 critical", target_url: "https://x.test/a" })
    expect((await gh("POST", `/repos/acme/status/statuses/${sha}`, { body: { state: "done" } })).status).toBe(422)
    expect((await gh("POST", `/repos/acme/status/statuses/${sha}`, { body: { state: "success", description: "x".repeat(141) } })).status).toBe(422)
    expect((await gh("POST", `/repos/acme/status/statuses/${sha}`, { body: { state: "success", description: "x".repeat(140) } })).status).toBe(201)
    expect(github.statuses).toHaveLength(2)
  })

  it("accepts review comments only on new-side lines of the diff", async () => {
    const pull = github.setPull("Acme/Reviews", { number: 3, diff: DIFF })
    const post = (body: unknown) => gh("POST", "/repos/acme/reviews/pulls/3/reviews", { body })
    const outside = await post({ event: "COMMENT", body: "b", comments: [{ path: "src/a.ts", line: 3, body: "no such line" }] })
    expect(outside.status).toBe(422)
    expect(await outside.json()).toMatchObject({ message: "Unprocessable Entity", errors: ["Line could not be resolved"] })
    expect((await post({ event: "COMMENT", body: "b", comments: [{ path: "src/c.ts", line: 1, body: "no such file" }] })).status).toBe(422)
    expect((await post({ event: "COMMENT", body: "b", comments: [{ path: "src/a.ts", line: 1, side: "LEFT", body: "old side" }] })).status).toBe(422)
    expect((await post({ event: "MAYBE", body: "b" })).status).toBe(422)
    expect(github.reviews).toHaveLength(0)

    const ok = await post({ commit_id: pull.head_sha, event: "REQUEST_CHANGES", body: "two findings", comments: [{ path: "src/a.ts", line: 2, side: "RIGHT", body: "here" }, { path: "src/b.ts", line: 1, body: "there" }] })
    expect(ok.status).toBe(200)
    const answered = (await ok.json()) as any
    expect(answered).toMatchObject({ state: "CHANGES_REQUESTED", commit_id: pull.head_sha })
    expect(github.reviews).toEqual([
      {
        repository: "Acme/Reviews",
        pull_number: 3,
        id: answered.id,
        commit_id: pull.head_sha,
        event: "REQUEST_CHANGES",
        body: "two findings",
        comments: [
          { path: "src/a.ts", line: 2, side: "RIGHT", body: "here" },
          { path: "src/b.ts", line: 1, side: null, body: "there" }
        ]
      }
    ])
  })

  it("reads new-side lines of hunks with context, removals and offsets", () => {
    const diff = [
      "diff --git a/lib/x.ts b/lib/x.ts",
      "index 1111111..2222222 100644",
      "--- a/lib/x.ts",
      "+++ b/lib/x.ts",
      "@@ -10,4 +10,4 @@ export const x = () => {",
      " keep 10",
      "-gone",
      "+added 11",
      " keep 12",
      "",
      "\\ No newline at end of file",
      "@@ -40 +40,2 @@",
      "-old",
      "+new 40",
      "+new 41",
      "diff --git a/old.ts b/old.ts",
      "deleted file mode 100644",
      "--- a/old.ts",
      "+++ /dev/null",
      "@@ -1,1 +0,0 @@",
      "-bye",
      ""
    ].join("\n")
    const lines = newSideLines(diff)
    expect([...(lines.get("lib/x.ts") ?? [])].sort((a, b) => a - b)).toEqual([10, 11, 12, 13, 40, 41])
    expect([...(lines.get("old.ts") ?? [])]).toEqual([])
  })

  it("merges once, then 405; 409 on another head sha; failMerge answers its status once", async () => {
    const pull = github.setPull("acme/merge", { number: 4 })
    const merge = (body: unknown) => gh("PUT", "/repos/acme/merge/pulls/4/merge", { body })
    const moved = await merge({ merge_method: "squash", sha: "b".repeat(40) })
    expect(moved.status).toBe(409)
    expect(await moved.json()).toEqual({ message: "Head branch was modified. Review and try the merge again." })

    github.failMerge("ACME/merge", 4, 405)
    const refused = await merge({ merge_method: "squash", sha: pull.head_sha })
    expect(refused.status).toBe(405)
    expect(await refused.json()).toEqual({ message: "Pull Request is not mergeable" })
    expect(github.pull("acme/merge", 4)?.merged).toBe(false)

    const ok = await merge({ merge_method: "squash", sha: pull.head_sha })
    expect(ok.status).toBe(200)
    const answered = (await ok.json()) as any
    expect(answered).toMatchObject({ merged: true, message: "Pull Request successfully merged" })
    expect(answered.sha).toMatch(/^[0-9a-f]{40}$/)
    expect(github.pull("acme/merge", 4)).toMatchObject({ merged: true, merge_commit_sha: answered.sha })
    expect(await (await gh("GET", "/repos/acme/merge/pulls/4")).json()).toMatchObject({ state: "closed", merged: true })

    expect((await merge({ merge_method: "squash" })).status).toBe(405)
    expect(github.merges.map((attempt) => attempt.status)).toEqual([409, 405, 200, 405])
    expect(github.merges[2]).toEqual({ repository: "acme/merge", pull_number: 4, merge_method: "squash", sha: pull.head_sha, status: 200 })

    github.setPull("acme/merge", { number: 5 })
    github.failMerge("acme/merge", 5, 409)
    expect((await gh("PUT", "/repos/acme/merge/pulls/5/merge", { body: {} })).status).toBe(409)
    expect((await gh("PUT", "/repos/acme/merge/pulls/5/merge", { body: {} })).status).toBe(200)
  })

  it("holds diff requests until released and tells when one arrived", async () => {
    const first = github.setPull("acme/hold", { number: 6, diff: DIFF })
    const release = github.holdDiff("acme/hold", 6)
    let settled = false
    const pending = gh("GET", "/repos/acme/hold/pulls/6", { accept: "application/vnd.github.diff" }).then(async (reply) => {
      settled = true
      return reply.text()
    })
    await github.diffRequested("acme/hold", 6)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(settled).toBe(false)
    const moved = unifiedDiff([{ path: "src/moved.ts", added: ["moved"] }])
    github.setPull("acme/hold", { number: 6, head_sha: "c".repeat(40), diff: moved })
    expect(github.pull("acme/hold", 6)).toMatchObject({ head_sha: "c".repeat(40), head_ref: first.head_ref })
    release()
    expect(await pending).toBe(moved)
    // Released: later requests pass at once, and a request that already arrived resolves a later wait.
    expect(await (await gh("GET", "/repos/acme/hold/pulls/6", { accept: "application/vnd.github.diff" })).text()).toBe(moved)
    await github.diffRequested("acme/hold", 6)
  })

  it("signs deliveries like GitHub and builds event payloads", () => {
    const pull = github.setPull("Acme/Hooks", { number: 7, draft: true })
    const payload = pullRequestEvent("opened", "Acme/Hooks", pull) as any
    expect(payload).toMatchObject({
      action: "opened",
      number: 7,
      pull_request: { number: 7, draft: true, state: "open", head: { sha: pull.head_sha, ref: pull.head_ref }, base: { ref: "main" }, user: { login: "octocat" } },
      repository: { full_name: "Acme/Hooks", name: "Hooks", owner: { login: "Acme" } },
      sender: { login: "octocat" }
    })
    const delivery = githubDelivery("s3cret-webhook-secret", "pull_request", payload)
    expect(JSON.parse(delivery.body)).toEqual(payload)
    expect(delivery.headers["X-Hub-Signature-256"]).toBe(`sha256=${createHmac("sha256", "s3cret-webhook-secret").update(delivery.body).digest("hex")}`)
    expect(delivery.headers["X-GitHub-Event"]).toBe("pull_request")
    expect(delivery.headers["X-GitHub-Delivery"]).toMatch(/^[0-9a-f-]{36}$/)
    expect(delivery.headers["content-type"]).toBe("application/json")
    expect(delivery.headers["user-agent"]).toBe("GitHub-Hookshot/test")
    expect(githubDelivery("s", "ping", {}).headers["X-GitHub-Delivery"]).not.toBe(githubDelivery("s", "ping", {}).headers["X-GitHub-Delivery"])

    const fixed = githubDelivery("s", "ping", pingEvent("Acme/Hooks"), { deliveryId: "d-1", signature: "sha256=bad" })
    expect(fixed.headers).toMatchObject({ "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": "sha256=bad" })
    expect(JSON.parse(fixed.body)).toMatchObject({ zen: expect.any(String), hook_id: expect.any(Number), repository: { full_name: "Acme/Hooks" } })
    expect("X-Hub-Signature-256" in githubDelivery("s", "ping", pingEvent(), { signature: null }).headers).toBe(false)
    expect("repository" in (pingEvent() as object)).toBe(false)
  })
})

describe("fake review model", () => {
  const markers = unifiedDiff([
    { path: "src/keys.ts", added: ["const AWS_SECRET = 'abc'", "const fine = 1", "let password = 'x'"] },
    {
      path: "src/users.ts",
      added: ["console.log(user.email)", "const ssn = row.ssn", "try { go() } catch {}", "for (const id of ids) await load(id)", "// TODO tidy", "// GLOBAL_FINDING"]
    }
  ])

  /** A request shaped like the AI SDK's structured-output call; the diff sits inside the prompt text. */
  const ask = async (url: string, behaviour: string, diff: string) => {
    const reply = await fetch(`${url}/${behaviour}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "reviewer-1",
        response_format: { type: "json_schema", json_schema: { schema: { type: "object" }, strict: true, name: "review" } },
        messages: [
          { role: "system", content: "You review code. Report violations." },
          { role: "user", content: `Repository acme/x, pull request 1.\n\n${diff}\nEnd of diff.` }
        ]
      })
    })
    const body = (await reply.json()) as any
    return { status: reply.status, body }
  }

  it("reviews: one violation per marked added line, with new-side path and line, plus GLOBAL_FINDING", async () => {
    const model = await startFakeReviewModel()
    try {
      const { status, body } = await ask(model.url, "review", markers)
      expect(status).toBe(200)
      expect(body).toMatchObject({ object: "chat.completion", model: "reviewer-1", choices: [{ message: { role: "assistant" }, finish_reason: "stop" }] })
      expect(body.usage.total_tokens).toBeGreaterThan(0)
      const { violations } = JSON.parse(body.choices[0].message.content)
      expect(violations.map((v: any) => [v.file, v.line, v.category, v.severity])).toEqual([
        ["src/keys.ts", 1, "security", "critical"],
        ["src/keys.ts", 3, "security", "critical"],
        ["src/users.ts", 1, "data_protection", "critical"],
        ["src/users.ts", 2, "data_protection", "critical"],
        ["src/users.ts", 3, "error_handling", "warning"],
        ["src/users.ts", 4, "performance", "warning"],
        ["src/users.ts", 5, "code_quality", "warning"],
        ["src/users.ts", null, "code_quality", "warning"]
      ])
      for (const violation of violations) {
        expect(Object.keys(violation).sort()).toEqual(["category", "description", "file", "finding", "fix", "line", "severity"])
        expect(typeof violation.finding).toBe("string")
        expect(typeof violation.description).toBe("string")
      }
      const clean = await ask(model.url, "review", unifiedDiff([{ path: "a.ts", added: ["for (const x of xs) use(x)", "const y = 2"] }]))
      expect(JSON.parse(clean.body.choices[0].message.content)).toEqual({ violations: [] })
      expect(model.calls.map((call) => call.path)).toEqual(["/review/v1/chat/completions", "/review/v1/chat/completions"])
      expect(model.calls[0]!.body.response_format.type).toBe("json_schema")
    } finally {
      await model.close()
    }
  })

  it("counts new-side lines across context and later hunks", async () => {
    const model = await startFakeReviewModel()
    try {
      const diff = ["diff --git a/m.ts b/m.ts", "--- a/m.ts", "+++ b/m.ts", "@@ -5,3 +5,3 @@", " a", "-b", "+c // TODO", " d", "@@ -20,1 +20,2 @@", " e", "+const AWS_SECRET = 1", "```", "TODO not in the diff"].join("\n")
      const { body } = await ask(model.url, "review", diff)
      const { violations } = JSON.parse(body.choices[0].message.content)
      expect(violations.map((v: any) => [v.file, v.line, v.category])).toEqual([
        ["m.ts", 6, "code_quality"],
        ["m.ts", 21, "security"]
      ])
    } finally {
      await model.close()
    }
  })

  it("answers verdicts, errors, garbage, many and slow", async () => {
    const model = await startFakeReviewModel()
    try {
      const approve = JSON.parse((await ask(model.url, "approve", markers)).body.choices[0].message.content)
      expect(approve).toMatchObject({ decision: "APPROVE", confidence: 0.9, key_factors: [expect.any(String)], reasoning: expect.any(String) })
      expect(JSON.parse((await ask(model.url, "deny", markers)).body.choices[0].message.content).decision).toBe("DENY")

      const failed = await ask(model.url, "error", markers)
      expect(failed.status).toBe(500)
      expect(failed.body.error.message).toBeTypeOf("string")

      const garbage = (await ask(model.url, "garbage", markers)).body.choices[0].message.content
      expect(() => JSON.parse(garbage)).toThrow()

      const many = JSON.parse((await ask(model.url, "many", markers)).body.choices[0].message.content).violations
      expect(many).toHaveLength(250)
      expect(new Set(many.map((v: any) => `${v.file}:${v.line}:${v.category}:${v.severity}`))).toEqual(new Set(["src/keys.ts:1:code_quality:warning"]))

      const started = Date.now()
      const slow = await ask(model.url, "slow/300/review", markers)
      expect(Date.now() - started).toBeGreaterThanOrEqual(280)
      expect(JSON.parse(slow.body.choices[0].message.content).violations).toHaveLength(8)
      expect(model.calls.at(-1)!.path).toBe("/slow/300/review/v1/chat/completions")
    } finally {
      await model.close()
    }
  })

  it("is read by the AI SDK's OpenAI-compatible provider with structured output", async () => {
    const model = await startFakeReviewModel()
    try {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible")
      const { generateText, jsonSchema, Output } = await import("ai")
      const provider = (behaviour: string) => createOpenAICompatible({ name: "custom", baseURL: `${model.url}/${behaviour}/v1`, supportsStructuredOutputs: true })("reviewer-1")
      const schema = jsonSchema<{ violations: Array<{ file: string; line: number | null; category: string }> }>({
        type: "object",
        properties: { violations: { type: "array", items: { type: "object" } } },
        required: ["violations"]
      })
      const review = await generateText({ model: provider("review"), system: "Review.", prompt: `Diff:\n${markers}`, output: Output.object({ schema, name: "review" }), maxRetries: 0 })
      expect(review.output.violations).toHaveLength(8)
      expect(review.usage.totalTokens).toBeGreaterThan(0)
      const sent = model.calls.at(-1)!.body
      expect(sent.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "review" } })
      expect(sent.messages.at(-1)).toMatchObject({ role: "user" })

      const verdict = jsonSchema<{ decision: string }>({ type: "object", properties: { decision: { type: "string" } }, required: ["decision"] })
      const approved = await generateText({ model: provider("approve"), prompt: "Merge?", output: Output.object({ schema: verdict, name: "verdict" }), maxRetries: 0 })
      expect(approved.output.decision).toBe("APPROVE")
    } finally {
      await model.close()
    }
  })
})

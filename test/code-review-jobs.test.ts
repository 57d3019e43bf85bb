/**
 * Code review of pull requests (CONTRACT-sdk-beyond §7) against the real server, a local GitHub
 * (test/support/github-fake.ts) and a reviewing model with structured output
 * (test/support/fake-review-model.ts): signed deliveries queue a review; the job authorizes,
 * reads the diff, asks the model, posts a commit status and one review with inline comments,
 * notarizes, and answers the violations read; every review is an action with a receipt that
 * verifies offline.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { connect, deliver, deliverPull, reviewSettled, verifiedReceipt } from "./support/code-review.js"
import { type FakeReviewModel, startFakeReviewModel } from "./support/fake-review-model.js"
import { type GithubFake, pingEvent, startGithubFake, unifiedDiff } from "./support/github-fake.js"
import { useServer } from "./support/server.js"

const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true", CODE_REVIEW_POLL_MS: "50" })
let github: GithubFake
let model: FakeReviewModel
beforeAll(async () => {
  github = await startGithubFake()
  model = await startFakeReviewModel()
})
afterAll(async () => {
  await github?.close()
  await model?.close()
})

const risky = unifiedDiff([
  { path: "src/config.ts", added: ["export const region = 'eu'", "const AWS_SECRET = 'AKIA-not-real'", "// TODO tidy"] },
  { path: "src/users.ts", added: ["export const show = (user) => {", "  console.log(user.email)", "}"] }
])

describe("code review: the review job", () => {
  it("reviews a pull request: commit status failure, one REQUEST_CHANGES review with inline comments, violations read, receipt verifies offline", async () => {
    const org = await registerOrg(server.url, "Reviewed")
    const connected = await connect(server, org, github, model)
    const pull = github.setPull(connected.repository, { number: 7, diff: risky, author: "mona", base_ref: "main", head_ref: "feature/keys" })

    const accepted = await deliverPull(server, connected, pull)
    expect(accepted.status, accepted.text).toBe(202)
    expect(accepted.body).toMatchObject({ accepted: true, review_uuid: expect.stringMatching(/^crv_/) })

    const read = await reviewSettled(server, org.key, connected.repository, 7)
    expect(read.body.pull_request).toMatchObject({
      repository: connected.repository,
      pull_number: 7,
      head_sha: pull.head_sha,
      status: "completed",
      action_uuid: expect.any(String),
      receipt_uuid: expect.any(String),
      merged: false,
      auto_merged: false
    })
    expect(read.body.repository_connected).toBe(true)
    const findings = read.body.data as Array<Record<string, any>>
    expect(findings.map((v) => [v.file, v.line, v.category, v.severity, v.blocks_merge])).toEqual([
      ["src/config.ts", 2, "security", "critical", true],
      ["src/config.ts", 3, "code_quality", "warning", false],
      ["src/users.ts", 2, "data_protection", "critical", true]
    ])
    for (const violation of findings) {
      expect(violation).toMatchObject({ id: expect.any(String), head_sha: pull.head_sha, review_uuid: accepted.body.review_uuid, created_at: expect.any(String) })
    }
    expect(read.body.violations).toEqual(read.body.data)
    expect(read.body.pagination).toMatchObject({ total: 3 })

    const statuses = github.statuses.filter((status) => status.sha === pull.head_sha)
    expect(statuses).toHaveLength(1)
    expect(statuses[0]).toMatchObject({ state: "failure", context: "aira/code-review", target_url: `${server.url}/dashboard/actions/${read.body.pull_request.action_uuid}` })
    expect(statuses[0].description!.length).toBeLessThanOrEqual(140)
    const reviews = github.reviews.filter((review) => review.pull_number === 7 && review.repository.toLowerCase() === connected.repository.toLowerCase())
    expect(reviews).toHaveLength(1)
    expect(reviews[0].event).toBe("REQUEST_CHANGES")
    expect(reviews[0].commit_id).toBe(pull.head_sha)
    expect(reviews[0].comments.map((comment) => [comment.path, comment.line]).sort()).toEqual([
      ["src/config.ts", 2],
      ["src/config.ts", 3],
      ["src/users.ts", 2]
    ])

    // The review is an action of the code review agent, notarized with what was reviewed.
    const action = await call(server.url, "GET", `/api/v1/actions/${read.body.pull_request.action_uuid}`, { token: org.key })
    expect(action.body).toMatchObject({ action_type: "code_review.github.review", agent_id: "aira-code-review", model_id: connected.model, status: "notarized", outcome: "completed" })
    const signed = await verifiedReceipt(server, read.body.pull_request.action_uuid)
    expect(signed.action_uuid).toBe(read.body.pull_request.action_uuid)
  })

  it("a clean diff: status success, a COMMENT review, no violations", async () => {
    const org = await registerOrg(server.url, "Clean")
    const connected = await connect(server, org, github, model)
    const pull = github.setPull(connected.repository, { number: 3, diff: unifiedDiff([{ path: "README.md", added: ["Hello"] }]) })
    expect((await deliverPull(server, connected, pull, "ready_for_review")).status).toBe(202)
    const read = await reviewSettled(server, org.key, connected.repository, 3)
    expect(read.body.pull_request.status).toBe("completed")
    expect(read.body.data).toEqual([])
    expect(github.statuses.find((status) => status.sha === pull.head_sha)?.state).toBe("success")
    expect(github.reviews.find((review) => review.commit_id === pull.head_sha)?.event).toBe("COMMENT")
  })
})

describe("code review: the webhook receiver", () => {
  it("refuses unknown repositories and bad signatures with one 401; pings; ignores other events; answers redeliveries duplicate", async () => {
    const org = await registerOrg(server.url, "Receiver")
    const connected = await connect(server, org, github, model)
    const pull = github.setPull(connected.repository, { number: 11, diff: unifiedDiff([{ path: "a.ts", added: ["x"] }]) })

    const unknown = await deliver(server, connected.secret, "pull_request", { action: "opened", repository: { full_name: "nobody/nothing" } })
    const wrong = await deliver(server, "not-the-secret-at-all", "ping", pingEvent(connected.repository))
    const missing = await deliver(server, connected.secret, "ping", pingEvent(connected.repository), { signature: null })
    for (const reply of [unknown, wrong, missing]) {
      expect(reply.status, reply.text).toBe(401)
      expect(reply.body).toMatchObject({ code: "UNAUTHORIZED" })
    }
    expect(unknown.body.message).toBe(wrong.body.message)

    expect((await deliver(server, connected.secret, "ping", pingEvent(connected.repository))).body).toMatchObject({ ok: true })
    expect((await deliver(server, "anything", "ping", pingEvent())).body).toMatchObject({ ok: true })
    const closed = await deliverPull(server, connected, pull, "closed")
    expect(closed.status).toBe(200)
    expect(closed.body).toMatchObject({ ignored: true, reason: expect.any(String) })
    const draft = await deliverPull(server, connected, { ...pull, draft: true }, "opened")
    expect(draft.body).toMatchObject({ ignored: true })
    const push = await deliver(server, connected.secret, "push", { repository: { full_name: connected.repository } })
    expect(push.body).toMatchObject({ ignored: true })

    const first = await deliverPull(server, connected, pull, "opened", { deliveryId: "delivery-11" })
    expect(first.status).toBe(202)
    const again = await deliverPull(server, connected, pull, "opened", { deliveryId: "delivery-11" })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ duplicate: true })

    const notJson = await call(server.url, "POST", "/api/v1/webhooks/github", { raw: "{not json", headers: { "content-type": "application/json", "x-github-event": "ping" } })
    expect(notJson.status).toBe(400)
    expect(notJson.body.code).toBe("INVALID_JSON")
    const big = await call(server.url, "POST", "/api/v1/webhooks/github", { raw: JSON.stringify({ pad: "x".repeat(1024 * 1024) }), headers: { "x-github-event": "ping" } })
    expect(big.status).toBe(413)
    await reviewSettled(server, org.key, connected.repository, 11)
  })
})

/**
 * Code review of pull requests (CONTRACT-sdk-beyond §7) against the real server, a local GitHub
 * (test/support/github-fake.ts) and a reviewing model with structured output
 * (test/support/fake-review-model.ts): signed deliveries queue a review; the job authorizes,
 * reads the diff, asks the model, posts a commit status and one review with inline comments,
 * notarizes, and answers the violations read; every review is an action with a receipt that
 * verifies offline.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { connect, deliver, deliverPull, reviewModel, reviewSettled, verifiedReceipt } from "./support/code-review.js"
import { eventually } from "./support/eventually.js"
import { type FakeReviewModel, startFakeReviewModel } from "./support/fake-review-model.js"
import { type GithubFake, pingEvent, startGithubFake, unifiedDiff } from "./support/github-fake.js"
import { createPolicy } from "./support/llm-gateway.js"
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
  { path: "src/users.ts", added: ["export const show = (user) => {", "  console.log(user.email)", "} // GLOBAL_FINDING"] }
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
      ["src/users.ts", 2, "data_protection", "critical", true],
      ["src/users.ts", null, "code_quality", "warning", false]
    ])
    for (const violation of findings) {
      expect(violation).toMatchObject({ id: expect.any(String), head_sha: pull.head_sha, review_uuid: accepted.body.review_uuid, created_at: expect.any(String) })
    }
    expect(read.body.violations).toEqual(read.body.data)
    expect(read.body.pagination).toMatchObject({ total: 4 })

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
    // A finding on no diff line is listed in the review's body instead.
    expect(reviews[0].body).toContain("src/users.ts: **Warning (code_quality)")

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

/** The usage rows of `org` of one kind. */
const metered = (org: { orgUuid: string }, eventType: string) =>
  server.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ subject: string }>`SELECT subject FROM usage_events WHERE org_uuid = ${org.orgUuid} AND event_type = ${eventType}`)
  )

const enableAutoMerge = async (org: { token: string }) => {
  const flag = await call(server.url, "PUT", "/api/v1/feature-flags/github_auto_merge", { token: org.token, body: { enabled: true } })
  expect(flag.status, flag.text).toBe(200)
}

describe("code review: failures and superseding", () => {
  it("a head that moves mid-review supersedes it: its action fails 'superseded', only the new head is posted", async () => {
    const org = await registerOrg(server.url, "Moving head")
    const connected = await connect(server, org, github, model)
    const first = github.setPull(connected.repository, { number: 21, diff: unifiedDiff([{ path: "a.ts", added: ["const AWS_SECRET = 1"] }]) })
    const release = github.holdDiff(connected.repository, 21)
    const queued = await deliverPull(server, connected, first)
    expect(queued.status).toBe(202)
    await github.diffRequested(connected.repository, 21)

    const second = github.setPull(connected.repository, { number: 21, head_sha: "b".repeat(40), diff: unifiedDiff([{ path: "a.ts", added: ["const ok = 1"] }]) })
    const newer = await deliverPull(server, connected, second, "synchronize")
    expect(newer.status).toBe(202)
    expect(newer.body.review_uuid).not.toBe(queued.body.review_uuid)
    release()

    const read = await reviewSettled(server, org.key, connected.repository, 21)
    expect(read.body.pull_request).toMatchObject({ head_sha: second.head_sha, status: "completed" })
    expect(read.body.data).toEqual([])
    // The superseded review's action is closed as failed, and nothing of it reached GitHub.
    const superseded = await eventually(async () => {
      const rows = await server.run(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ action_uuid: string | null; status: string; done: boolean }>`SELECT action_uuid, status, done FROM code_reviews WHERE review_uuid = ${queued.body.review_uuid}`)
      )
      return rows[0]?.done === true ? rows[0] : false
    }, { timeoutMs: 20_000 })
    expect(superseded.status).toBe("superseded")
    const action = await call(server.url, "GET", `/api/v1/actions/${superseded.action_uuid}`, { token: org.key })
    expect(action.body).toMatchObject({ status: "failed", outcome: "failed" })
    await verifiedReceipt(server, superseded.action_uuid as string)
    expect(github.statuses.filter((status) => status.sha === first.head_sha)).toEqual([])
    expect(github.statuses.filter((status) => status.sha === second.head_sha).map((status) => status.state)).toEqual(["success"])
  })

  it("a diff over 1 MiB is not reviewed: status error 'diff too large', the action failed", async () => {
    const org = await registerOrg(server.url, "Big diff")
    const connected = await connect(server, org, github, model)
    const lines = Array.from({ length: 12_000 }, (_, i) => `export const value${i} = "${"x".repeat(80)}"`)
    const pull = github.setPull(connected.repository, { number: 5, diff: unifiedDiff([{ path: "big.ts", added: lines }]) })
    expect(Buffer.byteLength(pull.diff)).toBeGreaterThan(1024 * 1024)
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const read = await reviewSettled(server, org.key, connected.repository, 5)
    expect(read.body.pull_request.status).toBe("failed")
    const status = github.statuses.find((posted) => posted.sha === pull.head_sha)
    expect(status).toMatchObject({ state: "error" })
    expect(status?.description).toMatch(/diff/i)
    const action = await call(server.url, "GET", `/api/v1/actions/${read.body.pull_request.action_uuid}`, { token: org.key })
    expect(action.body).toMatchObject({ status: "failed", outcome: "failed" })
    expect(model.calls.some((sent) => JSON.stringify(sent.body).includes("value11999"))).toBe(false)
  })

  it("a model that fails ends the review failed with status error; no review is posted", async () => {
    const org = await registerOrg(server.url, "Failing model")
    const connected = await connect(server, org, github, model, { behaviour: "error" })
    const pull = github.setPull(connected.repository, { number: 6, diff: unifiedDiff([{ path: "a.ts", added: ["x"] }]) })
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const read = await reviewSettled(server, org.key, connected.repository, 6)
    expect(read.body.pull_request.status).toBe("failed")
    expect(github.statuses.find((posted) => posted.sha === pull.head_sha)?.state).toBe("error")
    expect(github.reviews.find((review) => review.commit_id === pull.head_sha)).toBeUndefined()
    await verifiedReceipt(server, read.body.pull_request.action_uuid)
  })

  it("at most 200 violations are kept", async () => {
    const org = await registerOrg(server.url, "Many")
    const connected = await connect(server, org, github, model, { behaviour: "many" })
    const pull = github.setPull(connected.repository, { number: 8, diff: unifiedDiff([{ path: "a.ts", added: ["x"] }]) })
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const read = await reviewSettled(server, org.key, connected.repository, 8)
    expect(read.body.pull_request.status).toBe("completed")
    expect(read.body.pagination.total).toBe(200)
    expect((await metered(org, "code_review")).map((row) => row.subject)).toEqual([connected.repository])
  })
})

describe("code review: policies", () => {
  it("a policy denying the repository: status error, no model call, the action denied", async () => {
    const org = await registerOrg(server.url, "Denied repo")
    const connected = await connect(server, org, github, model)
    await createPolicy(server, org, { name: "no reviews here", decision: "deny", conditions: [{ field: "context.repository", op: "eq", value: connected.repository }] })
    const pull = github.setPull(connected.repository, { number: 9, diff: unifiedDiff([{ path: "a.ts", added: ["x"] }]) })
    const callsBefore = model.calls.length
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const read = await reviewSettled(server, org.key, connected.repository, 9)
    expect(read.body.pull_request.status).toBe("failed")
    expect(github.statuses.find((posted) => posted.sha === pull.head_sha)).toMatchObject({ state: "error" })
    expect(model.calls.length).toBe(callsBefore)
  })

  it("a policy requiring approval: the review waits, then runs once a human approves", async () => {
    const org = await registerOrg(server.url, "Approved repo")
    const connected = await connect(server, org, github, model)
    await createPolicy(server, org, { name: "a human first", decision: "require_approval", conditions: [{ field: "context.pull_number", op: "eq", value: 10 }] })
    const pull = github.setPull(connected.repository, { number: 10, diff: unifiedDiff([{ path: "a.ts", added: ["// TODO later"] }]) })
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const waiting = await reviewSettled(server, org.key, connected.repository, 10, ["running"])
    const actionUuid = await eventually(async () => {
      const rows = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ action_uuid: string | null }>`SELECT action_uuid FROM code_reviews WHERE org_uuid = ${org.orgUuid}`))
      return rows[0]?.action_uuid ?? false
    })
    expect(waiting.body.pull_request.status).toBe("running")
    expect((await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })).body.status).toBe("pending_approval")
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(github.statuses.find((posted) => posted.sha === pull.head_sha)).toBeUndefined()

    const approved = await call(server.url, "POST", `/api/v1/actions/${actionUuid}/dashboard-approve`, { token: org.token })
    expect(approved.status, approved.text).toBe(200)
    const read = await reviewSettled(server, org.key, connected.repository, 10)
    expect(read.body.pull_request.status).toBe("completed")
    expect(read.body.data.map((v: { category: string }) => v.category)).toEqual(["code_quality"])
    await verifiedReceipt(server, actionUuid)
  })
})

describe("code review: auto-merge", () => {
  const clean = () => unifiedDiff([{ path: "docs.md", added: ["Better docs"] }])

  it("single mode: merged at the reviewed head, an action with a receipt, action.auto_merged recorded, metered", async () => {
    const org = await registerOrg(server.url, "Auto merge")
    const connected = await connect(server, org, github, model, { autoMerge: { enabled: true, merge_method: "rebase" } })
    await enableAutoMerge(org)
    const pull = github.setPull(connected.repository, { number: 30, diff: clean() })
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const read = await eventually(async () => {
      const reply = await call(server.url, "GET", `/api/v1/webhooks/github/violations/${connected.repository}/30`, { token: org.key })
      return reply.body.pull_request?.merged === true ? reply : false
    }, { timeoutMs: 30_000 })
    expect(read.body.pull_request).toMatchObject({ status: "completed", merged: true, auto_merged: true })
    const merge = github.merges.find((attempt) => attempt.pull_number === 30 && attempt.status === 200)
    expect(merge).toMatchObject({ merge_method: "rebase", sha: pull.head_sha })
    const merged = github.pull(connected.repository, 30)!
    const event = await eventually(async () => {
      const rows = await server.run(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ data: any }>`SELECT data FROM events WHERE org_uuid = ${org.orgUuid} AND type = 'action.auto_merged'`)
      )
      return rows[0]?.data ?? false
    })
    const data = typeof event === "string" ? JSON.parse(event) : event
    expect(data).toMatchObject({
      review_action_uuid: read.body.pull_request.action_uuid,
      repository: connected.repository,
      pull_number: 30,
      head_sha: pull.head_sha,
      merge_method: "rebase",
      merge_commit_sha: merged.merge_commit_sha,
      receipt_uuid: expect.any(String)
    })
    const mergeAction = await call(server.url, "GET", `/api/v1/actions/${data.action_uuid}`, { token: org.key })
    expect(mergeAction.body).toMatchObject({ action_type: "code_review.github.merge", agent_id: "aira-code-review", status: "notarized", outcome: "completed" })
    await verifiedReceipt(server, data.action_uuid)
    expect((await metered(org, "auto_merge")).map((row) => row.subject)).toEqual([connected.repository])
  })

  it("no merge with the flag off, with a critical violation, or when GitHub's state is not clean", async () => {
    const org = await registerOrg(server.url, "No merge")
    const connected = await connect(server, org, github, model, { autoMerge: { enabled: true } })
    const flagOff = github.setPull(connected.repository, { number: 31, diff: clean() })
    expect((await deliverPull(server, connected, flagOff)).status).toBe(202)
    await reviewSettled(server, org.key, connected.repository, 31)
    await enableAutoMerge(org)
    const critical = github.setPull(connected.repository, { number: 32, diff: unifiedDiff([{ path: "a.ts", added: ["const AWS_SECRET = 2"] }]) })
    const dirty = github.setPull(connected.repository, { number: 33, diff: clean(), mergeable_state: "dirty" })
    expect((await deliverPull(server, connected, critical)).status).toBe(202)
    expect((await deliverPull(server, connected, dirty)).status).toBe(202)
    await reviewSettled(server, org.key, connected.repository, 32)
    await reviewSettled(server, org.key, connected.repository, 33)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(github.merges.filter((attempt) => [31, 32, 33].includes(attempt.pull_number) && attempt.repository.toLowerCase() === connected.repository.toLowerCase())).toEqual([])
  })

  it("waits while GitHub is still computing mergeability ('unknown'), then merges once it is clean", async () => {
    const org = await registerOrg(server.url, "Computing")
    const connected = await connect(server, org, github, model, { autoMerge: { enabled: true } })
    await enableAutoMerge(org)
    const pull = github.setPull(connected.repository, { number: 36, diff: clean(), mergeable_state: "unknown" })
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const reads = () => github.requests.filter((sent) => sent.method === "GET" && sent.path.endsWith("/pulls/36") && !(sent.accept ?? "").includes("diff")).length
    // The job asks, GitHub still says `unknown`; then it finishes computing.
    await eventually(() => reads() >= 1, { timeoutMs: 30_000 })
    expect(github.pull(connected.repository, 36)?.merged).toBe(false)
    github.setPull(connected.repository, { number: 36, mergeable_state: "clean" })
    await eventually(() => github.pull(connected.repository, 36)?.merged === true, { timeoutMs: 30_000 })
    expect(reads()).toBeGreaterThan(1)
  })

  it("GitHub refusing the merge (405, 409) notarizes the merge failed; the review stays completed", async () => {
    const org = await registerOrg(server.url, "Refused merge")
    const connected = await connect(server, org, github, model, { autoMerge: { enabled: true } })
    await enableAutoMerge(org)
    for (const [number, status] of [
      [34, 405],
      [35, 409]
    ] as const) {
      const pull = github.setPull(connected.repository, { number, diff: clean() })
      github.failMerge(connected.repository, number, status)
      expect((await deliverPull(server, connected, pull)).status).toBe(202)
      const mergeAction = await eventually(async () => {
        const rows = await server.run(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ merge_action_uuid: string | null; done: boolean }>`SELECT merge_action_uuid, done FROM code_reviews WHERE org_uuid = ${org.orgUuid} AND pull_number = ${number}`)
        )
        return rows[0]?.done === true ? rows[0].merge_action_uuid : false
      }, { timeoutMs: 30_000 })
      const action = await call(server.url, "GET", `/api/v1/actions/${mergeAction}`, { token: org.key })
      expect(action.body).toMatchObject({ action_type: "code_review.github.merge", status: "failed", outcome: "failed" })
      const read = await call(server.url, "GET", `/api/v1/webhooks/github/violations/${connected.repository}/${number}`, { token: org.key })
      expect(read.body.pull_request).toMatchObject({ status: "completed", merged: false, auto_merged: false })
    }
  })

  it("vote mode: merged when the vote models approve; a denying or failing model blocks", async () => {
    const org = await registerOrg(server.url, "Vote")
    const approveA = await reviewModel(server, org, model, "approve")
    const approveB = await reviewModel(server, org, model, "approve")
    const deny = await reviewModel(server, org, model, "deny")
    const failing = await reviewModel(server, org, model, "error")
    const connected = await connect(server, org, github, model, { autoMerge: { enabled: true, mode: "vote", vote_models: [approveA, approveB] } })
    await enableAutoMerge(org)
    const settings = (voteModels: ReadonlyArray<string>) =>
      call(server.url, "PUT", "/api/v1/code-review/github", { token: org.token, body: { auto_merge: { enabled: true, mode: "vote", vote_models: voteModels } } })

    const agreed = github.setPull(connected.repository, { number: 40, diff: clean() })
    expect((await deliverPull(server, connected, agreed)).status).toBe(202)
    await eventually(async () => github.pull(connected.repository, 40)?.merged === true, { timeoutMs: 30_000 })

    for (const [number, voters] of [
      [41, [approveA, deny]],
      [42, [approveA, failing]]
    ] as const) {
      expect((await settings(voters)).status).toBe(200)
      const pull = github.setPull(connected.repository, { number, diff: clean() })
      expect((await deliverPull(server, connected, pull)).status).toBe(202)
      await eventually(async () => {
        const rows = await server.run(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ done: boolean }>`SELECT done FROM code_reviews WHERE org_uuid = ${org.orgUuid} AND pull_number = ${number}`)
        )
        return rows[0]?.done === true
      }, { timeoutMs: 30_000 })
      expect(github.pull(connected.repository, number)?.merged).toBe(false)
    }
  })
})

describe("code review: limits and organizations", () => {
  it("120 deliveries a minute per repository, counted after the signature", async () => {
    const org = await registerOrg(server.url, "Busy repo")
    const connected = await connect(server, org, github, model)
    // Unsigned tries do not use up the repository's allowance.
    for (let i = 0; i < 5; i++) expect((await deliver(server, "wrong-secret-wrong", "ping", pingEvent(connected.repository))).status).toBe(401)
    const answers: Array<number> = []
    for (let i = 0; i < 121; i++) answers.push((await deliver(server, connected.secret, "ping", pingEvent(connected.repository))).status)
    expect(answers.slice(0, 120).every((status) => status === 200)).toBe(true)
    const refused = await deliver(server, connected.secret, "ping", pingEvent(connected.repository))
    expect(refused.status).toBe(429)
    expect(refused.body.code).toBe("RATE_LIMIT_EXCEEDED")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("the review an action belongs to: read by its organization, 404 for another and for other actions", async () => {
    const org = await registerOrg(server.url, "Owner of review")
    const other = await registerOrg(server.url, "Other org")
    const connected = await connect(server, org, github, model)
    const pull = github.setPull(connected.repository, { number: 50, diff: unifiedDiff([{ path: "a.ts", added: ["// TODO x"] }]) })
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    const read = await reviewSettled(server, org.key, connected.repository, 50)
    const actionUuid = read.body.pull_request.action_uuid
    const mine = await call(server.url, "GET", `/api/v1/code-review/actions/${actionUuid}`, { token: org.key })
    expect(mine.status, mine.text).toBe(200)
    expect(mine.body).toMatchObject({
      repository: connected.repository,
      pull_number: 50,
      head_sha: pull.head_sha,
      status: "completed",
      action_uuid: actionUuid,
      critical: 0,
      warning: 1,
      merged: false
    })
    expect((await call(server.url, "GET", `/api/v1/code-review/actions/${actionUuid}`, { token: other.key })).status).toBe(404)
    const plain = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "x.y", details: "not a review" } })
    expect((await call(server.url, "GET", `/api/v1/code-review/actions/${plain.body.action_uuid}`, { token: org.key })).status).toBe(404)
    // The other organization's violations read of the same name is empty.
    const theirs = await call(server.url, "GET", `/api/v1/webhooks/github/violations/${connected.repository}/50`, { token: other.key })
    expect(theirs.body).toMatchObject({ data: [], pull_request: null, repository_connected: false })
  })
})

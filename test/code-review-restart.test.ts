/**
 * A review job survives its process (CONTRACT-sdk-beyond §7, "durable; resumed at start-up"): the
 * gateway is killed while the review waits for GitHub's diff; a new process takes the job over
 * once its lease has run out, at the step it had reached (the same action, not a second one), and
 * finishes it with a receipt that verifies offline.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { connect, deliverPull, reviewSettled, verifiedReceipt } from "./support/code-review.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { type FakeReviewModel, startFakeReviewModel } from "./support/fake-review-model.js"
import { type GithubFake, startGithubFake, unifiedDiff } from "./support/github-fake.js"
import { type ServerProcess, spawnServer } from "./support/process.js"
import type { TestServer } from "./support/server.js"

let database: FreshDatabase | undefined
let github: GithubFake
let model: FakeReviewModel
const processes: Array<ServerProcess> = []
let env: Record<string, string>

beforeAll(async () => {
  database = await freshDatabaseUrl()
  github = await startGithubFake()
  model = await startFakeReviewModel()
  env = {
    DATABASE_URL: database.url,
    DATA_DIR: UNUSED_DATA_DIR,
    REDIS_URL: "",
    // Sealed secrets (the GitHub token, receipt keys) must open after the restart.
    MASTER_KEY: "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0",
    RATE_LIMIT_PER_MINUTE: "100000",
    OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
    OUTBOUND_ALLOW_HTTP: "true",
    CODE_REVIEW_POLL_MS: "50",
    CODE_REVIEW_LEASE_MS: "1500",
    LOG_LEVEL: "error"
  }
}, 60_000)

afterAll(async () => {
  for (const process of processes) await process.stop()
  await github?.close()
  await model?.close()
  await database?.drop()
})

const start = async (extra: Record<string, string> = {}) => {
  const started = await spawnServer({ ...env, ...extra })
  processes.push(started)
  return started
}

describe("code review: restart mid-review", () => {
  it("a process killed while the review reads the diff: the next one resumes the same job and action", async () => {
    const first = await start()
    const server = { url: first.url } as TestServer
    const org = await registerOrg(first.url, "Restarted")
    const connected = await connect(server, org, github, model)
    const pull = github.setPull(connected.repository, { number: 4, diff: unifiedDiff([{ path: "src/keys.ts", added: ["const AWS_SECRET = 'x'"] }]) })
    const release = github.holdDiff(connected.repository, 4)
    const accepted = await deliverPull(server, connected, pull)
    expect(accepted.status, accepted.text).toBe(202)
    await github.diffRequested(connected.repository, 4)
    const before = await reviewSettled(server, org.key, connected.repository, 4, ["running"])
    const actionUuid = before.body.pull_request.action_uuid as string
    expect(actionUuid).toEqual(expect.any(String))

    await first.kill()
    release()
    const second = await start()
    const resumed = { url: second.url } as TestServer
    const read = await reviewSettled(resumed, org.key, connected.repository, 4)
    expect(read.body.pull_request).toMatchObject({ status: "completed", action_uuid: actionUuid, head_sha: pull.head_sha })
    expect(read.body.data.map((v: { category: string; line: number }) => [v.category, v.line])).toEqual([["security", 1]])
    expect(github.statuses.filter((status) => status.sha === pull.head_sha).map((status) => status.state)).toEqual(["failure"])
    const actions = await call(second.url, "GET", "/api/v1/actions?agent_id=aira-code-review", { token: org.key })
    expect(actions.status, actions.text).toBe(200)
    expect((actions.body.data as Array<{ action_uuid: string }>).map((action) => action.action_uuid)).toEqual([actionUuid])
    await verifiedReceipt(resumed, actionUuid)
  }, 180_000)

  it("a process stopped gracefully hands its leases back: the next one resumes at once, not a lease later", async () => {
    // Two minutes of lease: only a handed-back lease lets the review finish within the test's wait.
    const long = { CODE_REVIEW_LEASE_MS: "120000" }
    const first = await start(long)
    const server = { url: first.url } as TestServer
    const org = await registerOrg(first.url, "Stopped")
    const connected = await connect(server, org, github, model)
    const pull = github.setPull(connected.repository, { number: 5, diff: unifiedDiff([{ path: "docs.md", added: ["// TODO later"] }]) })
    const release = github.holdDiff(connected.repository, 5)
    expect((await deliverPull(server, connected, pull)).status).toBe(202)
    await github.diffRequested(connected.repository, 5)
    await first.stop()
    release()
    const second = await start(long)
    const read = await reviewSettled({ url: second.url } as TestServer, org.key, connected.repository, 5)
    expect(read.body.pull_request.status).toBe("completed")
    expect(read.body.data.map((v: { category: string }) => v.category)).toEqual(["code_quality"])
  }, 180_000)
})

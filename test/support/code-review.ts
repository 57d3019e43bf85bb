/**
 * Code review tests' set-up (CONTRACT-sdk-beyond §7): an organization connected to the local GitHub
 * fake with a reviewing model of the fake model server, deliveries signed with its secret, and the
 * waits on a review's end.
 */
import { randomBytes } from "node:crypto"
import { expect } from "vitest"
import { verifyReceipt } from "../../protocol/verifier/index.js"
import { call, type Org, type Reply } from "./client.js"
import { eventually } from "./eventually.js"
import type { FakeReviewModel } from "./fake-review-model.js"
import { type FakePull, type GithubFake, githubDelivery, pullRequestEvent } from "./github-fake.js"
import type { TestServer } from "./server.js"

let counter = 0

/** A repository name no other test of this run uses. */
export const uniqueRepository = (label: string) => `Octo-${process.pid}/${label}-${Date.now().toString(36)}-${++counter}`

/** Registers a custom model of `org` answering as `behaviour` on the fake model server; its id. */
export const reviewModel = async (server: TestServer, org: Org, model: FakeReviewModel, behaviour: string): Promise<string> => {
  const modelId = `${behaviour.replace(/\W/g, "-")}-${++counter}-${randomBytes(3).toString("hex")}`
  const reply = await call(server.url, "POST", "/api/v1/models/custom", {
    token: org.token,
    body: { name: `Reviewer ${behaviour}`, model_id: modelId, endpoint_url: `${model.url}/${behaviour}/v1` }
  })
  expect(reply.status, reply.text).toBe(201)
  return `custom:${modelId}`
}

export interface Connected {
  readonly repository: string
  readonly secret: string
  readonly model: string
}

/** Connects `org` to the fake: its token and address, the repository, a known secret, the review model as default. */
export const connect = async (
  server: TestServer,
  org: Org,
  github: GithubFake,
  model: FakeReviewModel,
  options: { readonly behaviour?: string; readonly repository?: string; readonly autoMerge?: Record<string, unknown> } = {}
): Promise<Connected> => {
  const repository = options.repository ?? uniqueRepository("service")
  const secret = `whsec-${randomBytes(16).toString("hex")}`
  const reviewer = await reviewModel(server, org, model, options.behaviour ?? "review")
  const preferences = await call(server.url, "PUT", "/api/v1/models/code-review-preferences", { token: org.token, body: { default_model: reviewer } })
  expect(preferences.status, preferences.text).toBe(200)
  const configured = await call(server.url, "PUT", "/api/v1/code-review/github", {
    token: org.token,
    body: { api_token: github.token, webhook_secret: secret, api_base_url: github.url, repositories: [repository], ...(options.autoMerge ? { auto_merge: options.autoMerge } : {}) }
  })
  expect(configured.status, configured.text).toBe(200)
  return { repository, secret, model: reviewer }
}

/** Sends one delivery as GitHub would. */
export const deliver = (server: TestServer, secret: string, event: string, payload: unknown, options: { deliveryId?: string; signature?: string | null } = {}) => {
  const { headers, body } = githubDelivery(secret, event, payload, options)
  return call(server.url, "POST", "/api/v1/webhooks/github", { raw: body, headers })
}

/** Delivers `pull_request` `action` for the pull request; the answer. */
export const deliverPull = (server: TestServer, connected: Connected, pull: FakePull, action = "opened", options: { deliveryId?: string } = {}) =>
  deliver(server, connected.secret, "pull_request", pullRequestEvent(action, connected.repository, pull), options)

/** The violations read of the pull request as `token`. */
export const violationsOf = (server: TestServer, token: string, repository: string, pullNumber: number, query = ""): Promise<Reply> =>
  call(server.url, "GET", `/api/v1/webhooks/github/violations/${repository}/${pullNumber}${query}`, { token })

/** Waits until the pull request's latest review has `status` (and, when the review is done, its job). */
export const reviewSettled = async (server: TestServer, token: string, repository: string, pullNumber: number, statuses: ReadonlyArray<string> = ["completed", "failed"]) => {
  let last: Reply | undefined
  try {
    return await eventually(
      async () => {
        last = await violationsOf(server, token, repository, pullNumber, "?per_page=100")
        return last.status === 200 && statuses.includes(last.body.pull_request?.status) ? last : false
      },
      { timeoutMs: 30_000 }
    )
  } catch (error) {
    throw new Error(`the review of ${repository}#${pullNumber} did not settle: ${last?.text}`, { cause: error })
  }
}

/** The action's receipt, verified offline with the gateway's published key (JWKS), not the key the receipt names. */
export const verifiedReceipt = async (server: TestServer, actionUuid: string) => {
  const reply = await call(server.url, "GET", `/api/v1/verify/action/${actionUuid}`)
  expect(reply.status, reply.text).toBe(200)
  const jwks = await call(server.url, "GET", "/api/v1/.well-known/jwks.json")
  expect(jwks.status).toBe(200)
  const signed = typeof reply.body.signed_payload === "string" ? JSON.parse(reply.body.signed_payload) : reply.body.signed_payload
  const key = (jwks.body.keys as Array<Record<string, unknown>>).find((candidate) => candidate.kid === (signed.public_key_id ?? reply.body.public_key_id)) ?? jwks.body.keys[0]
  const result = verifyReceipt({ signed_payload: signed, payload_hash: reply.body.payload_hash, signature: reply.body.signature, public_key: key as never })
  expect(result.errors).toEqual([])
  expect(result.valid).toBe(true)
  return signed as Record<string, any>
}

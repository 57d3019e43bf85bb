/**
 * `POST /api/v1/webhooks/github` (CONTRACT-sdk-beyond §7): GitHub's deliveries. The repository's
 * `full_name` picks the organization, whose webhook secret must have signed the raw body
 * (`X-Hub-Signature-256`, compared in constant time); an unknown repository and a bad signature
 * get the same 401. No per-IP limit (GitHub's addresses are shared): 120 deliveries a minute per
 * repository. Pull request heads are queued for review; a redelivery is answered `duplicate`.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { requestIdOf } from "../gateway/request.js"
import { RateLimits, rateLimitHeaders } from "../platform/redis/index.js"
import { Secrets } from "../platform/secrets.js"
import { CodeReviewJobs } from "./jobs.js"
import { githubSecretAad } from "./service.js"
import { makeCodeReviewStore } from "./store.js"

export const GITHUB_WEBHOOK_PATH = "/api/v1/webhooks/github"
/** Deliveries over this are 413 (the transport's cap for this path). */
export const MAX_DELIVERY_BYTES = 1024 * 1024
const PER_REPOSITORY_PER_MINUTE = 120
const MINUTE_MS = 60_000
const REVIEWED_ACTIONS: ReadonlySet<string> = new Set(["opened", "synchronize", "reopened", "ready_for_review"])

const answer = (status: number, body: Record<string, unknown>, headers?: Record<string, string>) => HttpServerResponse.jsonUnsafe(body, { status, headers })
const refusal = (status: number, code: string, message: string, requestId: string, headers?: Record<string, string>) =>
  answer(status, { error: message, code, message, request_id: requestId }, headers)

/** `sha256=` + hex HMAC-SHA256(secret, body), compared in constant time. */
export const signatureMatches = (secret: string, body: Uint8Array, header: string | undefined): boolean => {
  if (header === undefined) return false
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`)
  const given = Buffer.from(header.trim())
  return expected.length === given.length && timingSafeEqual(expected, given)
}

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

/** What a pull_request payload says of the head, or why it is not one to review. */
const pullRequestOf = (payload: Record<string, any>) => {
  const pull = payload.pull_request
  const number = Number(payload.number ?? pull?.number)
  const headSha = text(pull?.head?.sha)
  if (typeof pull !== "object" || pull === null || !Number.isSafeInteger(number) || number < 1 || headSha === null || !/^[0-9a-f]{7,64}$/i.test(headSha)) return undefined
  return {
    pullNumber: number,
    headSha: headSha.toLowerCase(),
    baseRef: (text(pull.base?.ref) ?? "").slice(0, 255),
    headRef: (text(pull.head?.ref) ?? "").slice(0, 255),
    author: (text(pull.user?.login) ?? "").slice(0, 100),
    draft: pull.draft === true
  }
}

export const GithubWebhookRoutes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const jobs = yield* CodeReviewJobs
    const limits = yield* RateLimits
    const { envelope } = yield* Secrets
    const configs = yield* makeCodeReviewStore

    const handle = Effect.gen(function* () {
      const request = yield* HttpServerRequest
      const requestId = requestIdOf(request)
      const unauthorized = refusal(401, "UNAUTHORIZED", "Unknown repository, or a missing or wrong X-Hub-Signature-256", requestId)
      const body = new Uint8Array(yield* Effect.orElseSucceed(request.arrayBuffer, () => new ArrayBuffer(0)))
      if (body.byteLength > MAX_DELIVERY_BYTES) return refusal(413, "PAYLOAD_TOO_LARGE", `request body exceeds ${MAX_DELIVERY_BYTES} bytes`, requestId)
      let payload: Record<string, any>
      try {
        payload = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body))
      } catch {
        return refusal(400, "INVALID_JSON", "Request body is not valid UTF-8 JSON", requestId)
      }
      if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return refusal(400, "INVALID_JSON", "Request body is not a JSON object", requestId)
      const event = request.headers["x-github-event"] ?? ""
      const repository = text(payload.repository?.full_name)
      // A ping from an organization-wide hook names no repository: there is no secret to check it with.
      if (event === "ping" && repository === null) return answer(200, { ok: true })
      if (repository === null) return unauthorized
      const owner = yield* configs.repositoryOwner(repository)
      if (owner === undefined) return unauthorized
      const secret = envelope.openText(owner.webhook_secret_sealed, githubSecretAad(owner.org_uuid, "webhook_secret"))
      if (!signatureMatches(secret, body, request.headers["x-hub-signature-256"])) return unauthorized

      const limit = yield* limits.consume(`github-webhook:${repository.toLowerCase()}`, PER_REPOSITORY_PER_MINUTE, MINUTE_MS)
      const headers = rateLimitHeaders(limit, "github-per-repository")
      if (!limit.allowed) {
        return refusal(429, "RATE_LIMIT_EXCEEDED", `More than ${PER_REPOSITORY_PER_MINUTE} deliveries per minute for ${repository}`, requestId, {
          ...headers,
          "retry-after": String(limit.retryAfterSeconds)
        })
      }
      if (event === "ping") return answer(200, { ok: true }, headers)

      const deliveryId = text(request.headers["x-github-delivery"])?.slice(0, 200) ?? null
      const ignored = (reason: string) => answer(200, { ignored: true, reason }, headers)
      if (event !== "pull_request") return ignored(`event ${event === "" ? "(none)" : event} is not reviewed`)
      const action = text(payload.action) ?? ""
      if (!REVIEWED_ACTIONS.has(action)) return ignored(`pull_request action ${action === "" ? "(none)" : action} is not reviewed`)
      const pull = pullRequestOf(payload)
      if (pull === undefined) return ignored("the payload names no pull request head")
      if (pull.draft) return ignored("the pull request is a draft")
      const queued = yield* jobs.enqueue(deliveryId, { orgUuid: owner.org_uuid, repository, ...pull })
      if (queued.duplicate) return answer(200, { duplicate: true }, headers)
      return answer(202, { accepted: true, review_uuid: queued.reviewUuid }, headers)
    })

    yield* router.add("POST", GITHUB_WEBHOOK_PATH, handle)
  })
)

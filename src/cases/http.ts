/**
 * Handlers of `/api/v1/cases…` (cases:write to run, cases:read to read; review by a human with a
 * JWT) and the public `/api/v1/verify/case/{case_id}`. The stream route answers refusals as
 * ordinary HTTP errors, then Server-Sent Events; the run lives in the stream's scope, so a
 * client that disconnects interrupts it and its model calls.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiBuilder } from "effect/http-api"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { GatewayApi } from "../../protocol/api.js"
import { pagination } from "../../protocol/common.js"
import { requireJwt, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import type { CasesError } from "./errors.js"
import { Cases, monthRetryAfter } from "./service.js"
import type { CaseEvent } from "./views.js"

/** A plan-quota 429 carries Retry-After and the RateLimit headers like every 429 (CONTRACT). */
const withQuotaHeaders = <A, R>(effect: Effect.Effect<A, CasesError, R>) =>
  Effect.catchReasons(effect, "CasesError", {
    PlanLimitExceeded: (reason) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest
        const retryAfter = monthRetryAfter(yield* Clock.currentTimeMillis)
        const body = { code: reason.code, message: reason.message, error: reason.error, details: reason.details, request_id: requestIdOf(request) }
        return HttpServerResponse.jsonUnsafe(body, {
          status: 429,
          headers: {
            "retry-after": String(retryAfter),
            "ratelimit-policy": `"cases";q=${reason.details?.limit};w=2678400`,
            ratelimit: `"cases";r=0;t=${retryAfter}`
          }
        })
      })
  })

const reviewRefusals = refusals("CasesError", "NotAnApprover", "CaseNotFound", "ReviewNotRequired", "ReviewAlreadyResolved")

const encoder = new TextEncoder()
const sseFrame = (event: CaseEvent) => encoder.encode(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`)
const SSE_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" }

export const CasesHttp = HttpApiBuilder.group(GatewayApi, "cases", (handlers) =>
  Effect.gen(function* () {
    const cases = yield* Cases
    const writer = requireScope("cases:write")
    const reader = requireScope("cases:read")
    const requestId = Effect.gen(function* () {
      return requestIdOf(yield* HttpServerRequest)
    })

    return handlers
      .handle("create", ({ payload, headers }) =>
        Effect.gen(function* () {
          const principal = yield* writer
          const id = yield* requestId
          const prepared = yield* withQuotaHeaders(cases.prepare(principal, payload, headers["idempotency-key"])).pipe(
            refusals("CasesError", "InvalidInput", "DuplicateCase")
          )
          if (HttpServerResponse.isHttpServerResponse(prepared)) return prepared
          if (prepared.kind === "replay") return prepared.view
          return yield* cases.run(prepared, id, () => Effect.void).pipe(refusals("CasesError", "ModelUnavailable"))
        })
      )
      .handle("stream", ({ payload, headers }) =>
        Effect.gen(function* () {
          const principal = yield* writer
          const id = yield* requestId
          const prepared = yield* withQuotaHeaders(cases.prepare(principal, payload, headers["idempotency-key"])).pipe(
            refusals("CasesError", "InvalidInput", "DuplicateCase")
          )
          if (HttpServerResponse.isHttpServerResponse(prepared)) return prepared
          const events =
            prepared.kind === "replay"
              ? Stream.fromIterable(cases.replayEvents(prepared.view, id))
              : Stream.callback<CaseEvent>(
                  (queue) =>
                    Effect.forkScoped(
                      cases.run(prepared, id, (event) => Effect.asVoid(Queue.offer(queue, event))).pipe(
                        Effect.ignore,
                        Effect.ensuring(Queue.end(queue))
                      )
                    ),
                  { bufferSize: 16, strategy: "suspend" }
                )
          return HttpServerResponse.stream(Stream.map(events, sseFrame), { contentType: "text/event-stream", headers: SSE_HEADERS })
        })
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const principal = yield* reader
          const page = query.page ?? 1
          const perPage = query.per_page ?? 20
          const { items, total } = yield* cases.list(principal, page, perPage)
          return { cases: items, data: items, pagination: pagination(page, perPage, total) }
        })
      )
      .handle("get", ({ params }) => Effect.flatMap(reader, (principal) => cases.get(principal, params.case_id).pipe(refusals("CasesError", "CaseNotFound"))))
      .handle("approve", ({ params, payload }) =>
        Effect.flatMap(requireJwt, (principal) => cases.approve(principal, params.case_id, payload.reason ?? null).pipe(reviewRefusals))
      )
      .handle("deny", ({ params, payload }) =>
        Effect.flatMap(requireJwt, (principal) => cases.deny(principal, params.case_id, payload.reason ?? null).pipe(reviewRefusals))
      )
  })
)

export const CasesPublicHttp = HttpApiBuilder.group(GatewayApi, "casesPublic", (handlers) =>
  Effect.gen(function* () {
    const cases = yield* Cases
    return handlers.handle("verify", ({ params }) => cases.verify(params.case_id).pipe(refusals("CasesError", "CaseNotFound")))
  })
)

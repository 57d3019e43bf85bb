/**
 * Handlers of `/api/v1/code-review/github` (read: `code_review:read`, any role; change:
 * `code_review:write`, owner or admin) and of the violations read (`code_review:read`).
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { CodeReview } from "./service.js"

const DEFAULT_PER_PAGE = 20

const auditContext = Effect.map(HttpServerRequest, (request) => ({ requestId: requestIdOf(request) }))

const writer = requireScope("code_review:write").pipe(Effect.flatMap(requireRole(["owner", "admin"], "changing the GitHub configuration")))

export const CodeReviewHttp = HttpApiBuilder.group(GatewayApi, "codeReview", (handlers) =>
  Effect.gen(function* () {
    const codeReview = yield* CodeReview
    return handlers
      .handle("github", () => Effect.flatMap(requireScope("code_review:read"), codeReview.github))
      .handle("putGithub", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* writer
          return yield* codeReview.putGithub(principal, payload, yield* auditContext).pipe(refusals("CodeReviewError", "InvalidInput", "RepositoryTaken"))
        })
      )
      .handle("deleteGithub", () =>
        Effect.gen(function* () {
          const principal = yield* writer
          return yield* codeReview.deleteGithub(principal, yield* auditContext)
        })
      )
      .handle("actionReview", ({ params }) => Effect.flatMap(requireScope("code_review:read"), (principal) => codeReview.actionReview(principal, params.action_uuid)))
      .handle("violations", ({ params, query }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("code_review:read")
          return yield* codeReview.violations(principal, params.owner, params.repo, Number(params.pr_number), {
            page: query.page ?? 1,
            perPage: query.per_page ?? DEFAULT_PER_PAGE
          })
        })
      )
  })
)

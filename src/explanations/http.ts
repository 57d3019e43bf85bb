/**
 * Handlers of `/api/v1/actions/{action_uuid}/explanation[/pdf]` (scope actions:read, any role) and
 * of the public `POST /api/v1/verify/explanation` (rate-limited per client IP by PublicRoute; a key
 * sent is ignored; the body is capped at 1 MiB by the transport, see src/app.ts).
 */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { InvalidInput } from "../../protocol/errors.js"
import { explanationEnvelope } from "../../protocol/verifier/explanation.js"
import { requireScope } from "../access/guards.js"
import { pdfResponse } from "../gateway/pdf-response.js"
import { renderPdf } from "../platform/pdf.js"
import { refusals } from "../platform/wire-errors.js"
import { refuse } from "./errors.js"
import { explanationPdfModel } from "./pdf.js"
import { Explanations } from "./service.js"

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Keys that mark a body as the explanation itself rather than `{explanation}`. */
const looksLikeExplanation = (body: Record<string, unknown>) =>
  explanationEnvelope(body) !== undefined || Object.hasOwn(body, "policy_chain") || Object.hasOwn(body, "action")

/** `{explanation: {...}}` as the SDKs send, or the explanation itself; anything else is a 422. */
export const explanationOf = (body: Record<string, unknown>) => {
  if (Object.hasOwn(body, "explanation")) {
    const inner = body.explanation
    return isObject(inner) ? Effect.succeed(inner) : refuse(InvalidInput.one("explanation", "must be an object"))
  }
  return looksLikeExplanation(body) ? Effect.succeed(body) : refuse(InvalidInput.one("explanation", "is required"))
}

export const ExplanationsHttp = HttpApiBuilder.group(GatewayApi, "explanations", (handlers) =>
  Effect.gen(function* () {
    const explanations = yield* Explanations
    const read = requireScope("actions:read")
    return handlers
      .handle("explain", ({ params }) =>
        Effect.flatMap(read, (principal) => explanations.explain(principal.orgUuid, params.action_uuid).pipe(refusals("ExplanationsError", "ExplanationNotFound")))
      )
      .handle("explanationPdf", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* read
          const explanation = yield* explanations.explain(principal.orgUuid, params.action_uuid).pipe(refusals("ExplanationsError", "ExplanationNotFound"))
          const bytes = yield* Effect.promise(() => renderPdf(explanationPdfModel(explanation)))
          return pdfResponse(bytes, `explanation-${params.action_uuid}.pdf`)
        })
      )
  })
)

export const ExplanationsPublicHttp = HttpApiBuilder.group(GatewayApi, "explanationsPublic", (handlers) =>
  Effect.gen(function* () {
    const explanations = yield* Explanations
    return handlers.handle("verifyExplanation", ({ payload }) =>
      Effect.flatMap(explanationOf(payload), explanations.verify).pipe(refusals("ExplanationsError", "InvalidInput"))
    )
  })
)

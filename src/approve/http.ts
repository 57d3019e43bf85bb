/**
 * `GET /approve/{code}` and `POST /approve/{code}`: the page a human opens
 * from an approval notification. Plain router routes (HTML, not JSON), rate
 * limited per client address like every public route.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ApprovalForm } from "../../protocol/approve.js"
import { Access } from "../access/service.js"
import type { ActionsError } from "../actions/errors.js"
import { ApprovalsPort } from "../actions/ports.js"
import { requestIdOf } from "../gateway/request.js"
import { messagePage, resultPage, reviewPage } from "./render.js"

const HTML = "text/html; charset=utf-8"
const decodeForm = Schema.decodeUnknownOption(ApprovalForm)
const MAX_REASON = 2_000

const html = (body: string, status = 200) =>
  HttpServerResponse.text(body, {
    status,
    contentType: HTML,
    headers: {
      "cache-control": "no-store",
      "x-frame-options": "DENY",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      "referrer-policy": "no-referrer"
    }
  })

const notFoundPage = () => html(messagePage("Approval not found", "This approval link is unknown. Check that you copied the whole link."), 404)
const expiredPage = () => html(messagePage("Approval link expired", "This approval link has expired or was already used."), 410)

/** The port's refusals as pages; any other reason is a defect. A refused approver has always been answered 400 here. */
const pages: Partial<Record<ActionsError["reason"]["_tag"], (reason: ActionsError["reason"]) => HttpServerResponse.HttpServerResponse>> = {
  CodeNotFound: notFoundPage,
  ActionNotFound: notFoundPage,
  CredentialExpired: expiredPage,
  NotAllowedToDecide: (reason) => html(messagePage("Approval failed", reason.message), 400)
}

const failurePage = (error: ActionsError) => {
  const page = pages[error.reason._tag]
  return page === undefined ? Effect.die(error) : Effect.succeed(page(error.reason))
}

const codeOf = Effect.map(HttpRouter.params, (params) => params.code ?? "")

const limited = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function* () {
    const access = yield* Access
    const request = yield* HttpServerRequest
    const limit = yield* access.rateLimitClient(Option.getOrElse(request.remoteAddress, () => "unknown"))
    if (!limit.allowed) return html(messagePage("Too many requests", "Too many attempts from this address; wait a minute and try again."), 429)
    return yield* effect
  })

const show = limited(
  Effect.gen(function* () {
    const approvals = yield* ApprovalsPort
    const code = yield* codeOf
    return yield* approvals.review(code).pipe(
      Effect.map((review) => html(reviewPage(code, review))),
      Effect.catch(failurePage)
    )
  })
)

const decide = limited(
  Effect.gen(function* () {
    const approvals = yield* ApprovalsPort
    const request = yield* HttpServerRequest
    const code = yield* codeOf
    const text = yield* Effect.orElseSucceed(request.text, () => "")
    const form = decodeForm(Object.fromEntries(new URLSearchParams(text)))
    if (Option.isNone(form)) return html(messagePage("Choose a decision", "Use the Approve or Deny button on the approval page."), 400)
    const { decision } = form.value
    const reason = (form.value.reason ?? "").trim().slice(0, MAX_REASON)
    return yield* approvals.confirm(code, decision, decision === "deny" && reason !== "" ? reason : undefined, requestIdOf(request)).pipe(
      Effect.map((result) => html(resultPage(result))),
      Effect.catch(failurePage)
    )
  })
)

export const ApprovalPageRoutes = Layer.mergeAll(HttpRouter.add("GET", "/approve/:code", show), HttpRouter.add("POST", "/approve/:code", decide))

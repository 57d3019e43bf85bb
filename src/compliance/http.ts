/**
 * Handlers of `/api/v1/compliance/reports…`: reads need `compliance:read` (any role); creating a
 * report needs `compliance:write` and the owner or admin role (CONTRACT, decided).
 */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { offsetWindow } from "../../protocol/common.js"
import { requireRole, requireScope } from "../access/guards.js"
import { pdfResponse } from "../gateway/pdf-response.js"
import { refusals } from "../platform/wire-errors.js"
import { Compliance } from "./service.js"

const createErrors = refusals("ComplianceError", "InvalidInput", "ReportActionNotFound")
const lookupErrors = refusals("ComplianceError", "ReportNotFound")
const readyErrors = refusals("ComplianceError", "ReportNotFound", "ReportNotReady")
const categoryErrors = refusals("ComplianceError", "InvalidInput")

export const ComplianceHttp = HttpApiBuilder.group(GatewayApi, "compliance", (handlers) =>
  Effect.gen(function* () {
    const compliance = yield* Compliance
    const read = requireScope("compliance:read")
    return handlers
      .handle("createReport", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* Effect.flatMap(requireScope("compliance:write"), requireRole(["owner", "admin"], "creating compliance reports"))
          return yield* createErrors(compliance.create(principal, payload))
        })
      )
      .handle("listReports", ({ query }) =>
        Effect.flatMap(read, (principal) => compliance.list(principal, { framework: query.framework ?? null, status: query.status ?? null }, offsetWindow(query)))
      )
      .handle("art9Categories", ({ query }) =>
        Effect.flatMap(read, (principal) => categoryErrors(compliance.art9Categories(principal, { agent_id: query.agent_id ?? null, category: query.category ?? null })))
      )
      .handle("getReport", ({ params }) => Effect.flatMap(read, (principal) => lookupErrors(compliance.get(principal, params.report_uuid))))
      .handle("downloadReport", ({ params }) =>
        Effect.flatMap(read, (principal) => Effect.map(readyErrors(compliance.download(principal, params.report_uuid)), ({ bytes, filename }) => pdfResponse(bytes, filename)))
      )
      .handle("verifyReport", ({ params }) => Effect.flatMap(read, (principal) => readyErrors(compliance.verify(principal, params.report_uuid))))
  })
)

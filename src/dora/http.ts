/**
 * Handlers of `/api/v1/dora/…` and the `dora` flag gate. Any role reads (dora:read), opens
 * incidents and logs tests (dora:write); classify, resolve, the report and third-party writes
 * also need admin or owner (CONTRACT "DORA module").
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { CurrentPrincipal } from "../../protocol/auth.js"
import { offsetListPage, offsetWindow } from "../../protocol/common.js"
import { DoraEnabled } from "../../protocol/dora.js"
import { notFound } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { Flags } from "../flags/service.js"
import { pdfResponse } from "../gateway/pdf-response.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Dora } from "./service.js"

export const DORA_FLAG = "dora"

const createErrors = refusals("DoraError", "RelatedActionsNotFound", "InvalidInput")
const incidentErrors = refusals("DoraError", "IncidentNotFound")
const classifyErrors = refusals("DoraError", "IncidentNotFound", "ThirdPartyNotFound", "InvalidIncidentState", "InvalidInput")
const resolveErrors = refusals("DoraError", "IncidentNotFound", "InvalidIncidentState", "InvalidInput")
const reportErrors = refusals("DoraError", "IncidentNotFound", "InvalidIncidentState")
const createThirdPartyErrors = refusals("DoraError", "InvalidInput")
const thirdPartyErrors = refusals("DoraError", "ThirdPartyNotFound")
const updateThirdPartyErrors = refusals("DoraError", "ThirdPartyNotFound", "InvalidInput")
const createTestErrors = refusals("DoraError", "InvalidInput")
const testErrors = refusals("DoraError", "TestNotFound")

/** Off for the caller's organization → 404, as if the routes did not exist. */
export const DoraEnabledLive = Layer.effect(DoraEnabled)(
  Effect.gen(function* () {
    const flags = yield* Flags
    return DoraEnabled.of((httpEffect) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        if (!(yield* flags.isEnabled(principal.orgUuid, DORA_FLAG))) return yield* Effect.fail(notFound("Not found"))
        return yield* httpEffect
      })
    )
  })
)

/** The request's id, for the audit entry a change writes. */
const requestId = Effect.map(HttpServerRequest, requestIdOf)

const bool = (value: "true" | "false" | undefined) => (value === undefined ? undefined : value === "true")

export const DoraHttp = HttpApiBuilder.group(GatewayApi, "dora", (handlers) =>
  Effect.gen(function* () {
    const dora = yield* Dora
    const read = requireScope("dora:read")
    const write = requireScope("dora:write")
    const admin = (what: string) => Effect.flatMap(write, requireRole(["owner", "admin"], what))
    return handlers
      .handle("createIncident", ({ payload }) =>
        Effect.flatMap(write, (principal) => Effect.flatMap(requestId, (id) => createErrors(dora.createIncident(principal, payload, id))))
      )
      .handle("listIncidents", ({ query }) =>
        Effect.flatMap(read, (principal) => {
          const window = offsetWindow(query)
          const filter = { status: query.status, severity: query.severity, isMajor: bool(query.is_major) }
          return Effect.map(dora.listIncidents(principal, filter, window), (found) => offsetListPage(found.items, window, found.total))
        })
      )
      .handle("getIncident", ({ params }) => Effect.flatMap(read, (principal) => incidentErrors(dora.getIncident(principal, params.uuid))))
      .handle("classifyIncident", ({ params, payload }) =>
        Effect.flatMap(admin("classifying an incident"), (principal) =>
          Effect.flatMap(requestId, (id) => classifyErrors(dora.classify(principal, params.uuid, payload, id)))
        )
      )
      .handle("resolveIncident", ({ params, payload }) =>
        Effect.flatMap(admin("resolving an incident"), (principal) =>
          Effect.flatMap(requestId, (id) => resolveErrors(dora.resolve(principal, params.uuid, payload, id)))
        )
      )
      .handle("incidentReport", ({ params }) =>
        // A download: dora:read is enough for the key, the role must still be admin or owner.
        Effect.flatMap(Effect.flatMap(read, requireRole(["owner", "admin"], "an incident report")), (principal) =>
          Effect.flatMap(requestId, (id) =>
            Effect.map(reportErrors(dora.report(principal, params.uuid, id)), ({ bytes }) => pdfResponse(bytes, `dora-incident-${params.uuid}.pdf`))
          )
        )
      )
      .handle("createThirdParty", ({ payload }) =>
        Effect.flatMap(admin("the third-party register"), (principal) =>
          Effect.flatMap(requestId, (id) => createThirdPartyErrors(dora.createThirdParty(principal, payload, id)))
        )
      )
      .handle("listThirdParties", ({ query }) =>
        Effect.flatMap(read, (principal) => {
          const window = offsetWindow(query)
          const filter = { criticality: query.criticality, isActive: bool(query.is_active) }
          return Effect.map(dora.listThirdParties(principal, filter, window), (found) => offsetListPage(found.items, window, found.total))
        })
      )
      .handle("getThirdParty", ({ params }) => Effect.flatMap(read, (principal) => thirdPartyErrors(dora.getThirdParty(principal, params.uuid))))
      .handle("updateThirdParty", ({ params, payload }) =>
        Effect.flatMap(admin("the third-party register"), (principal) =>
          Effect.flatMap(requestId, (id) => updateThirdPartyErrors(dora.updateThirdParty(principal, params.uuid, payload, id)))
        )
      )
      .handle("createTest", ({ payload }) =>
        Effect.flatMap(write, (principal) => Effect.flatMap(requestId, (id) => createTestErrors(dora.createTest(principal, payload, id))))
      )
      .handle("listTests", ({ query }) =>
        Effect.flatMap(read, (principal) => {
          const window = offsetWindow(query)
          return Effect.map(dora.listTests(principal, query.test_type, window), (found) => offsetListPage(found.items, window, found.total))
        })
      )
      .handle("getTest", ({ params }) => Effect.flatMap(read, (principal) => testErrors(dora.getTest(principal, params.uuid))))
  })
)

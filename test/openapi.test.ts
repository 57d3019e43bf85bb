/**
 * The OpenAPI document lists, per endpoint, only the errors that endpoint can answer:
 * the errors of its middleware (credentials, rate limits), the API-wide 422, 400 where it
 * takes a body, and what its own handler declares.
 */
import { OpenApi } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { GatewayApi } from "../protocol/api.js"

const spec = OpenApi.fromApi(GatewayApi) as any
const statuses = (method: string, path: string): Array<string> => Object.keys(spec.paths[path][method].responses).sort()

describe("per-endpoint errors in the OpenAPI document", () => {
  it("a read with no lookup lists no 404 or 409, an authenticated one its 401/403/429", () => {
    expect(statuses("get", "/api/v1/analytics/top-agents")).toEqual(["200", "401", "403", "422", "429"])
    expect(statuses("get", "/api/v1/policies")).toEqual(["200", "401", "403", "422", "429"])
  })

  it("a lookup by id lists 404; a state change lists 409; an approval lists 410", () => {
    expect(statuses("get", "/api/v1/actions/{action_uuid}")).toContain("404")
    expect(statuses("post", "/api/v1/policies/{policy_uuid}/activate")).toEqual(["200", "401", "403", "404", "409", "422", "429"])
    expect(statuses("post", "/api/v1/actions/{action_uuid}/notarize")).toEqual(["200", "400", "401", "403", "404", "409", "422", "429"])
    expect(statuses("post", "/api/v1/actions/approval/{code}/confirm")).toContain("410")
  })

  it("public routes list no 401; admin routes no 429; health lists no rate limit", () => {
    expect(statuses("get", "/api/v1/verify/{receipt_uuid}")).toEqual(["200", "404", "422", "429"])
    expect(statuses("post", "/api/v1/admin/signing-keys/rotate")).toEqual(["200", "401", "409", "422"])
    expect(statuses("get", "/health")).toEqual(["200", "422"])
  })

  it("every operation with a body lists 400 for a body that is not JSON", () => {
    for (const [path, operations] of Object.entries<any>(spec.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        if (operation?.requestBody?.content?.["application/json"]) expect(operation.responses, `${method} ${path}`).toHaveProperty("400")
      }
    }
  })

  it("no operation lists all nine error statuses any more", () => {
    for (const operations of Object.values<any>(spec.paths)) {
      for (const operation of Object.values<any>(operations)) {
        if (operation?.responses) expect(Object.keys(operation.responses).length).toBeLessThan(10)
      }
    }
  })
})

import { approvalPagePath } from "./approve.js"
import { liveSocketPath } from "./frames.js"

/**
 * Post-processing of the generated OpenAPI document: the `request_id` the
 * transport adds to every JSON object body, and the routes that are not
 * HttpApi endpoints (the native WebSocket and the HTML approval page), each
 * declared beside its contract.
 */
const requestId = {
  type: "string",
  pattern: "^req_[0-9a-f]{32}$",
  description: "Support reference of this request (also in the X-Request-Id header)"
}

const withRequestId = (schema: any): void => {
  if (!schema || typeof schema !== "object") return
  if (schema.type === "object" && schema.properties && !schema.properties.request_id) {
    schema.properties = { ...schema.properties, request_id: requestId }
    schema.required = [...(schema.required ?? []), "request_id"]
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) for (const member of schema[key] ?? []) withRequestId(member)
}

/** What the edge answers for a body that is not JSON, on every operation that takes a body. */
const invalidJson = {
  description: "The body is not valid JSON (INVALID_JSON)",
  content: {
    "application/json": {
      schema: {
        type: "object",
        properties: { code: { type: "string", enum: ["INVALID_JSON"] }, message: { type: "string" }, details: { type: "object" } },
        required: ["code", "message", "details"]
      }
    }
  }
}

export const completeOpenApi = (spec: Record<string, any>): Record<string, any> => {
  for (const path of Object.values<any>(spec.paths ?? {})) {
    for (const operation of Object.values<any>(path)) {
      if (operation?.requestBody && operation.responses && !operation.responses["400"]) operation.responses["400"] = invalidJson
      for (const response of Object.values<any>(operation?.responses ?? {})) {
        withRequestId(response?.content?.["application/json"]?.schema)
      }
    }
  }
  for (const schema of Object.values<any>(spec.components?.schemas ?? {})) withRequestId(schema)
  spec.paths = { ...spec.paths, ...liveSocketPath, ...approvalPagePath }
  return spec
}

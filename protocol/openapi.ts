/**
 * Post-processing of the generated OpenAPI document: the `request_id` the
 * transport adds to every JSON object body, and the routes that are not
 * HttpApi endpoints (the native WebSocket and the HTML approval page).
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

const html = { "text/html": { schema: { type: "string" } } }

const extraPaths = {
  "/api/v1/ws": {
    get: {
      tags: ["live"],
      operationId: "live.websocket",
      summary: "WebSocket upgrade for live channels",
      description:
        "Authenticate with `Authorization: Bearer` (API key or JWT) on the upgrade or a first frame `{type:\"auth\", token}` within 5 s. " +
        "Subscribe with `{type:\"subscribe\", channel}` to `notifications`, `actions` or `case:<id>`; the server answers `subscribed` or " +
        "`{type:\"error\", code, message}` (`FORBIDDEN` without the channel's read scope: `notifications:read`, `actions:read`, `cases:read`) and pushes " +
        "`{type:\"event\", channel, data}`. Invalid credentials: an `UNAUTHORIZED` error frame, then close code 4401; the same closes an open " +
        "socket once its key is revoked or expires, its JWT expires, its user leaves or its organization is deleted. " +
        "Frame schemas: `protocol/frames.ts`.",
      responses: { "101": { description: "Switching Protocols" }, "503": { description: "Connection cap reached (SERVER_BUSY)" } }
    }
  },
  "/approve/{code}": {
    parameters: [{ name: "code", in: "path", required: true, schema: { type: "string" } }],
    get: {
      tags: ["approval page"],
      operationId: "approvalPage.show",
      summary: "HTML page showing a pending action with Approve and Deny",
      responses: { "200": { description: "The page", content: html }, "404": { description: "Unknown code", content: html }, "410": { description: "Code used or expired", content: html } }
    },
    post: {
      tags: ["approval page"],
      operationId: "approvalPage.decide",
      summary: "Form submission of the approval page (urlencoded `decision`, `reason`)",
      requestBody: {
        content: {
          "application/x-www-form-urlencoded": {
            schema: { type: "object", properties: { decision: { type: "string", enum: ["approve", "deny"] }, reason: { type: "string" } }, required: ["decision"] }
          }
        }
      },
      responses: { "200": { description: "Result page", content: html }, "400": { description: "No decision", content: html }, "409": { description: "Already decided", content: html }, "410": { description: "Code used or expired", content: html } }
    }
  }
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
  spec.paths = { ...spec.paths, ...extraPaths }
  return spec
}

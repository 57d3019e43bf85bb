/**
 * `GET /approve/{code}` and `POST /approve/{code}`: the HTML page a human approver opens from an
 * approval notification (a plain router route, served by `src/approve/`). The form it posts, and
 * its entry in the OpenAPI document.
 */
import * as Schema from "effect/Schema"

export const ApprovalForm = Schema.Struct({
  decision: Schema.Literals(["approve", "deny"]),
  reason: Schema.optionalKey(Schema.String)
})

const html = { "text/html": { schema: { type: "string" } } }

export const approvalPagePath = {
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

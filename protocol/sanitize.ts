/**
 * Text sanitizing (spec 002 "Sanitize"): find personal data, credentials, prompt injections and
 * (HIPAA) health data in a text and redact, tokenize, block or flag them.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { Timestamp } from "./common.js"
import { Forbidden, InvalidInput } from "./errors.js"

/** Longest `content` accepted, in UTF-16 code units (JavaScript string length). */
export const MAX_SANITIZE_CHARS = 500_000

export const SanitizePolicyName = Schema.Literals(["default", "hipaa", "pci", "legal"])
export const SanitizeModeName = Schema.Literals(["redact", "tokenize", "block", "flag"])

const Content = Schema.String.check(Schema.isMaxLength(MAX_SANITIZE_CHARS)).annotate({ description: `Text to sanitize, at most ${MAX_SANITIZE_CHARS} characters` })

const Options = {
  content: Content,
  policy: Schema.optionalKey(SanitizePolicyName),
  mode: Schema.optionalKey(SanitizeModeName)
}

export const SanitizeRequest = Schema.Struct({
  ...Options,
  ai_model: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(200))))
})
export type SanitizeRequest = typeof SanitizeRequest.Type

export const SanitizeTestRequest = Schema.Struct(Options)

export const SanitizeFinding = Schema.Struct({
  entity_type: Schema.String,
  severity: Schema.Literals(["critical", "warning", "info"]),
  action_taken: Schema.Literals(["redacted", "tokenized", "blocked", "flagged"]),
  library: Schema.Literals(["pii", "credentials", "prompt_injection", "pii_ner", "healthcare"]),
  description: Schema.String,
  count: Schema.Int,
  source: Schema.optionalKey(Schema.Literals(["rules", "ai"]))
})

/** Signed over `{receipt_type, receipt_uuid, org_uuid, input_hash, output_hash, policy, mode, blocked, findings, created_at}`. */
export const SanitizeReceipt = Schema.Struct({
  receipt_uuid: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp: Timestamp,
  timestamp_authority: Schema.String,
  /** The exact RFC 8785 JSON that was signed, for offline verification with the JWKS. */
  signed_payload: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String)
})

const Result = {
  clean: Schema.String,
  blocked: Schema.Boolean,
  mode: SanitizeModeName,
  policy: SanitizePolicyName,
  input_hash: Schema.String,
  output_hash: Schema.String,
  findings: Schema.Array(SanitizeFinding),
  token_mapping: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
  /** Why part of the work was skipped (the AI second pass failed, say); the rule-based result stands. */
  warnings: Schema.Array(Schema.String)
}

export const SanitizeResult = Schema.Struct({ ...Result, receipt: SanitizeReceipt })
export const SanitizeTestResult = Schema.Struct(Result)

export class SanitizeGroup extends HttpApiGroup.make("sanitize")
  .add(
    HttpApiEndpoint.post("sanitize", "/api/v1/sanitize", { error: [Forbidden, InvalidInput], payload: SanitizeRequest, success: SanitizeResult }),
    HttpApiEndpoint.post("test", "/api/v1/sanitize/test", { error: [Forbidden, InvalidInput], payload: SanitizeTestRequest, success: SanitizeTestResult }),
    HttpApiEndpoint.post("detokenize", "/api/v1/sanitize/detokenize", { error: [Forbidden, InvalidInput],
      payload: Schema.Struct({ content: Content, token_mapping: Schema.Record(Schema.String, Schema.String) }),
      success: Schema.Struct({ content: Schema.String })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Sanitize",
      description:
        "Redact, tokenize (reversible `<TYPE_NNN>` tokens), block or flag personal data, credentials, prompt injections and (policy `hipaa`) health data in a text. `/test` is a dry run that records nothing."
    })
  )
{}

/**
 * File sanitize (spec 002 "Sanitize"): a multipart upload (`file`, `policy`, `mode`, `ai_model`,
 * `include_pixel_redaction`) answered with findings and a one-time download token, and the public
 * download that spends the token.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { Sha256Hash } from "./common.js"
import { BadRequest, Forbidden, NotFound, PayloadTooLarge, ServiceUnavailable, Unprocessable } from "./errors.js"

const errorFields = {
  code: Schema.String,
  message: Schema.String,
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
}

export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")(errorFields, {
  httpApiStatus: 415,
  description: "Not JPEG, PNG, GIF, BMP, TIFF, PDF or DICOM by its leading bytes"
}) {}

const SanitizeFinding = Schema.Struct({
  entity_type: Schema.String,
  severity: Schema.Literals(["critical", "warning", "info"]),
  action_taken: Schema.Literals(["redacted", "tokenized", "blocked", "flagged"]),
  library: Schema.String,
  description: Schema.String,
  count: Schema.Int,
  source: Schema.optionalKey(Schema.Literals(["rules", "ai"]))
})

export const SanitizedFile = Schema.Struct({
  file_type: Schema.Literals(["jpeg", "png", "gif", "bmp", "tiff", "pdf", "dicom"]),
  original_filename: Schema.String,
  findings: Schema.Array(SanitizeFinding),
  blocked: Schema.Boolean,
  mode: Schema.Literals(["redact", "tokenize", "block", "flag"]),
  policy: Schema.Literals(["default", "hipaa", "pci", "legal"]),
  input_hash: Sha256Hash,
  output_hash: Sha256Hash,
  download_token: Schema.NullOr(Schema.String),
  download_url: Schema.NullOr(Schema.String),
  tokenized_text: Schema.NullOr(Schema.String),
  token_mapping: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
  dicom_tag_actions: Schema.Array(Schema.Struct({ tag_name: Schema.String, tag_number: Schema.String, action: Schema.String, original_hash: Schema.NullOr(Schema.String) })),
  pixel_redactions: Schema.Array(
    Schema.Struct({ text_found: Schema.String, bounding_box: Schema.Tuple([Schema.Number, Schema.Number, Schema.Number, Schema.Number]), confidence: Schema.Number })
  )
})

/** What the form carries (documentation; the handler reads the parts as they stream). */
const Upload = Schema.Struct({
  file: Schema.String.annotate({ description: "the file (binary); its type is read from its leading bytes", format: "binary" }),
  policy: Schema.optionalKey(Schema.Literals(["default", "hipaa", "pci", "legal"])),
  mode: Schema.optionalKey(Schema.Literals(["redact", "tokenize", "block", "flag"])),
  ai_model: Schema.optionalKey(Schema.String),
  include_pixel_redaction: Schema.optionalKey(Schema.Literals(["true", "false"]))
}).pipe(HttpApiSchema.asMultipartStream())

export class SanitizeFilesGroup extends HttpApiGroup.make("sanitizeFiles")
  .add(
    HttpApiEndpoint.post("sanitizeFile", "/api/v1/sanitize/file", {
      payload: Upload,
      success: SanitizedFile,
      error: [BadRequest, Forbidden, PayloadTooLarge, UnsupportedMediaType, Unprocessable, ServiceUnavailable]
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Sanitize files", description: "Images, PDFs and DICOM cleaned of sensitive content; the cleaned file is fetched once. Files over 50 MB answer 413 while they stream." }))
{}

export class SanitizeFilesPublicGroup extends HttpApiGroup.make("sanitizeFilesPublic")
  .add(
    HttpApiEndpoint.get("downloadSanitizedFile", "/api/v1/sanitize/file/:token/download", {
      params: { token: Schema.String },
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" })),
      error: NotFound
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Sanitize files (download)",
      description: "The one-time token is the credential: valid one hour, single use; answers the cleaned file with its original content type."
    })
  )
{}

/**
 * File sanitize (spec 002 "Sanitize"): a multipart upload (`file`, `policy`, `mode`, `ai_model`,
 * `include_pixel_redaction`) answered with findings and a one-time download token, and the public
 * download that spends the token.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { Sha256Hash } from "./common.js"
import { Forbidden, InvalidInput, refusal } from "./errors.js"

/* The refusals of a file sanitize (spec "Sanitize errors"; codes decided in docs/decisions.md). */

/** The multipart body cannot be parsed (no boundary, bad part headers, cut short). */
export class InvalidMultipart extends Schema.Error<InvalidMultipart>("InvalidMultipart")(refusal("INVALID_MULTIPART"), {
  httpApiStatus: 400,
  description: "The multipart body cannot be read (`details.reason`)"
}) {
  readonly _tag = "InvalidMultipart"
  static of(reason: string) {
    return new InvalidMultipart({ message: `the multipart body cannot be read (${reason})`, details: { reason } })
  }
}

export class UnsupportedFileType extends Schema.Error<UnsupportedFileType>("UnsupportedFileType")(
  refusal("UNSUPPORTED_FILE_TYPE", "unsupported file type: send JPEG, PNG, GIF, BMP, TIFF, PDF or DICOM (identified by the leading bytes)"),
  { httpApiStatus: 415, description: "Not JPEG, PNG, GIF, BMP, TIFF, PDF or DICOM by its leading bytes" }
) {
  readonly _tag = "UnsupportedFileType"
}

export class EmptyFile extends Schema.Error<EmptyFile>("EmptyFile")(refusal("EMPTY_FILE", "the uploaded file is empty"), {
  httpApiStatus: 422,
  description: "The `file` part has no bytes"
}) {
  readonly _tag = "EmptyFile"
}

export class CorruptFile extends Schema.Error<CorruptFile>("CorruptFile")(refusal("CORRUPT_FILE"), {
  httpApiStatus: 422,
  description: "The file cannot be read as the type its leading bytes announce"
}) {
  readonly _tag = "CorruptFile"
  static of(fileType: string) {
    return new CorruptFile({ message: `the ${fileType} file cannot be read`, details: { file_type: fileType } })
  }
}

export class MissingDependency extends Schema.Error<MissingDependency>("MissingDependency")(refusal("MISSING_DEPENDENCY"), {
  httpApiStatus: 422,
  description: "The OCR engine or its language data is missing on this server"
}) {
  readonly _tag = "MissingDependency"
  static of(fileType: string) {
    return new MissingDependency({
      message: `${fileType} files cannot be sanitized: the OCR engine or its language data is missing on this server`,
      details: { file_type: fileType }
    })
  }
}

export class OcrTooSlow extends Schema.Error<OcrTooSlow>("OcrTooSlow")(refusal("OCR_TIMEOUT"), {
  httpApiStatus: 422,
  description: "OCR of one page took longer than the server's limit"
}) {
  readonly _tag = "OcrTooSlow"
  static of(timeoutMs: number) {
    return new OcrTooSlow({ message: `OCR of one page took longer than ${timeoutMs} ms; send a smaller or simpler file`, details: { timeout_ms: timeoutMs } })
  }
}

/** What each decoding budget counts, for the refusal's message. */
const LIMIT_WORDS: Readonly<Record<string, string>> = {
  pixels: "pixels in one image, page or frame",
  file_pixels: "pixels in its images, pages or frames together",
  pages: "pages",
  scanned_pages: "pages without a text layer",
  page_characters: "characters of text on one page",
  text_characters: "characters of text",
  elements: "DICOM elements",
  nesting_depth: "levels of nesting",
  decoder_memory_mb: "MB of decoder memory",
  decoder_seconds: "seconds of decoding"
}

export class FileTooComplex extends Schema.Error<FileTooComplex>("FileTooComplex")(refusal("FILE_TOO_COMPLEX"), {
  httpApiStatus: 422,
  description: "Decoding the file would pass one of the server's budgets (`details.limit`, `details.maximum`)"
}) {
  readonly _tag = "FileTooComplex"
  static of(limit: string, maximum: number) {
    return new FileTooComplex({
      message: `the file asks for more than ${maximum} ${LIMIT_WORDS[limit] ?? limit}; split it or scale it down`,
      details: { limit, maximum }
    })
  }
}

/** Answered with a Retry-After header of `details.retry_after_seconds`. */
export class ServerBusy extends Schema.Error<ServerBusy>("ServerBusy")(refusal("SERVER_BUSY", "too many files are being read; retry shortly"), {
  httpApiStatus: 503,
  description: "Too many files are being read; retry after the Retry-After seconds"
}) {
  readonly _tag = "ServerBusy"
  static of(retryAfterSeconds: number) {
    return new ServerBusy({ details: { retry_after_seconds: retryAfterSeconds } })
  }
  get retryAfterSeconds(): number {
    return Number(this.details.retry_after_seconds)
  }
}

export class TokenNotFound extends Schema.Error<TokenNotFound>("TokenNotFound")(refusal("NOT_FOUND", "download token not found, expired or already used"), {
  httpApiStatus: 404,
  description: "The download token is unknown, expired or already used"
}) {
  readonly _tag = "TokenNotFound"
}

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
      error: [InvalidMultipart, Forbidden, UnsupportedFileType, InvalidInput, EmptyFile, CorruptFile, MissingDependency, OcrTooSlow, FileTooComplex, ServerBusy]
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Sanitize files", description: "Images, PDFs and DICOM cleaned of sensitive content; the cleaned file is fetched once. Files over 50 MB answer 413 PAYLOAD_TOO_LARGE while they stream (the transport's answer, as for every body over its route's cap)." }))
{}

export class SanitizeFilesPublicGroup extends HttpApiGroup.make("sanitizeFilesPublic")
  .add(
    HttpApiEndpoint.get("downloadSanitizedFile", "/api/v1/sanitize/file/:token/download", {
      params: { token: Schema.String },
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" })),
      error: TokenNotFound
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Sanitize files (download)",
      description: "The one-time token is the credential: valid one hour, single use; answers the cleaned file with its original content type."
    })
  )
{}

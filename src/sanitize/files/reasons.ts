/** Why a file sanitize was refused (spec "Sanitize errors"; codes decided in docs/decisions.md). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Limit } from "./errors.js"

export { MAX_IMAGE_PIXELS, MAX_SCANNED_PAGES } from "./budgets.js"
export { LimitExceeded } from "./errors.js"

/** The OCR pool's queue is full; the caller retries after a moment. */
export class OcrBusy extends Error {
  constructor(readonly pending: number) {
    super(`OCR queue is full (${pending} images pending)`)
  }
}

/** One image took longer than the per-file OCR limit. */
export class OcrTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`OCR did not finish within ${timeoutMs} ms`)
  }
}

/** Too many decode jobs are waiting for decoder memory; the caller retries after a moment. */
export class DecodeBusy extends Error {
  constructor(readonly waiting: number) {
    super(`decoder memory is taken (${waiting} jobs waiting)`)
  }
}

/** The OCR workers could not start (the English data or the tesseract core is missing). */
export class OcrUnavailable extends Error {}

export class EmptyFile extends Schema.TaggedError<EmptyFile>()("EmptyFile", {}) {
  readonly code = "EMPTY_FILE"
  override readonly message = "the uploaded file is empty"
  readonly details = {}
}

export class MissingFile extends Schema.TaggedError<MissingFile>()("MissingFile", {}) {
  readonly code = "VALIDATION_ERROR"
  override readonly message = "file: a multipart part named `file` is required"
  readonly details = { issues: [{ path: "file", message: "required" }] }
}

export class UnsupportedFileType extends Schema.TaggedError<UnsupportedFileType>()("UnsupportedFileType", {}) {
  readonly code = "UNSUPPORTED_FILE_TYPE"
  override readonly message = "unsupported file type: send JPEG, PNG, GIF, BMP, TIFF, PDF or DICOM (identified by the leading bytes)"
  readonly details = {}
}

export class CorruptFileReason extends Schema.TaggedError<CorruptFileReason>()("CorruptFile", { file_type: Schema.String }) {
  readonly code = "CORRUPT_FILE"
  override readonly message = `the ${this.file_type} file cannot be read`
  readonly details = { file_type: this.file_type }
}

export class MissingDependency extends Schema.TaggedError<MissingDependency>()("MissingDependency", { file_type: Schema.String }) {
  readonly code = "MISSING_DEPENDENCY"
  override readonly message = `${this.file_type} files cannot be sanitized: the OCR engine or its language data is missing on this server`
  readonly details = { file_type: this.file_type }
}

export class OcrTooSlow extends Schema.TaggedError<OcrTooSlow>()("OcrTooSlow", { timeout_ms: Schema.Number }) {
  readonly code = "OCR_TIMEOUT"
  override readonly message = `OCR of one page took longer than ${this.timeout_ms} ms; send a smaller or simpler file`
  readonly details = { timeout_ms: this.timeout_ms }
}

/** What each budget counts, for the refusal's message. */
const LIMIT_WORDS: Record<Limit, string> = {
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

export class FileTooComplex extends Schema.TaggedError<FileTooComplex>()("FileTooComplex", { limit: Schema.String, maximum: Schema.Number }) {
  readonly code = "FILE_TOO_COMPLEX"
  override readonly message = `the file asks for more than ${this.maximum} ${LIMIT_WORDS[this.limit as Limit] ?? this.limit}; split it or scale it down`
  readonly details = { limit: this.limit, maximum: this.maximum }
}

export class ServerBusy extends Schema.TaggedError<ServerBusy>()("ServerBusy", { retry_after_seconds: Schema.Number }) {
  readonly code = "SERVER_BUSY"
  override readonly message = "too many files are being read; retry shortly"
  readonly details = { retry_after_seconds: this.retry_after_seconds }
}

export class TokenNotFound extends Schema.TaggedError<TokenNotFound>()("TokenNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "download token not found, expired or already used"
  readonly details = {}
}

export class InvalidField extends Schema.TaggedError<InvalidField>()("InvalidField", { path: Schema.String, problem: Schema.String }) {
  readonly code = "VALIDATION_ERROR"
  override readonly message = `${this.path}: ${this.problem}`
  readonly details = { issues: [{ path: this.path, message: this.problem }] }
}

export class SanitizeFilesError extends Schema.TaggedError<SanitizeFilesError>()("SanitizeFilesError", {
  reason: Schema.Union([EmptyFile, MissingFile, UnsupportedFileType, CorruptFileReason, MissingDependency, OcrTooSlow, FileTooComplex, ServerBusy, TokenNotFound, InvalidField])
}) {}

export const refuse = (reason: SanitizeFilesError["reason"]) => Effect.fail(new SanitizeFilesError({ reason }))

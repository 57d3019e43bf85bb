/** Why a file sanitize was refused (spec "Sanitize errors"; codes decided in docs/decisions.md). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

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

/** The OCR workers could not start (the English data or the tesseract core is missing). */
export class OcrUnavailable extends Error {}

/** A file whose work would be unbounded: too many pixels, or too many pages to OCR. */
export class LimitExceeded extends Error {
  constructor(
    readonly limit: "pixels" | "scanned_pages",
    readonly maximum: number
  ) {
    super(`more than ${maximum} ${limit.replace("_", " ")}`)
  }
}

/** Pixels of one image or rendered page (about 8000 × 8000 at most). */
export const MAX_IMAGE_PIXELS = 64_000_000
/** Pages without a text layer OCR'd per PDF. */
export const MAX_SCANNED_PAGES = 100

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

export class FileTooComplex extends Schema.TaggedError<FileTooComplex>()("FileTooComplex", { limit: Schema.String, maximum: Schema.Number }) {
  readonly code = "FILE_TOO_COMPLEX"
  override readonly message = `the file has more than ${this.maximum} ${this.limit.replace("_", " ")}; split it or scale it down`
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

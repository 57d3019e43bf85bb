/**
 * Why a file sanitize was refused: the area's one error, whose reasons are the wire's refusals
 * (protocol/sanitize-files.ts), and the pipeline's own failures that the service turns into them.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../../protocol/errors.js"
import {
  CorruptFile,
  EmptyFile,
  FileTooComplex,
  MissingDependency,
  OcrTooSlow,
  ServerBusy,
  TokenNotFound,
  UnsupportedFileType
} from "../../../protocol/sanitize-files.js"
import { Reasons } from "../../platform/domain-error.js"


export { MAX_IMAGE_PIXELS, MAX_SCANNED_PAGES } from "./budgets.js"
export { LimitExceeded } from "./errors.js"
// `CorruptFile` of ./errors.js is the pipeline's failure; the refusal is exported under another name.
export { CorruptFile as CorruptFileReason, EmptyFile, FileTooComplex, MissingDependency, OcrTooSlow, ServerBusy, TokenNotFound, UnsupportedFileType }

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

/** A `file` part is required (422 VALIDATION_ERROR, as the other form fields' refusals). */
export const missingFile = () =>
  new InvalidInput({ message: "file: a multipart part named `file` is required", details: { issues: [{ path: "file", message: "required" }] } })

export class SanitizeFilesError extends Schema.TaggedError<SanitizeFilesError>()("SanitizeFilesError", {
  reason: Reasons([EmptyFile, InvalidInput, UnsupportedFileType, CorruptFile, MissingDependency, OcrTooSlow, FileTooComplex, ServerBusy, TokenNotFound])
}) {}

export const refuse = (reason: SanitizeFilesError["reason"]) => Effect.fail(new SanitizeFilesError({ reason }))

/**
 * Why a file cannot be sanitized, as the pipeline and its worker threads raise it. Plain classes
 * with no imports and no parameter properties: the worker threads load this file as it is.
 */

/** The file cannot be read as its type (→ 422 CORRUPT_FILE). */
export class CorruptFile extends Error {}

export type Limit =
  | "pixels"
  | "file_pixels"
  | "pages"
  | "scanned_pages"
  | "page_characters"
  | "text_characters"
  | "elements"
  | "nesting_depth"
  | "decoder_memory_mb"
  | "decoder_seconds"

/** Decoding the file would pass one of the budgets (budgets.ts) (→ 422 FILE_TOO_COMPLEX). */
export class LimitExceeded extends Error {
  readonly limit: Limit
  readonly maximum: number
  constructor(limit: Limit, maximum: number) {
    super(`more than ${maximum} ${limit}`)
    this.limit = limit
    this.maximum = maximum
  }
}

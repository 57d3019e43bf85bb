/** Reads a PDF's text with poppler's `pdftotext`, a reader that shares no code with pdfkit. */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"

const candidates = ["/usr/bin/pdftotext", "/usr/local/bin/pdftotext"]

/** Where pdftotext is, or undefined (`.ci/run` installs poppler-utils; tests that need it skip without). */
export const pdftotextPath = candidates.find((path) => existsSync(path))

export const pdfText = (bytes: Uint8Array): string => {
  if (pdftotextPath === undefined) throw new Error("pdftotext (poppler-utils) is not installed")
  return execFileSync(pdftotextPath, ["-layout", "-enc", "UTF-8", "-", "-"], { input: bytes, maxBuffer: 64 * 1024 * 1024 }).toString("utf8")
}

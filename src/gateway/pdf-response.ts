/**
 * The one way the gateway answers a PDF download (explanations, compliance reports, DORA incidents):
 * 200 `application/pdf` with `Content-Length`, `Content-Disposition: attachment` and an `ETag` that is
 * the sha256 of the bytes, so a client can check the file it saved against the hash it was told.
 *
 * The handler's endpoint declares its success as
 * `Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" }))`; returning
 * this response from the handler bypasses the encoder, the way the sanitize download does.
 * `Content-Length` is written by the transport from the body (src/gateway/server.ts drops a header
 * one sets by hand), so it is always the true length.
 */

import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { sha256Tagged } from "../platform/digest.js"

/** `"sha256:" + hex` of the bytes: the value printed as `content_hash` and sent (quoted) as `ETag`. */
export const pdfContentHash = (bytes: Uint8Array): string => sha256Tagged(bytes)

/** Keeps a filename safe inside the quoted header value (no quotes, backslashes or control characters). */
const safeFilename = (filename: string): string => filename.replace(/[^A-Za-z0-9._-]/g, "_")

export const pdfResponse = (bytes: Uint8Array, filename: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.uint8Array(bytes, {
    contentType: "application/pdf",
    headers: {
      "content-disposition": `attachment; filename="${safeFilename(filename)}"`,
      etag: `"${pdfContentHash(bytes)}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff"
    }
  })

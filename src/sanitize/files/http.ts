/**
 * Handlers of `/api/v1/sanitize/file` (scope sanitize:write; API key or JWT) and of the public
 * one-time download. The upload's parts are read as they stream: the fields, and the file's bytes
 * gathered once (the transport already refused a body over 50 MB while it arrived).
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Multipart from "effect/http/Multipart"
import { HttpApiBuilder } from "effect/http-api"
import * as Stream from "effect/Stream"
import { GatewayApi } from "../../../protocol/api.js"
import { InvalidInput } from "../../../protocol/errors.js"
import { InvalidMultipart } from "../../../protocol/sanitize-files.js"
import { requireScope } from "../../access/guards.js"
import { addResponseHeaders, requestIdOf } from "../../gateway/request.js"
import { refusals } from "../../platform/wire-errors.js"
import { SANITIZE_MODES as MODES, SANITIZE_POLICIES as POLICIES, type SanitizeMode, type SanitizePolicy } from "../text.js"
import { missingFile, refuse } from "./reasons.js"
import { SanitizeFiles, type Upload } from "./service.js"

const MAX_FILENAME = 255

interface Form {
  file?: { name: string; chunks: Uint8Array[]; size: number }
  fields: Map<string, string>
}

/** Reads every part; only the `file` part's bytes are kept (other files are drained). */
const readForm = (parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>) =>
  Effect.gen(function* () {
    const form: Form = { fields: new Map() }
    yield* Stream.runForEach(parts, (part) => {
      if (part._tag === "Field") {
        form.fields.set(part.key, part.value)
        return Effect.void
      }
      if (part.key !== "file" || form.file !== undefined) return Stream.runDrain(part.content)
      const file = { name: part.name, chunks: [] as Uint8Array[], size: 0 }
      form.file = file
      return Stream.runForEach(part.content, (chunk) =>
        Effect.sync(() => {
          file.chunks.push(chunk)
          file.size += chunk.byteLength
        })
      )
    })
    return form
  })

const joined = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}

const invalid = (path: string, problem: string) => refuse(InvalidInput.one(path, problem))

const toUpload = (form: Form) =>
  Effect.gen(function* () {
    if (form.file === undefined) return yield* refuse(missingFile())
    const policy = form.fields.get("policy") || "default"
    if (!POLICIES.includes(policy as SanitizePolicy)) return yield* invalid("policy", `must be one of ${POLICIES.join(", ")}`)
    const mode = form.fields.get("mode") || "redact"
    if (!MODES.includes(mode as SanitizeMode)) return yield* invalid("mode", `must be one of ${MODES.join(", ")}`)
    const pixel = (form.fields.get("include_pixel_redaction") ?? "false").trim().toLowerCase()
    if (!["true", "false", "1", "0", ""].includes(pixel)) return yield* invalid("include_pixel_redaction", "must be true or false")
    const aiModel = form.fields.get("ai_model")
    if (aiModel !== undefined && aiModel.length > 200) return yield* invalid("ai_model", "at most 200 characters")
    const name = form.file.name.trim() === "" ? "file" : form.file.name.slice(0, MAX_FILENAME)
    return {
      aiModel: aiModel === undefined || aiModel.trim() === "" ? null : aiModel.trim(),
      bytes: joined(form.file.chunks, form.file.size),
      filename: name,
      policy: policy as SanitizePolicy,
      mode: mode as SanitizeMode,
      includePixelRedaction: pixel === "true" || pixel === "1"
    } satisfies Upload
  })

const badMultipart = (error: Multipart.MultipartError) => InvalidMultipart.of(error.reason._tag)

export const SanitizeFilesHttp = HttpApiBuilder.group(GatewayApi, "sanitizeFiles", (handlers) =>
  Effect.gen(function* () {
    const files = yield* SanitizeFiles
    return handlers.handle("sanitizeFile", ({ payload }) =>
      Effect.gen(function* () {
        const principal = yield* requireScope("sanitize:write")
        const request = yield* HttpServerRequest
        const requestId = requestIdOf(request)
        const form = yield* Effect.mapError(readForm(payload), badMultipart)
        return yield* Effect.flatMap(toUpload(form), (upload) => files.sanitize(principal, upload, { requestId })).pipe(
          refusals(
            "SanitizeFilesError",
            "InvalidInput",
            "EmptyFile",
            "UnsupportedFileType",
            "CorruptFile",
            "MissingDependency",
            "OcrTooSlow",
            "FileTooComplex",
            "ServerBusy"
          ),
          // A busy answer says when to come back.
          Effect.tapError((error) =>
            error._tag === "ServerBusy" ? Effect.sync(() => addResponseHeaders(request, { "retry-after": String(error.retryAfterSeconds) })) : Effect.void
          )
        )
      })
    )
  })
)

export const SanitizeFilesPublicHttp = HttpApiBuilder.group(GatewayApi, "sanitizeFilesPublic", (handlers) =>
  Effect.gen(function* () {
    const files = yield* SanitizeFiles
    return handlers.handle("downloadSanitizedFile", ({ params }) =>
      Effect.map(files.download(params.token).pipe(refusals("SanitizeFilesError", "TokenNotFound")), (file) =>
        HttpServerResponse.uint8Array(file.bytes, {
          contentType: file.contentType,
          headers: { "content-disposition": `attachment; filename="${file.filename}"`, "cache-control": "no-store", "x-content-type-options": "nosniff" }
        })
      )
    )
  })
)

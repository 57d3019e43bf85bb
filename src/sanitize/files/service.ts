/**
 * File sanitize (spec "POST /sanitize/file", "GET /sanitize/file/{token}/download"): type by
 * leading bytes, the pipeline of its type, and the cleaned file kept for one download within an
 * hour, sealed under the master key and addressed by a keyed digest of its token (the token is
 * the only credential and is never stored). The audit trail records that a sanitize ran (type,
 * size, hashes, counts), never content. A sweeper deletes files nobody fetched.
 */
import { hkdfSync, randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type { Principal } from "../../../protocol/auth.js"
import { ModelCalls } from "../../models/calls.js"
import { makeModelsStore } from "../../models/store.js"
import { auditActor } from "../../platform/audit.js"
import { Config } from "../../platform/config.js"
import { sha256Tagged } from "../../platform/digest.js"
import { hmacSha256Hex } from "../../platform/hmac.js"
import { logLine } from "../../platform/log.js"
import { Secrets } from "../../platform/secrets.js"
import { AI_SYSTEM_PROMPT, type AiItem, aiPrompt, itemsOf, MAX_AI_REVIEW_CHARS } from "../ai-pass.js"
import type { SanitizeFinding, SanitizeMode, SanitizePolicy } from "../text.js"
import type { Review } from "./ai-review.js"
import { stopDecoders } from "./decoders.js"
import { contentTypeOf, detectFileType, downloadName, type FileType } from "./detect.js"
import { stopDicomThread } from "./dicom-thread.js"
import { type DicomTagAction, sanitizeFile } from "./engine.js"
import { CorruptFile } from "./errors.js"
import type { PixelRedaction } from "./image.js"
import { makeOcrPool } from "./ocr.js"
import {
  CorruptFileReason,
  DecodeBusy,
  EmptyFile,
  FileTooComplex,
  LimitExceeded,
  MissingDependency,
  OcrBusy,
  OcrTimeout,
  OcrTooSlow,
  OcrUnavailable,
  refuse,
  type SanitizeFilesError,
  ServerBusy,
  TokenNotFound,
  UnsupportedFileType
} from "./reasons.js"
import { makeSanitizedFileStore } from "./store.js"

export interface Upload {
  /** The model for the AI second pass; null or empty: rules only. */
  readonly aiModel: string | null
  readonly bytes: Uint8Array
  readonly filename: string
  readonly policy: SanitizePolicy
  readonly mode: SanitizeMode
  readonly includePixelRedaction: boolean
}

export interface FileReport {
  readonly file_type: FileType
  readonly original_filename: string
  readonly findings: SanitizeFinding[]
  readonly blocked: boolean
  readonly mode: SanitizeMode
  readonly policy: SanitizePolicy
  readonly input_hash: string
  readonly output_hash: string
  readonly download_token: string | null
  readonly download_url: string | null
  readonly tokenized_text: string | null
  readonly token_mapping: Record<string, string> | null
  readonly dicom_tag_actions: DicomTagAction[]
  readonly pixel_redactions: PixelRedaction[]
}

export interface Download {
  readonly bytes: Uint8Array
  readonly contentType: string
  readonly filename: string
}

export interface SanitizeFilesService {
  /** Cleans the upload by its type's pipeline, keeps the cleaned file for one download, and records that it ran. */
  readonly sanitize: (principal: Principal, upload: Upload, context: { readonly requestId: string }) => Effect.Effect<FileReport, SanitizeFilesError>
  /** Spends a download token: the cleaned file, once. */
  readonly download: (token: string) => Effect.Effect<Download, SanitizeFilesError>
  /** Deletes the files nobody downloaded in time; answers how many. */
  readonly sweep: Effect.Effect<number>
  /** Images waiting for or in OCR. */
  readonly pendingOcr: () => number
}

const EMPTY_HASH = sha256Tagged(new Uint8Array(0))
/** Model calls of the AI pass per file (one per image, page or scanned page). */
const MAX_AI_CALLS = 20
/** How long a busy client is asked to wait. */
const RETRY_AFTER_SECONDS = 5

export const makeSanitizeFiles = Effect.gen(function* () {
  const store = yield* makeSanitizedFileStore
  const config = yield* Config
  const secrets = yield* Secrets
  const tokenKey = Buffer.from(hkdfSync("sha256", secrets.pepper, Buffer.alloc(0), "agent-gateway/sanitized-file-token", 32))
  const digestOf = (token: string) => hmacSha256Hex(tokenKey, token)
  const pool = makeOcrPool({
    ...(config.sanitizeOcrWorkers > 0 ? { workers: config.sanitizeOcrWorkers } : {}),
    queueLimit: config.sanitizeOcrQueue,
    timeoutMs: config.sanitizeOcrTimeoutMs
  })
  yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([pool.close(), stopDecoders(), stopDicomThread()])))

  const calls = yield* ModelCalls
  const preferences = yield* makeModelsStore
  const services = yield* Effect.context<never>()
  const runPromise = Effect.runPromiseWith(services)

  /**
   * The AI pass for one upload, or why there is none (disabled for sanitize, unknown model). Each
   * text is one model call, at most MAX_AI_CALLS per file; a call that fails or is late finds nothing.
   */
  const aiReview = (orgUuid: string, model: string) =>
    Effect.gen(function* () {
      const disabled = (yield* preferences.get(orgUuid)).disabled.sanitize ?? []
      if (disabled.includes(model)) return { review: undefined, skipped: "disabled" }
      if (!(yield* calls.isKnown(orgUuid, model))) return { review: undefined, skipped: "unknown model" }
      const stats = { calls: 0, failed: 0 }
      const review: Review = (text) => {
        if (stats.calls >= MAX_AI_CALLS || text.trim() === "") return Promise.resolve([])
        stats.calls++
        const seen = text.slice(0, MAX_AI_REVIEW_CHARS)
        return runPromise(
          calls.ask({ orgUuid, model, system: AI_SYSTEM_PROMPT, prompt: aiPrompt(seen), timeoutMs: config.sanitizeAiTimeoutMs }).pipe(
            Effect.map((answer) => itemsOf(answer, seen)),
            Effect.timeoutOrElse({ duration: config.sanitizeAiTimeoutMs, orElse: () => Effect.fail("late" as const) }),
            Effect.catch(() =>
              Effect.sync((): ReadonlyArray<AiItem> => {
                stats.failed++
                return []
              })
            )
          )
        )
      }
      return { review, skipped: null, stats }
    })

  const run = (upload: Upload, type: FileType, review: Review | undefined) =>
    Effect.tryPromise({
      try: () => sanitizeFile(upload.bytes, type, { policy: upload.policy, mode: upload.mode, includePixelRedaction: upload.includePixelRedaction, ocr: pool.ocr, review }),
      catch: (cause) => cause
    }).pipe(
      Effect.catch((cause) => {
        if (cause instanceof CorruptFile) return refuse(CorruptFileReason.of(type))
        if (cause instanceof OcrBusy || cause instanceof DecodeBusy) return refuse(ServerBusy.of(RETRY_AFTER_SECONDS))
        if (cause instanceof OcrTimeout) return refuse(OcrTooSlow.of(cause.timeoutMs))
        if (cause instanceof LimitExceeded) return refuse(FileTooComplex.of(cause.limit, cause.maximum))
        if (cause instanceof OcrUnavailable) return refuse(MissingDependency.of(type))
        return Effect.die(cause)
      })
    )

  /** Keeps the cleaned bytes for one download; answers the token. */
  const keep = Effect.fnUntraced(function* (principal: Principal, type: FileType, filename: string, bytes: Uint8Array) {
    const token = `sft_${randomBytes(32).toString("base64url")}`
    const tokenDigest = digestOf(token)
    const now = yield* Clock.currentTimeMillis
    yield* store.insert({
      tokenDigest,
      orgUuid: principal.orgUuid,
      fileType: type,
      originalFilename: filename,
      sealedContent: secrets.envelope.seal(bytes, `sanitized_file:${tokenDigest}`),
      expiresAt: new Date(now + config.sanitizeFileTtlMs).toISOString()
    })
    return token
  })

  const sanitize = Effect.fn("SanitizeFiles.sanitize")(function* (principal: Principal, upload: Upload, context: { readonly requestId: string }) {
    if (upload.bytes.byteLength === 0) return yield* refuse(new EmptyFile({}))
    const type = detectFileType(upload.bytes)
    if (type === undefined) return yield* refuse(new UnsupportedFileType({}))
    const ai = upload.aiModel ? yield* aiReview(principal.orgUuid, upload.aiModel) : undefined
    const result = yield* run(upload, type, ai?.review)
    const token = result.bytes === null ? null : yield* keep(principal, type, upload.filename, result.bytes)
    const report: FileReport = {
      file_type: type,
      original_filename: upload.filename,
      findings: result.findings,
      blocked: result.blocked,
      mode: upload.mode,
      policy: upload.policy,
      input_hash: sha256Tagged(upload.bytes),
      // Block and flag hand nothing back: the hash of no output, or of the unchanged input.
      output_hash: result.bytes !== null ? sha256Tagged(result.bytes) : upload.mode === "flag" ? sha256Tagged(upload.bytes) : EMPTY_HASH,
      download_token: token,
      download_url: token === null ? null : `${config.baseUrl}/api/v1/sanitize/file/${token}/download`,
      tokenized_text: result.tokenized_text,
      token_mapping: result.token_mapping,
      dicom_tag_actions: result.dicom_tag_actions,
      pixel_redactions: result.pixel_redactions
    }
    yield* store.audit({
      orgUuid: principal.orgUuid,
      actor: auditActor(principal),
      event: "sanitize.file",
      target: null,
      requestId: context.requestId,
      details: {
        file_type: type,
        size_bytes: upload.bytes.byteLength,
        policy: upload.policy,
        mode: upload.mode,
        blocked: result.blocked,
        input_hash: report.input_hash,
        output_hash: report.output_hash,
        finding_count: result.findings.reduce((sum, finding) => sum + finding.count, 0),
        entity_types: result.findings.map((finding) => finding.entity_type),
        pixel_redaction_count: result.pixel_redactions.length,
        dicom_tag_action_count: result.dicom_tag_actions.length,
        ai_model: upload.aiModel,
        ai_findings: result.findings.filter((finding) => finding.source === "ai").length,
        ai_skipped: ai?.skipped ?? null,
        ai_failed_calls: ai?.stats?.failed ?? 0
      }
    })
    return report
  })

  const download = Effect.fn("SanitizeFiles.download")(function* (token: string) {
    // Anything that is not one of our tokens cannot match a digest; skip the query.
    if (!/^sft_[A-Za-z0-9_-]{43}$/.test(token)) return yield* refuse(new TokenNotFound({}))
    const tokenDigest = digestOf(token)
    const row = yield* store.consume(tokenDigest)
    if (row === undefined) return yield* refuse(new TokenNotFound({}))
    const bytes = secrets.envelope.open(row.sealed_content, `sanitized_file:${tokenDigest}`)
    return { bytes, contentType: contentTypeOf[row.file_type], filename: downloadName(row.original_filename, row.file_type) } satisfies Download
  })

  return SanitizeFiles.of({ sanitize, download, sweep: store.sweep, pendingOcr: pool.pending })
})

export class SanitizeFiles extends Context.Service<SanitizeFiles, SanitizeFilesService>()("gateway/SanitizeFiles") {
  /** The service, plus the sweeper that deletes cleaned files nobody downloaded within the hour. */
  static readonly layer = Layer.effect(SanitizeFiles)(
    Effect.gen(function* () {
      const files = yield* makeSanitizeFiles
      const config = yield* Config
      const sweep = files.sweep.pipe(Effect.catchCause((cause) => Effect.sync(() => logLine("error", "sanitized file sweep failed", { cause: String(cause) }))))
      yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(config.sanitizeSweepMs)))
      return files
    })
  )
}

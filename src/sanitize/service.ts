/**
 * Text sanitizing as a service: the rule engine (text.ts), an optional AI second pass through
 * the model layer, an audit entry that records that a sanitize ran (hashes, policy, mode, counts;
 * never content) and a signed receipt over the same facts. The dry run does only the first step.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { MAX_SANITIZE_CHARS, type SanitizeReceipt } from "../../protocol/sanitize.js"
import { ModelCalls } from "../models/calls.js"
import { makeModelsStore } from "../models/store.js"
import { auditActor, insertAudit } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { Receipts } from "../receipts/service.js"
import { sha256Tagged } from "../receipts/signing.js"
import { AI_SYSTEM_PROMPT, aiPrompt, applyAiItems, itemsOf, MAX_AI_REVIEW_CHARS } from "./ai-pass.js"
import { refuse, type SanitizeError } from "./errors.js"
import { detokenize as detokenizeText, type SanitizeFinding, type SanitizeMode, type SanitizePolicy, sanitizeText, TokenBook } from "./text.js"

export interface SanitizeInput {
  readonly content: string
  readonly policy?: SanitizePolicy | undefined
  readonly mode?: SanitizeMode | undefined
  readonly ai_model?: string | null | undefined
}

export interface SanitizeOutcome {
  readonly clean: string
  readonly blocked: boolean
  readonly mode: SanitizeMode
  readonly policy: SanitizePolicy
  readonly input_hash: string
  readonly output_hash: string
  readonly findings: ReadonlyArray<SanitizeFinding>
  readonly token_mapping: Record<string, string> | null
  readonly warnings: ReadonlyArray<string>
}

/** A sanitize that ran: the outcome and the signed receipt over its facts. */
export interface SanitizeAnswer extends SanitizeOutcome {
  readonly receipt: typeof SanitizeReceipt.Type
}

export interface SanitizeService {
  /** Sanitizes, reviews with `ai_model` when asked, records the run and signs a receipt over it. */
  readonly sanitize: (principal: Principal, input: SanitizeInput, context: { readonly requestId: string | null }) => Effect.Effect<SanitizeAnswer, SanitizeError>
  /** Same result by the rules alone; nothing is written anywhere. */
  readonly dryRun: (input: SanitizeInput) => Effect.Effect<SanitizeOutcome, SanitizeError>
  readonly detokenize: (content: string, mapping: Readonly<Record<string, string>>) => Effect.Effect<{ readonly content: string }, SanitizeError>
}

export const SANITIZE_RECEIPT_VERSION = "1.0"

/** Refuses content over the cap before any scanning. */
const checkLength = (content: string) =>
  content.length > MAX_SANITIZE_CHARS ? refuse(InvalidInput.one("content", `at most ${MAX_SANITIZE_CHARS} characters`)) : Effect.void

const countsOf = (findings: ReadonlyArray<SanitizeFinding>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const f of findings) counts[f.entity_type] = (counts[f.entity_type] ?? 0) + f.count
  return counts
}

/** The rule-based result, with both hashes. */
export const sanitizeByRules = (input: SanitizeInput, tokens = new TokenBook()): SanitizeOutcome => {
  const policy = input.policy ?? "default"
  const mode = input.mode ?? "redact"
  const result = sanitizeText(input.content, { policy, mode, tokens })
  return {
    clean: result.clean,
    blocked: result.blocked,
    mode,
    policy,
    input_hash: sha256Tagged(input.content),
    output_hash: sha256Tagged(result.clean),
    findings: result.findings,
    token_mapping: result.token_mapping,
    warnings: []
  }
}

export const makeSanitize = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const receipts = yield* Receipts
  const calls = yield* ModelCalls
  const preferences = yield* makeModelsStore
  const config = yield* Config

  /** The rules' outcome with what the model found added, or with a warning saying why it was not. */
  const secondPass = (orgUuid: string, model: string, input: SanitizeInput, ruled: SanitizeOutcome, tokens: TokenBook): Effect.Effect<SanitizeOutcome> =>
    Effect.gen(function* () {
      const skipped = (why: string) => ({ ...ruled, warnings: [...ruled.warnings, `AI review with ${model} skipped: ${why}; the rule-based result stands`] })
      // Blocked already: nothing left to find. Block mode otherwise reviews the untouched input.
      if (ruled.blocked) return ruled
      const disabled = (yield* preferences.get(orgUuid)).disabled.sanitize ?? []
      if (disabled.includes(model)) return skipped("the model is disabled for sanitize in this organization")
      if (!(yield* calls.isKnown(orgUuid, model))) return skipped("unknown model")
      const reviewed = ruled.mode === "block" ? input.content : ruled.clean
      const answer = yield* calls
        .ask({ orgUuid, model, system: AI_SYSTEM_PROMPT, prompt: aiPrompt(reviewed), timeoutMs: config.sanitizeAiTimeoutMs })
        .pipe(
          Effect.map((a) => ({ ok: true as const, answer: a })),
          Effect.catchTag("ModelCallFailed", (failure) => Effect.succeed({ ok: false as const, why: failure.message })),
          Effect.timeoutOrElse({ duration: config.sanitizeAiTimeoutMs, orElse: () => Effect.succeed({ ok: false as const, why: `no answer within ${config.sanitizeAiTimeoutMs} ms` }) })
        )
      if (!answer.ok) return skipped(answer.why)
      const truncated = reviewed.length > MAX_AI_REVIEW_CHARS ? [`AI review with ${model} read only the first ${MAX_AI_REVIEW_CHARS} characters`] : []
      const items = itemsOf(answer.answer, reviewed.slice(0, MAX_AI_REVIEW_CHARS))
      if (items.length === 0) return { ...ruled, findings: ruled.findings, warnings: [...ruled.warnings, ...truncated] }
      const applied = applyAiItems(reviewed, items, ruled.mode, tokens)
      const blocked = ruled.mode === "block" && applied.findings.length > 0
      const clean = ruled.mode === "block" ? (blocked ? "" : ruled.clean) : applied.clean
      return {
        ...ruled,
        clean,
        blocked,
        output_hash: sha256Tagged(clean),
        findings: [...ruled.findings, ...applied.findings],
        token_mapping: ruled.mode === "tokenize" ? (tokens.mapping() ?? {}) : null,
        warnings: [...ruled.warnings, ...truncated]
      }
    })

  const sanitize = Effect.fn("Sanitize.sanitize")(function* (principal: Principal, input: SanitizeInput, context: { readonly requestId: string | null }) {
    yield* checkLength(input.content)
    const tokens = new TokenBook()
    const ruled = sanitizeByRules(input, tokens)
    const model = input.ai_model ?? null
    const outcome = model === null || model === "" ? ruled : yield* secondPass(principal.orgUuid, model, input, ruled, tokens)
    const receiptUuid = newId("rct")
    const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
    const counts = countsOf(outcome.findings)
    const facts = {
      input_hash: outcome.input_hash,
      output_hash: outcome.output_hash,
      policy: outcome.policy,
      mode: outcome.mode,
      blocked: outcome.blocked,
      findings: counts
    }
    const signed = yield* receipts.signDocument({
      receipt_version: SANITIZE_RECEIPT_VERSION,
      receipt_type: "sanitize",
      receipt_uuid: receiptUuid,
      org_uuid: principal.orgUuid,
      ...facts,
      created_at: createdAt
    })
    // The shared audit helper, not a store of this area: a failure there is a defect.
    yield* Effect.orDie(
      insertAudit(sql, {
        orgUuid: principal.orgUuid,
        actor: auditActor(principal),
        event: "sanitize.text",
        target: receiptUuid,
        details: { ...facts, ai_model: model, ai_findings: outcome.findings.filter((f) => f.source === "ai").length },
        requestId: context.requestId
      })
    )
    return {
      ...outcome,
      receipt: {
        receipt_uuid: receiptUuid,
        payload_hash: signed.payload_hash,
        signature: signed.signature,
        public_key_id: signed.public_key_id,
        timestamp: createdAt,
        timestamp_authority: signed.timestamp_authority,
        signed_payload: signed.signed_payload,
        timestamp_token: signed.timestamp_token
      }
    }
  })

  const dryRun = Effect.fn("Sanitize.dryRun")(function* (input: SanitizeInput) {
    yield* checkLength(input.content)
    return sanitizeByRules(input)
  })

  const detokenize = Effect.fn("Sanitize.detokenize")(function* (content: string, mapping: Readonly<Record<string, string>>) {
    yield* checkLength(content)
    return { content: detokenizeText(content, mapping) }
  })

  return Sanitize.of({ sanitize, dryRun, detokenize })
})

export class Sanitize extends Context.Service<Sanitize, SanitizeService>()("gateway/Sanitize") {
  static readonly layer = Layer.effect(Sanitize, makeSanitize)
}

/**
 * Compliance bundles, sealed inside the request (CONTRACT-sdk-beyond §4). A bundle first claims its
 * row (`sealing`, holding the idempotency key, committed so a concurrent request sees it), then one
 * transaction numbers the period's receipts in Postgres, folds their digests page by page into the
 * settlement log's tiles (an RFC 9162 tree of this bundle only), counts the framework summary,
 * timestamps the root, signs the record like a receipt and turns the claim into the sealed row with
 * its usage event. A refusal, failure or interruption rolls back and drops the claim: nothing kept.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { Principal } from "../../protocol/auth.js"
import { listPage, type Page } from "../../protocol/common.js"
import {
  BUNDLE_VERSION,
  type BundleFramework,
  type BundleInclusionProof,
  type BundleRecord,
  type ComplianceBundle,
  type CreateBundleRequest,
  type ExportedReceipt,
  type FrameworkSummary
} from "../../protocol/compliance-bundles.js"
import { ActionStatuses } from "../../protocol/lists.js"
import { Flags } from "../flags/service.js"
import { Config } from "../platform/config.js"
import { platformDid } from "../platform/did-web.js"
import { sha256Tagged, taggedDigest } from "../platform/digest.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { newUuid } from "../platform/ids.js"
import { parseInstant } from "../platform/instant.js"
import { EMPTY_ROOT, leafHash } from "../receipts/merkle.js"
import { Receipts } from "../receipts/service.js"
import { canonicalJsonBytes, signPayload } from "../receipts/signing.js"
import { inclusionFromTiles, LogAppender, rootFromTiles, tilesForInclusion, tilesForRoot } from "../settlements/log.js"
import { BundleNotFound, BundleReceiptNotFound, type BundlesError, BundleTooLarge, DuplicateBundleRequest, refuse } from "./bundles-errors.js"
import { type ClaimRow, LEAF_CHUNK, makeBundlesStore, type ReceiptTally, type Scope, type SealedRow } from "./bundles-store.js"

const DAY_MS = 86_400_000
const MAX_SPAN_MS = 366 * DAY_MS
const MAX_KEY = 255
/** A claim older than this belongs to a request that died (a 50,000-receipt bundle seals in seconds). */
const STALE_CLAIM_MS = 10 * 60_000
/** Chunks of leaf digests read back per query while sealing (32,768 digests: 1 MB). */
const CHUNKS_PER_PAGE = 64
const DORA_FLAG = "dora"

export const EXPORT_VERSION = "1.0"

/** The ordered steps of an offline check, as the export states them. */
export const VERIFICATION_STEPS = [
  "1. Canonicalize `bundle` with RFC 8785 (JCS); `sha256:` + hex of the SHA-256 of those UTF-8 bytes must equal `bundle_hash`.",
  "2. Verify `signature` (`ed25519:` + base64url) over the same bytes with the Ed25519 key `public_key_id` of `signing.public_keys` (also at `signing.jwks_url`).",
  "3. For every receipt: `sha256:` + hex of the SHA-256 of `signed_payload` (its exact JCS text) must equal `payload_hash`, and `signature` must verify over those bytes with its `public_key_id`.",
  "4. In `index` order, each leaf is the 32 bytes of a receipt's `payload_hash`, hashed SHA-256(0x00 ‖ bytes); the RFC 9162 tree over them (node hash SHA-256(0x01 ‖ left ‖ right), split at the largest power of two) must have root `merkle_root`; no receipts: SHA-256 of the empty string.",
  "5. `bundle.receipt_count` must equal the number of receipts, and `bundle.merkle_root` the root of step 4.",
  "6. `timestamp_token` is an RFC 3161 token (base64 DER) whose message imprint is the 32 bytes of `merkle_root`; check it with `openssl ts -verify -digest <hex of merkle_root> -in token.der -token_in -CAfile tsa.pem` (`signing.tsa_certificate`)."
] as const

/** A checked request, ready to seal. */
export interface BundlePlan {
  readonly bundleUuid: string
  readonly orgUuid: string
  readonly createdBy: string
  readonly framework: BundleFramework
  readonly title: string
  readonly periodStart: string
  readonly periodEnd: string
  readonly agentFilter: ReadonlyArray<string> | null
  readonly idempotencyKey: string | null
  /** sha256 of the JCS of the five fields as sent (absent = null): what a replay must repeat. */
  readonly requestHash: string
}

export type Prepared = { readonly kind: "replay"; readonly bundle: ComplianceBundle } | { readonly kind: "new"; readonly plan: BundlePlan }

/** The request's fields, checked and normalized; every problem listed at once. */
export const readBundleRequest = (
  request: CreateBundleRequest,
  headerKey: string | undefined
): { readonly issues: ReadonlyArray<Issue>; readonly plan: Omit<BundlePlan, "bundleUuid" | "orgUuid" | "createdBy"> } => {
  const issues: Array<Issue> = []
  const bodyKey = request.idempotency_key ?? undefined
  if (headerKey !== undefined && (headerKey.length < 1 || headerKey.length > MAX_KEY)) issues.push({ path: "headers.idempotency-key", message: `must be 1-${MAX_KEY} characters` })
  if (headerKey !== undefined && bodyKey !== undefined && headerKey !== bodyKey) issues.push({ path: "idempotency_key", message: "differs from the Idempotency-Key header" })
  const start = parseInstant(request.period_start.trim())
  const end = parseInstant(request.period_end.trim(), true)
  if (start === undefined) issues.push({ path: "period_start", message: "must be an ISO 8601 date or date-time" })
  if (end === undefined) issues.push({ path: "period_end", message: "must be an ISO 8601 date or date-time" })
  if (start !== undefined && end !== undefined) {
    if (end < start) issues.push({ path: "period_end", message: "must not be before period_start" })
    else if (end - start > MAX_SPAN_MS) issues.push({ path: "period_end", message: "a period spans at most 366 days" })
  }
  const periodStart = start === undefined ? "" : new Date(start).toISOString()
  const periodEnd = end === undefined ? "" : new Date(end).toISOString()
  const sent = {
    framework: request.framework,
    period_start: request.period_start,
    period_end: request.period_end,
    title: request.title ?? null,
    agent_filter: request.agent_filter ?? null
  }
  return {
    issues,
    plan: {
      framework: request.framework,
      title: request.title ?? `${request.framework} ${periodStart}/${periodEnd}`,
      periodStart,
      periodEnd,
      agentFilter: request.agent_filter === undefined || request.agent_filter === null ? null : [...new Set(request.agent_filter)],
      idempotencyKey: bodyKey ?? headerKey ?? null,
      requestHash: sha256Tagged(canonicalJsonBytes(sent))
    }
  }
}

const asBundle = (row: SealedRow): ComplianceBundle => ({
  ...row.record,
  id: row.bundle_uuid,
  status: "sealed",
  bundle_hash: row.bundle_hash,
  signature: row.signature,
  public_key_id: row.public_key_id,
  signing_key_id: row.public_key_id,
  created_at: row.record.sealed_at,
  created_by: row.created_by,
  idempotency_key: row.idempotency_key
})

const encoder = new TextEncoder()
/** An object's JSON without its braces, to splice into a streamed document. */
const members = (value: Record<string, unknown>) => JSON.stringify(value).slice(1, -1)

export const makeComplianceBundles = Effect.gen(function* () {
  const store = yield* makeBundlesStore
  const receipts = yield* Receipts
  const flags = yield* Flags
  const config = yield* Config
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  const found = (orgUuid: string, bundleUuid: string) =>
    Effect.flatMap(store.bundleById(orgUuid, bundleUuid), (row) => (row === undefined ? refuse(BundleNotFound.of(bundleUuid)) : Effect.succeed(row)))

  /** What a request holding a taken key gets: the stored bundle, or 409. */
  const answerHolder = (plan: Pick<BundlePlan, "orgUuid" | "requestHash">, key: string, holder: ClaimRow) =>
    Effect.gen(function* () {
      if (holder.request_hash !== plan.requestHash) return yield* refuse(DuplicateBundleRequest.of(key, "other_body"))
      if (holder.status === "sealing") return yield* refuse(DuplicateBundleRequest.of(key, "running"))
      const row = yield* store.bundleById(plan.orgUuid, holder.bundle_uuid)
      if (row === undefined) return yield* Effect.die(new Error(`bundle ${holder.bundle_uuid} is sealed but unreadable`))
      return asBundle(row)
    })

  const isStale = (holder: ClaimRow, at: number) => holder.status === "sealing" && Date.parse(holder.claimed_at) < at - STALE_CLAIM_MS

  const prepare = Effect.fn("ComplianceBundles.prepare")(function* (principal: Principal, request: CreateBundleRequest, headerKey: string | undefined) {
    const { issues, plan } = readBundleRequest(request, headerKey)
    if (issues.length > 0) return yield* refuse(InvalidInput.of(issues))
    const full: BundlePlan = { ...plan, bundleUuid: newUuid(), orgUuid: principal.orgUuid, createdBy: principal.userUuid }
    if (full.idempotencyKey !== null) {
      const holder = yield* store.claimOf(full.orgUuid, full.idempotencyKey)
      // A stale claim is dropped when this request claims the key.
      if (holder !== undefined && !isStale(holder, yield* Clock.currentTimeMillis)) {
        return { kind: "replay", bundle: yield* answerHolder(full, full.idempotencyKey, holder) } satisfies Prepared
      }
    }
    return { kind: "new", plan: full } satisfies Prepared
  })

  /** Claims the plan's row; a key taken meanwhile answers its holder (a replay) or refuses. */
  const claim = (plan: BundlePlan) =>
    Effect.gen(function* () {
      for (let attempt = 0; attempt < 3; attempt++) {
        const at = yield* Clock.currentTimeMillis
        const claimed = yield* store.claim({
          bundle_uuid: plan.bundleUuid,
          org_uuid: plan.orgUuid,
          framework: plan.framework,
          idempotency_key: plan.idempotencyKey,
          request_hash: plan.requestHash,
          created_by: plan.createdBy,
          claimed_at: new Date(at).toISOString()
        })
        if (claimed) return undefined
        const key = plan.idempotencyKey!
        const holder = yield* store.claimOf(plan.orgUuid, key)
        // Released between the two statements: claim again.
        if (holder === undefined) continue
        if (isStale(holder, at)) {
          yield* store.dropStaleClaim(plan.orgUuid, key, new Date(at - STALE_CLAIM_MS).toISOString())
          continue
        }
        return yield* answerHolder(plan, key, holder)
      }
      return yield* refuse(DuplicateBundleRequest.of(plan.idempotencyKey!, "running"))
    })

  /** Folds the leaves into tiles page by page; answers the root. */
  const buildTree = (plan: BundlePlan, size: number) =>
    Effect.gen(function* () {
      if (size === 0) return new Uint8Array(EMPTY_ROOT)
      const appender = new LogAppender(0, new Map())
      const chunks = Math.ceil(size / LEAF_CHUNK)
      for (let from = 0; from < chunks; from += CHUNKS_PER_PAGE) {
        const to = Math.min(chunks, from + CHUNKS_PER_PAGE)
        const digests = yield* store.leafDigests(plan.bundleUuid, from, to)
        if (digests.length !== Math.min(size, to * LEAF_CHUNK) - from * LEAF_CHUNK) return yield* Effect.die(new Error(`bundle ${plan.bundleUuid}: chunks ${from}..${to} incomplete`))
        for (const digest of digests) appender.append(leafHash(digest))
        yield* store.writeTiles(plan.bundleUuid, plan.orgUuid, appender.takeWritten())
      }
      yield* store.writeTiles(plan.bundleUuid, plan.orgUuid, appender.partialTiles())
      return rootFromTiles(yield* store.readTiles(plan.bundleUuid, tilesForRoot(size)), size)
    })

  const summaryOf = (plan: BundlePlan, scope: Scope, tally: ReceiptTally): Effect.Effect<FrameworkSummary> =>
    Effect.gen(function* () {
      const common = {
        receipt_count: tally.receipt_count,
        by_receipt_status: { notarized: tally.notarized, failed: tally.failed, denied: tally.denied, denied_by_human: tally.denied_by_human },
        distinct_agents: tally.distinct_agents
      }
      switch (plan.framework) {
        case "raw":
          return common
        case "eu_ai_act_art12": {
          const actions = yield* store.actionTally(scope)
          return {
            ...common,
            article: "12" as const,
            total_actions: actions.total_actions,
            status_breakdown: Object.fromEntries(ActionStatuses.map((status) => [status, actions.status_breakdown[status] ?? 0])),
            distinct_models: actions.distinct_models,
            human_approvals: actions.human_approvals,
            timestamped_receipts: tally.timestamped
          }
        }
        case "iso_42001": {
          const actions = yield* store.actionTally(scope)
          return {
            ...common,
            standard: "ISO/IEC 42001:2023" as const,
            controls: ["A.6.2.6", "A.6.2.8"],
            distinct_agent_versions: actions.distinct_agent_versions,
            policy_denials: actions.policy_denials,
            human_reviews: actions.human_approvals + actions.human_denials,
            output_scan_flagged: actions.output_scan_flagged
          }
        }
        case "aiuc_1": {
          const actions = yield* store.actionTally(scope)
          return {
            ...common,
            standard: "AIUC-1" as const,
            requirements: ["E015"],
            reliability: { notarized: tally.notarized, failed: tally.failed },
            safety: { policy_denials: actions.policy_denials, human_denials: actions.human_denials, output_scan_flagged: actions.output_scan_flagged },
            accountability: { timestamped_receipts: tally.timestamped, human_approvals: actions.human_approvals, cosignatures: actions.cosignatures }
          }
        }
        case "soc_2_cc7": {
          const actions = yield* store.actionTally(scope)
          const drift = yield* store.driftTally(scope)
          const dora = (yield* flags.isEnabled(plan.orgUuid, DORA_FLAG)) ? yield* store.doraTally(scope) : null
          return {
            ...common,
            criteria: "CC7" as const,
            cc7_2_monitoring: { actions_monitored: actions.total_actions, output_scanned: actions.output_scanned, drift_checks: drift.drift_checks, drift_alerts: drift.drift_alerts },
            cc7_3_evaluation: {
              policy_denials: actions.policy_denials,
              approvals_requested: actions.approvals_requested,
              human_denials: actions.human_denials,
              drift_alerts_acknowledged: drift.drift_alerts_acknowledged
            },
            cc7_4_response: dora === null ? null : { dora_incidents_opened: dora.opened, dora_incidents_resolved: dora.resolved }
          }
        }
      }
    })

  /** The sealing transaction, after the claim. */
  const sealClaimed = (plan: BundlePlan) =>
    Effect.gen(function* () {
      const scope: Scope = { orgUuid: plan.orgUuid, from: plan.periodStart, to: plan.periodEnd, agents: plan.agentFilter }
      const max = config.complianceMaxBundleReceipts
      // Counted first, so an oversized period is refused before anything is written.
      const counted = yield* store.countPeriod(scope)
      if (counted > max) return yield* refuse(BundleTooLarge.of(counted, max))
      const sealed = store.sql.withTransaction(
        Effect.gen(function* () {
          const tally = yield* store.insertLeaves(plan.bundleUuid, scope)
          const size = tally.receipt_count
          if (size > max) return yield* refuse(BundleTooLarge.of(size, max))
          const root = yield* buildTree(plan, size)
          const summary = yield* summaryOf(plan, scope, tally)
          // The token's message imprint is the root itself, as a settlement's is.
          const timestampToken = yield* receipts.timestampDigest(root)
          const sealedAt = yield* now
          const record: BundleRecord = {
            bundle_version: BUNDLE_VERSION,
            bundle_uuid: plan.bundleUuid,
            org_uuid: plan.orgUuid,
            framework: plan.framework,
            title: plan.title,
            period_start: plan.periodStart,
            period_end: plan.periodEnd,
            agent_filter: plan.agentFilter,
            receipt_count: size,
            merkle_root: taggedDigest(root),
            framework_summary: summary,
            timestamp_token: timestampToken,
            sealed_at: sealedAt
          }
          const signed = signPayload(yield* receipts.platformSigner, record)
          const row: SealedRow = {
            bundle_uuid: plan.bundleUuid,
            org_uuid: plan.orgUuid,
            idempotency_key: plan.idempotencyKey,
            created_by: plan.createdBy,
            receipt_count: size,
            signed_record: signed.bytes.toString("utf8"),
            record,
            bundle_hash: signed.payload_hash,
            signature: signed.signature,
            public_key_id: signed.public_key_id
          }
          if (!(yield* store.seal({ ...row, sealed_at: sealedAt }))) return yield* Effect.die(new Error(`bundle ${plan.bundleUuid}: its claim was dropped while sealing`))
          yield* store.recordUsage(plan.orgUuid, plan.framework, sealedAt)
          return asBundle(row)
        })
      )
      // Beginning or committing the transaction (the statements inside are the store's).
      return yield* Effect.catchTag(sealed, "SqlError", Effect.die)
    })

  const seal = Effect.fn("ComplianceBundles.seal")(function* (plan: BundlePlan) {
    const holder = yield* claim(plan)
    if (holder !== undefined) return { bundle: holder, replayed: true }
    const bundle = yield* sealClaimed(plan).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : store.release(plan.bundleUuid))))
    return { bundle, replayed: false }
  })

  const list = Effect.fn("ComplianceBundles.list")(function* (principal: Principal, framework: BundleFramework | null, page: number, perPage: number) {
    const { rows, total } = yield* store.listBundles(principal.orgUuid, framework, perPage, (page - 1) * perPage)
    return listPage(rows.map(asBundle), { page, perPage, total }, "bundles")
  })

  const get = Effect.fn("ComplianceBundles.get")(function* (principal: Principal, bundleUuid: string) {
    return asBundle(yield* found(principal.orgUuid, bundleUuid))
  })

  const inclusionProof = Effect.fn("ComplianceBundles.inclusionProof")(function* (principal: Principal, bundleUuid: string, receiptUuid: string) {
    const row = yield* found(principal.orgUuid, bundleUuid)
    const leaf = yield* store.leafOf(bundleUuid, receiptUuid)
    if (leaf === undefined) return yield* refuse(BundleReceiptNotFound.of(bundleUuid, receiptUuid))
    const tiles = yield* store.readTiles(bundleUuid, tilesForInclusion(leaf.leaf_index, row.receipt_count))
    const proof = inclusionFromTiles(tiles, leaf.leaf_index, row.receipt_count)
    return {
      bundle_uuid: bundleUuid,
      receipt_uuid: receiptUuid,
      payload_hash: leaf.payload_hash,
      leaf_hash: taggedDigest(proof.leafHash),
      index: leaf.leaf_index,
      leaf_count: row.receipt_count,
      siblings: proof.proof.map(taggedDigest),
      merkle_root: row.record.merkle_root
    } satisfies BundleInclusionProof
  })

  /**
   * The export document as a stream of UTF-8 chunks: the head, then one chunk per page of receipts
   * read in leaf order (memory holds one page), then the signing block, whose keys are the ones the
   * pages used. The signed record is written as its exact stored JCS text.
   */
  const exportDocument = Effect.fn("ComplianceBundles.export")(function* (principal: Principal, bundleUuid: string, requestId: string) {
    const row = yield* found(principal.orgUuid, bundleUuid)
    const record = row.record
    const exportedAt = yield* now
    const keyIds = new Set<string>([row.public_key_id])
    let first = true
    const head =
      `{${members({
        export_version: EXPORT_VERSION,
        bundle_uuid: record.bundle_uuid,
        framework: record.framework,
        title: record.title,
        period: { start: record.period_start, end: record.period_end },
        agent_filter: record.agent_filter,
        receipt_count: record.receipt_count,
        merkle_root: record.merkle_root
      })},"bundle":${row.signed_record},` +
      `${members({
        bundle_hash: row.bundle_hash,
        signature: row.signature,
        public_key_id: row.public_key_id,
        timestamp_token: record.timestamp_token,
        framework_summary: record.framework_summary
      })},"receipts":[`
    const pages = Stream.unfold(0, (chunk: number) =>
      chunk * LEAF_CHUNK >= row.receipt_count
        ? Effect.succeed(undefined)
        : Effect.map(store.exportPage(bundleUuid, chunk), (rows) => {
            let text = ""
            for (const receipt of rows) {
              keyIds.add(receipt.public_key_id)
              const item: ExportedReceipt = {
                index: receipt.leaf_index,
                receipt_uuid: receipt.receipt_uuid,
                action_uuid: receipt.action_uuid,
                receipt_status: receipt.receipt_status,
                created_at: receipt.created_at,
                payload_hash: receipt.payload_hash,
                signed_payload: receipt.signed_payload,
                signature: receipt.signature,
                public_key_id: receipt.public_key_id,
                timestamp_token: receipt.timestamp_token
              }
              text += (first ? "" : ",") + JSON.stringify(item)
              first = false
            }
            return [encoder.encode(text), chunk + 1] as const
          })
    )
    const tail = Effect.map(receipts.jwks, ({ keys }) =>
      encoder.encode(
        `],${members({
          signing: {
            algorithm: "Ed25519",
            canonicalization: "RFC 8785",
            hash: "SHA-256",
            merkle_tree: "RFC 9162",
            jwks_url: `${config.baseUrl}/api/v1/.well-known/jwks.json`,
            public_keys: keys.filter((key) => keyIds.has(key.kid)),
            platform_did: platformDid(config.baseUrl),
            tsa_certificate: config.tsaUrl === undefined ? receipts.tsaCertificatePem : null
          },
          verification: VERIFICATION_STEPS,
          exported_at: exportedAt,
          request_id: requestId
        })}}`
      )
    )
    return Stream.make(encoder.encode(head)).pipe(Stream.concat(pages), Stream.concat(Stream.fromEffect(tail)))
  })

  return ComplianceBundles.of({ prepare, seal, list, get, inclusionProof, exportDocument })
})

export interface ComplianceBundlesService {
  /** Checks the request; an idempotency key already sealed with the same body is a replay. */
  readonly prepare: (principal: Principal, request: CreateBundleRequest, headerKey: string | undefined) => Effect.Effect<Prepared, BundlesError>
  /** Claims and seals; `replayed` when a concurrent request with the same key and body sealed first. */
  readonly seal: (plan: BundlePlan) => Effect.Effect<{ readonly bundle: ComplianceBundle; readonly replayed: boolean }, BundlesError>
  readonly list: (principal: Principal, framework: BundleFramework | null, page: number, perPage: number) => Effect.Effect<Page<ComplianceBundle> & { bundles: Array<ComplianceBundle> }>
  readonly get: (principal: Principal, bundleUuid: string) => Effect.Effect<ComplianceBundle, BundlesError>
  readonly inclusionProof: (principal: Principal, bundleUuid: string, receiptUuid: string) => Effect.Effect<BundleInclusionProof, BundlesError>
  /** The export document, streamed; refusals come before the first byte. */
  readonly exportDocument: (principal: Principal, bundleUuid: string, requestId: string) => Effect.Effect<Stream.Stream<Uint8Array>, BundlesError>
}

export class ComplianceBundles extends Context.Service<ComplianceBundles, ComplianceBundlesService>()("gateway/ComplianceBundles") {
  static readonly layer = Layer.effect(ComplianceBundles, makeComplianceBundles)
}

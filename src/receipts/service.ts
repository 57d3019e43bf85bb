/**
 * Receipts: minting (the `ReceiptMinter` port actions call inside their
 * transaction), verification, published keys and key rotation.
 *
 * The hot path is synchronous: the signer and the internal timestamp authority
 * live in memory; only the INSERT (and an external TSA, when TSA_URL is set)
 * waits. A rotation elsewhere is announced on the Fanout topic "signing-keys";
 * the next mint then re-reads the active key.
 */
import { createHash } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient, type Statement } from "effect/sql"
import { DID_CONTEXT, type DidDocument, ED25519_2020_CONTEXT } from "../../protocol/dids.js"
import type { Jwks, ReceiptChecks, ReceiptExport, ReceiptVerification, RotationResult, StoredReceipt } from "../../protocol/receipts.js"
import { readTimestampImprint } from "../../protocol/verifier/timestamp.js"
import { insertAudit } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { ed25519Multibase, platformDid } from "../platform/did-web.js"
import { newId } from "../platform/ids.js"
import { logLine } from "../platform/log.js"
import { Outbound, outboundRequest } from "../platform/outbound/index.js"
import { renderPdfOffThread } from "../platform/pdf-thread.js"
import { Fanout } from "../platform/redis/index.js"
import { Secrets } from "../platform/secrets.js"
import { ActionReceiptNotFound, ReceiptNotFound, type ReceiptsError, RotationInProgress, refuse } from "./errors.js"
import { receiptExportPdfModel } from "./export-pdf.js"
import { jwkOf, loadActiveSigner, loadTimestampAuthorityIdentity, rawPublicKeyOf, rotateSigningKey } from "./keys.js"
import { type ReceiptContent, ReceiptMinter, ReceiptsElsewhere, type SignedReceipt } from "./ports.js"
import {
  canonicalJsonBytes,
  mintTransferReceipt,
  type ReceiptSigner,
  sha256Digest,
  sha256Tagged,
  signPayload,
  type TransferReceipt,
  type TransferTerms,
  verifySignature
} from "./signing.js"
import * as store from "./store.js"
import { receiptSummary } from "./summary.js"
import { requestTimestamp } from "./tsa/client.js"
import { verifyTimestampToken } from "./tsa/verify.js"

/** Token signature checks remembered (about 100 bytes each). */
const SIGNATURE_CHECKS_REMEMBERED = 10_000

export const RECEIPT_VERSION = "1.1"
/** A receipt of an action that carries a replay context: one more payload key (CONTRACT-sdk-beyond §1; `1.2` is never issued). */
export const REPLAY_RECEIPT_VERSION = "1.3"
export const SIGNING_KEYS_TOPIC = "signing-keys"

/** The version of an action receipt: a replay context hash makes it `1.3`. */
export const receiptVersionOf = (content: Pick<ReceiptContent, "replay_context_hash">): string =>
  content.replay_context_hash == null ? RECEIPT_VERSION : REPLAY_RECEIPT_VERSION

/** The payload field order of CONTRACT.md; JCS sorts keys anyway, this only fixes the set. */
export const buildReceiptPayload = (
  content: ReceiptContent,
  receiptUuid: string,
  createdAt: string,
  version = receiptVersionOf(content)
): Record<string, unknown> => {
  const payload = basePayload(content, receiptUuid, createdAt, version)
  if (content.replay_context_hash != null) payload.replay_context_hash = content.replay_context_hash
  return payload
}

const basePayload = (content: ReceiptContent, receiptUuid: string, createdAt: string, version: string): Record<string, unknown> => ({
  receipt_version: version,
  receipt_uuid: receiptUuid,
  receipt_status: content.receipt_status,
  action_uuid: content.action_uuid,
  org_uuid: content.org_uuid,
  agent_id: content.agent_id ?? null,
  agent_version: content.agent_version ?? null,
  action_type: content.action_type,
  action_details_hash: content.action_details_hash,
  instruction_hash: content.instruction_hash ?? null,
  model_id: content.model_id ?? null,
  model_version: content.model_version ?? null,
  outcome: content.outcome ?? null,
  outcome_hash: content.outcome_hash ?? null,
  output_scan_flags: content.output_scan_flags ?? null,
  policy_uuid: content.policy_uuid ?? null,
  approval: content.approval ?? null,
  parent_payload_hash: content.parent_payload_hash ?? null,
  agent_sequence: content.agent_sequence,
  previous_payload_hash: content.previous_payload_hash ?? null,
  created_at: createdAt
})


/** The verdict in the words the SDKs read (`message`), beside `valid` and `checks`; no separate policy evaluator signs. */
export const verdictOf = (checks: Readonly<Record<string, boolean | null>>) => {
  const failed = Object.entries(checks).flatMap(([name, passed]) => (passed === false ? [name] : []))
  return {
    message: failed.length === 0 ? "receipt is valid" : `receipt is not valid: ${failed.join(", ")}`,
    policy_evaluator_attestation: null
  }
}

const parsePayload = (text: string): Record<string, unknown> => {
  const value: unknown = JSON.parse(text)
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new TypeError("signed payload is not an object")
  return value as Record<string, unknown>
}

export const makeReceipts = Effect.gen(function* () {
  const config = yield* Config
  const { envelope } = yield* Secrets
  const fanout = yield* Fanout
  const sql = yield* SqlClient.SqlClient
  /** The store's statements run with this service's client (or the caller's transaction, when it provides one). */
  const withSql = Effect.provideService(SqlClient.SqlClient, sql)

  let signer: ReceiptSigner = yield* withSql(loadActiveSigner(envelope))
  let signerStale = false
  const authority = yield* withSql(loadTimestampAuthorityIdentity(envelope))
  const tsaCertificateDer = authority.certificateDer
  const outboundPolicy = (yield* Outbound).policy

  yield* fanout.subscribe(
    (_topic, message) => {
      if (message !== signer.publicKeyId) signerStale = true
    },
    { topicPrefix: SIGNING_KEYS_TOPIC }
  )

  const currentSigner: Effect.Effect<ReceiptSigner> = Effect.suspend(() => {
    if (!signerStale) return Effect.succeed(signer)
    signerStale = false
    return loadActiveSigner(envelope).pipe(
      Effect.tap((loaded) => Effect.sync(() => (signer = loaded))),
      withSql
    )
  })

  const externalTimestamp = (tsaUrl: string, digest: Uint8Array) =>
    Effect.tryPromise({
      try: () =>
        requestTimestamp(tsaUrl, digest, async (url, body, headers) => {
          const response = await outboundRequest(url, { method: "POST", body, headers, policy: outboundPolicy })
          return { status: response.status, body: new Uint8Array(response.body) }
        }),
      catch: (cause) => cause
    })

  /** A token over the digest; null (with a warning) when the TSA fails: a receipt never waits on it. */
  const timestamp = (digest: Uint8Array): Effect.Effect<string | null> => {
    if (config.tsaUrl === undefined) {
      try {
        return Effect.succeed(Buffer.from(authority.stampSync(digest)).toString("base64"))
      } catch (cause) {
        logLine("warn", "internal timestamp authority failed; receipt stored without a token", { error: String(cause) })
        return Effect.succeed(null)
      }
    }
    const tsaUrl = config.tsaUrl
    return externalTimestamp(tsaUrl, digest).pipe(
      Effect.map((token) => Buffer.from(token).toString("base64")),
      Effect.catch((cause) =>
        Effect.sync(() => {
          logLine("warn", "timestamp authority failed; receipt stored without a token", {
            tsa_url: tsaUrl,
            error: cause instanceof Error ? cause.message : String(cause)
          })
          return null
        })
      )
    )
  }

  const verifyUrlOf = (actionUuid: string) => `${config.baseUrl}/api/v1/verify/action/${encodeURIComponent(actionUuid)}`

  // The hot path of every notarization: no query, the signer and the internal TSA are in memory.
  // Every notarization and denial mints one: no span of its own on the hot path.
  const sign = Effect.fnUntraced(function* (content: ReceiptContent) {
    const activeSigner = yield* currentSigner
    const receiptUuid = content.receipt_uuid ?? newId("rct")
    const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
    const version = receiptVersionOf(content)
    const signed = signPayload(activeSigner, buildReceiptPayload(content, receiptUuid, createdAt, version))
    const timestampToken = yield* timestamp(sha256Digest(signed.bytes))
    const signedPayload = signed.bytes.toString("utf8")
    const summary = receiptSummary({
      ...signed,
      receipt_uuid: receiptUuid,
      timestamp_token: timestampToken,
      receipt_version: version,
      verify_url: verifyUrlOf(content.action_uuid)
    })
    return {
      minted: { ...summary, created_at: createdAt, signed_payload: signedPayload },
      row: {
        receipt_uuid: receiptUuid,
        action_uuid: content.action_uuid,
        org_uuid: content.org_uuid,
        agent_id: content.agent_id,
        agent_sequence: content.agent_sequence,
        receipt_status: content.receipt_status,
        receipt_version: version,
        signed_payload: signedPayload,
        payload_hash: signed.payload_hash,
        signature: signed.signature,
        public_key_id: signed.public_key_id,
        timestamp_token: timestampToken,
        created_at: createdAt
      }
    } satisfies SignedReceipt
  })

  const insertion = (receipt: SignedReceipt) => store.receiptInsertion(sql, receipt.row)
  const insertionOfAll = (receipts: ReadonlyArray<SignedReceipt>) =>
    store.receiptsInsertion(
      sql,
      receipts.map((receipt) => receipt.row)
    )

  // A token's CMS signature never changes, and checking it through pkijs costs milliseconds: the
  // answer is remembered per token (bounded, oldest forgotten first). The imprint is read by the
  // portable verifier's DER reader, in microseconds.
  const signatureChecks = new Map<string, boolean>()
  const tokenSignatureValid = (token: string, der: Uint8Array): boolean => {
    const key = createHash("sha256").update(token).digest("base64")
    const known = signatureChecks.get(key)
    if (known !== undefined) return known
    // With an external TSA the trust anchor is the certificate the token carries.
    const valid = verifyTimestampToken(der, config.tsaUrl === undefined ? { certificateDer: tsaCertificateDer } : {}).valid
    if (signatureChecks.size >= SIGNATURE_CHECKS_REMEMBERED) signatureChecks.delete(signatureChecks.keys().next().value!)
    signatureChecks.set(key, valid)
    return valid
  }

  const timestampChecks = (token: string | null, bytes: Buffer | undefined) => {
    if (token === null) return { timestamp_imprint: null, timestamp_signature: null }
    const der = new Uint8Array(Buffer.from(token, "base64"))
    let imprint = false
    try {
      imprint = bytes !== undefined && Buffer.from(readTimestampImprint(der).hashedMessage).equals(sha256Digest(bytes))
    } catch {
      imprint = false
    }
    return { timestamp_imprint: imprint, timestamp_signature: tokenSignatureValid(token, der) }
  }

  const chainCheck = (receipt: store.ReceiptRow, payload: Record<string, unknown> | undefined) =>
    Effect.gen(function* () {
      const previousHash = payload?.previous_payload_hash ?? null
      if (receipt.agent_sequence <= 1) return receipt.agent_sequence === 1 && previousHash === null
      const previous = yield* store.receiptInChain(receipt.org_uuid, receipt.agent_id, receipt.agent_sequence - 1)
      return previous !== undefined && previous.payload_hash === previousHash
    })

  /** Payload hash, signature by a published key and timestamp checks of any signed document. */
  const documentChecks = (document: SignedDocument) =>
    Effect.gen(function* () {
      const key = yield* store.signingKeyById(document.public_key_id)
      let payload: Record<string, unknown> | undefined
      let bytes: Buffer | undefined
      try {
        payload = parsePayload(document.signed_payload)
        bytes = canonicalJsonBytes(payload)
      } catch {
        payload = undefined
      }
      const checks: DocumentChecks = {
        payload_hash: bytes !== undefined && sha256Tagged(bytes) === document.payload_hash,
        signature: bytes !== undefined && key !== undefined && verifySignature(rawPublicKeyOf(key), bytes, document.signature),
        ...timestampChecks(document.timestamp_token, bytes)
      }
      return { key, payload, checks }
    })

  const verification = <Checks extends DocumentChecks>(
    document: SignedDocument,
    key: store.SigningKeyRow | undefined,
    payload: Record<string, unknown> | undefined,
    checks: Checks,
    now: number
  ) => ({
    valid: Object.values(checks).every((passed) => passed === true || passed === null),
    payload_hash: document.payload_hash,
    signature: document.signature,
    public_key_id: document.public_key_id,
    public_key: key === undefined ? null : jwkOf(key),
    algorithm: "Ed25519" as const,
    signed_payload: payload ?? {},
    timestamp_token: document.timestamp_token,
    checks,
    verified_at: new Date(now).toISOString()
  })

  const verifyRow = (receipt: store.ReceiptRow) =>
    Effect.gen(function* () {
      const { key, payload, checks } = yield* documentChecks(receipt)
      const all = { ...checks, chain: yield* chainCheck(receipt, payload) }
      const now = yield* Clock.currentTimeMillis
      return { receipt_uuid: receipt.receipt_uuid, action_uuid: receipt.action_uuid, ...verification(receipt, key, payload, all, now), ...verdictOf(all) }
    })

  /**
   * Signs and timestamps any other signed document (a case receipt): JCS bytes, payload hash,
   * Ed25519 signature by the active key, RFC 3161 token over the same digest (null when the TSA failed).
   */
  const signDocument = Effect.fn("Receipts.signDocument")(function* (payload: Record<string, unknown>) {
    const signed = signPayload(yield* currentSigner, payload)
    return {
      signed_payload: signed.bytes.toString("utf8"),
      payload_hash: signed.payload_hash,
      signature: signed.signature,
      public_key_id: signed.public_key_id,
      timestamp_token: yield* timestamp(sha256Digest(signed.bytes)),
      timestamp_authority: config.tsaUrl ?? `${config.baseUrl}/api/v1/tsa/certificate`
    }
  })

  /**
   * A transfer receipt (agent transfer or succession) signed by the active key, dated now by the
   * Clock, or at `at` (epoch ms) when it attests an instant the caller already read.
   */
  const signTransferReceipt = Effect.fn("Receipts.signTransferReceipt")(function* (terms: TransferTerms, at?: number) {
    const activeSigner = yield* currentSigner
    const transferredAt = new Date(at ?? (yield* Clock.currentTimeMillis)).toISOString()
    return mintTransferReceipt(activeSigner, config.baseUrl, terms, newId("atr"), transferredAt)
  })

  /** The checks of a document signed by `signDocument`: payload hash, signature by a published key, timestamp. */
  const verifyDocument = Effect.fn("Receipts.verifyDocument")(function* (document: SignedDocument) {
    const { key, payload, checks } = yield* withSql(documentChecks(document))
    return verification(document, key, payload, checks, yield* Clock.currentTimeMillis)
  })

  const verifyAction = Effect.fn("Receipts.verifyAction")(function* (actionUuid: string) {
    const receipt = yield* withSql(store.latestReceiptOfAction(actionUuid))
    if (receipt === undefined) return yield* refuse(new ActionReceiptNotFound({}))
    return yield* withSql(verifyRow(receipt))
  })

  /** Any receipt by its id: an action's from the receipts table, else one kept elsewhere (a case's, not chained). */
  const verifyReceipt = Effect.fn("Receipts.verifyReceipt")(function* (receiptUuid: string) {
    const receipt = yield* withSql(store.receiptByUuid(receiptUuid))
    if (receipt !== undefined) return yield* withSql(verifyRow(receipt))
    const kept = yield* (yield* ReceiptsElsewhere).byReceiptUuid(receiptUuid)
    if (kept === undefined) return yield* refuse(new ReceiptNotFound({}))
    const { key, payload, checks } = yield* withSql(documentChecks(kept))
    const all = { ...checks, chain: null }
    return {
      receipt_uuid: kept.receipt_uuid,
      action_uuid: null,
      case_id: kept.case_id,
      receipt_version: kept.receipt_version,
      ...verification(kept, key, payload, all, yield* Clock.currentTimeMillis),
      ...verdictOf(all)
    }
  })

  /** An action receipt of `orgUuid`'s, as stored; another organization's id is 404. */
  const ownReceipt = (orgUuid: string, receiptUuid: string) =>
    Effect.flatMap(withSql(store.receiptByUuid(receiptUuid)), (receipt) =>
      receipt === undefined || receipt.org_uuid !== orgUuid ? refuse(new ReceiptNotFound({})) : Effect.succeed(receipt)
    )

  const storedOf = (receipt: store.ReceiptRow): StoredReceipt => ({
      receipt_uuid: receipt.receipt_uuid,
      action_uuid: receipt.action_uuid,
      org_uuid: receipt.org_uuid,
      agent_id: receipt.agent_id,
      agent_sequence: receipt.agent_sequence,
      receipt_status: receipt.receipt_status,
      receipt_version: receipt.receipt_version,
      payload_hash: receipt.payload_hash,
      signature: receipt.signature,
      public_key_id: receipt.public_key_id,
      timestamp_token: receipt.timestamp_token,
      verify_url: verifyUrlOf(receipt.action_uuid),
      created_at: receipt.created_at,
      signed_payload: parsePayload(receipt.signed_payload)
  })

  /** A receipt of `orgUuid` as stored; another organization's id is 404. */
  const receiptOf = Effect.fn("Receipts.receiptOf")(function* (orgUuid: string, receiptUuid: string) {
    return storedOf(yield* ownReceipt(orgUuid, receiptUuid))
  })

  /** Whether this gateway's internal TSA signed the token (then its certificate goes into the export). */
  const issuedInternally = (token: string): boolean => {
    const der = new Uint8Array(Buffer.from(token, "base64"))
    // Without TSA_URL the remembered signature checks are against the internal certificate already.
    return config.tsaUrl === undefined ? tokenSignatureValid(token, der) : verifyTimestampToken(der, { certificateDer: tsaCertificateDer }).valid
  }

  /**
   * Everything an auditor needs to check a receipt offline (CONTRACT-sdk-beyond §2): the stored
   * receipt, its exact signed text, the key, the TSA certificate and the previous link of its chain.
   */
  const exportOf = Effect.fn("Receipts.exportOf")(function* (orgUuid: string, receiptUuid: string) {
    const receipt = yield* ownReceipt(orgUuid, receiptUuid)
    const key = yield* withSql(store.signingKeyById(receipt.public_key_id))
    const previous =
      receipt.agent_sequence > 1 ? yield* withSql(store.receiptInChain(receipt.org_uuid, receipt.agent_id, receipt.agent_sequence - 1)) : undefined
    const stored = storedOf(receipt)
    return {
      format: "gateway-receipt/1",
      export_version: "1.0",
      receipt_uuid: receipt.receipt_uuid,
      action_uuid: receipt.action_uuid,
      receipt: stored,
      signed_payload: stored.signed_payload,
      canonical_payload: receipt.signed_payload,
      payload_hash: receipt.payload_hash,
      signature: receipt.signature,
      public_key_id: receipt.public_key_id,
      public_key: key === undefined ? null : jwkOf(key),
      timestamp_token: receipt.timestamp_token,
      tsa_certificate: receipt.timestamp_token !== null && issuedInternally(receipt.timestamp_token) ? authority.certificatePem : null,
      previous:
        previous === undefined
          ? null
          : { receipt_uuid: previous.receipt_uuid, payload_hash: previous.payload_hash, signed_payload: parsePayload(previous.signed_payload) },
      verify_url: stored.verify_url,
      jwks_url: `${config.baseUrl}/api/v1/.well-known/jwks.json`,
      platform_did: platformDid(config.baseUrl),
      exported_at: new Date(yield* Clock.currentTimeMillis).toISOString()
    } satisfies ReceiptExport
  })

  /** The export printed on the PDF thread: the same bytes at every download (dated by the receipt). */
  const exportPdf = Effect.fn("Receipts.exportPdf")(function* (orgUuid: string, receiptUuid: string) {
    const document = yield* exportOf(orgUuid, receiptUuid)
    const bytes = yield* Effect.promise(() => renderPdfOffThread(receiptExportPdfModel(document)))
    return { bytes, filename: `receipt-${document.receipt_uuid}.pdf` }
  })

  const jwks = Effect.map(withSql(store.allSigningKeys), (keys) => ({ keys: keys.map(jwkOf) })).pipe(Effect.withSpan("Receipts.jwks"))

  const didDocument = Effect.map(withSql(store.allSigningKeys), (keys) => {
    const did = platformDid(config.baseUrl)
    // Every receipt-signing key, retired ones too (CONTRACT.md); the active one signs credentials.
    const methods = keys.map((key) => ({
      id: `${did}#${key.public_key_id}`,
      type: "Ed25519VerificationKey2020" as const,
      controller: did,
      publicKeyMultibase: ed25519Multibase(rawPublicKeyOf(key))
    }))
    const ids = methods.map((method) => method.id)
    return {
      "@context": [DID_CONTEXT, ED25519_2020_CONTEXT],
      id: did,
      verificationMethod: methods,
      authentication: ids,
      assertionMethod: ids,
      service: [{ id: `${did}#gateway`, type: "AgentAccountabilityGateway", serviceEndpoint: config.baseUrl }]
    }
  }).pipe(Effect.withSpan("Receipts.didDocument"))

  const rotate = Effect.fn("Receipts.rotate")(function* (audit: { requestId: string | null }) {
    const rotated = yield* sql
      .withTransaction(
        Effect.gen(function* () {
          const result = yield* rotateSigningKey(envelope)
          if (result === undefined) return undefined
          yield* insertAudit(sql, {
            orgUuid: null,
            actor: "platform-admin",
            event: "signing_key.rotated",
            target: result.publicKeyId,
            details: { previous_public_key_id: result.previousPublicKeyId },
            requestId: audit.requestId
          })
          return result
        })
      )
      // The audit insert and the transaction itself (the key statements are the store's).
      .pipe(withSql, Effect.catchTag("SqlError", Effect.die))
    if (rotated === undefined) return yield* refuse(new RotationInProgress({}))
    // This process switches at once; the others re-read on the announcement.
    signer = yield* withSql(loadActiveSigner(envelope))
    signerStale = false
    yield* fanout.publish(SIGNING_KEYS_TOPIC, rotated.publicKeyId)
    return {
      public_key_id: rotated.publicKeyId,
      previous_public_key_id: rotated.previousPublicKeyId,
      rotated_at: new Date(yield* Clock.currentTimeMillis).toISOString()
    }
  })

  return Receipts.of({
    platformSigner: currentSigner,
    timestampDigest: timestamp,
    sign,
    insertion,
    insertionOfAll,
    signDocument,
    signTransferReceipt,
    verifyDocument,
    verifyAction,
    verifyReceipt,
    receiptOf,
    exportOf,
    exportPdf,
    jwks,
    didDocument,
    tsaCertificatePem: authority.certificatePem,
    tsaCertificateDer,
    rotate
  })
})

/** A document signed like a receipt: what its checks read. */
export interface SignedDocument {
  readonly signed_payload: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token: string | null
}

/** The checks of a signed document; a receipt adds its chain. */
export type DocumentChecks = Omit<ReceiptChecks, "chain">

/** A signed document and its timestamp, as `signDocument` answers. */
export interface SignedDocumentResult extends SignedDocument {
  /** Where the token's signer is published: the TSA's URL, or the internal authority's certificate. */
  readonly timestamp_authority: string
}

export type DocumentVerification = Omit<
  ReceiptVerification,
  "receipt_uuid" | "action_uuid" | "case_id" | "receipt_version" | "checks" | "message" | "policy_evaluator_attestation"
> & {
  readonly checks: DocumentChecks
}

export interface ReceiptsService {
  /** The active receipt-signing key: the platform's key, which also signs credentials. */
  readonly platformSigner: Effect.Effect<ReceiptSigner>
  /** An RFC 3161 token (base64 DER) whose message imprint is `digest`; null when the TSA failed. */
  readonly timestampDigest: (digest: Uint8Array) => Effect.Effect<string | null>
  readonly sign: (content: ReceiptContent) => Effect.Effect<SignedReceipt>
  readonly insertion: (receipt: SignedReceipt) => Statement.Fragment
  readonly insertionOfAll: (receipts: ReadonlyArray<SignedReceipt>) => Statement.Fragment
  /**
   * Signs and timestamps any other signed document (a case receipt): JCS bytes, payload hash,
   * Ed25519 signature by the active key, RFC 3161 token over the same digest (null when the TSA failed).
   */
  readonly signDocument: (payload: Record<string, unknown>) => Effect.Effect<SignedDocumentResult>
  /**
   * A transfer receipt (agent transfer or succession) signed by the active key, dated now by the
   * Clock, or at `at` (epoch ms) when it attests an instant the caller already read.
   */
  readonly signTransferReceipt: (terms: TransferTerms, at?: number) => Effect.Effect<TransferReceipt>
  /** The checks of a document signed by `signDocument`: payload hash, signature by a published key, timestamp. */
  readonly verifyDocument: (document: SignedDocument) => Effect.Effect<DocumentVerification>
  readonly verifyAction: (actionUuid: string) => Effect.Effect<ReceiptVerification, ReceiptsError>
  /** Any receipt by its id: an action's from the receipts table, else one kept elsewhere (a case's, not chained). */
  readonly verifyReceipt: (receiptUuid: string) => Effect.Effect<ReceiptVerification, ReceiptsError, ReceiptsElsewhere>
  /** A receipt of `orgUuid` as stored; another organization's id is 404. */
  readonly receiptOf: (orgUuid: string, receiptUuid: string) => Effect.Effect<StoredReceipt, ReceiptsError>
  /** The offline-verifiable export of an action receipt of `orgUuid` (without request_id); another organization's id is 404. */
  readonly exportOf: (orgUuid: string, receiptUuid: string) => Effect.Effect<ReceiptExport, ReceiptsError>
  /** The export printed as a PDF, identical at every download. */
  readonly exportPdf: (orgUuid: string, receiptUuid: string) => Effect.Effect<{ readonly bytes: Uint8Array; readonly filename: string }, ReceiptsError>
  readonly jwks: Effect.Effect<Jwks>
  readonly didDocument: Effect.Effect<DidDocument>
  readonly tsaCertificatePem: string
  readonly tsaCertificateDer: Uint8Array
  /** Retires the active key and activates a new one, announced to the other processes. */
  readonly rotate: (audit: { requestId: string | null }) => Effect.Effect<RotationResult, ReceiptsError>
}

export class Receipts extends Context.Service<Receipts, ReceiptsService>()("gateway/Receipts") {
  static readonly layer = Layer.effect(Receipts)(makeReceipts)
}

/** The port actions use, backed by the same in-memory signer. */
export const ReceiptMinterLive = Layer.effect(ReceiptMinter)(
  Effect.gen(function* () {
    const receipts = yield* Receipts
    return { sign: receipts.sign, insertion: receipts.insertion, insertionOfAll: receipts.insertionOfAll }
  })
)

/** Receipts and the ReceiptMinter port: add to servicesLayer. */
export const receiptsLayer = ReceiptMinterLive.pipe(Layer.provideMerge(Receipts.layer))

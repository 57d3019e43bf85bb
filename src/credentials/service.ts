/**
 * Agent capability credentials: issued when an agent is registered and reissued when its
 * capabilities or version change (the previous one is revoked as superseded), signed by the
 * platform's key as Ed25519Signature2020, revocable by admins through StatusList2021 bits, and
 * verified with the spec's five checks.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import type { CredentialList, CredentialRecord, CurrentCredential, Revoked, Verification } from "../../protocol/credentials.js"
import { auditActor } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { agentDid, platformDid } from "../platform/did-web.js"
import { Receipts } from "../receipts/service.js"
import { AgentNotFound, type CredentialsError, NoActiveCredential, refuse, StatusListNotFound } from "./errors.js"
import {
  agentCapabilityContext,
  agentCapabilityContextUrl,
  CREDENTIALS_V1,
  makeDocumentLoader,
  proofVerifies,
  type RootDid,
  STATUS_LIST_2021_V1,
  signCredential
} from "./linked-data.js"
import { encodeStatusList } from "./status-list.js"
import { type CredentialRow, makeCredentialsStore, type SubjectRow } from "./store.js"

/** How long a credential is valid. */
const VALIDITY_MS = 365 * 24 * 3_600_000

export interface AuditContext {
  readonly requestId: string | null
}

const record = (row: CredentialRow): CredentialRecord => ({
  vc_id: row.vc_id,
  vc_json: row.vc_json,
  issued_at: row.issued_at,
  expires_at: row.expires_at,
  revoked_at: row.revoked_at,
  version: row.version
})

const isActive = (row: CredentialRow, now: number) => row.revoked_at === null && Date.parse(row.expires_at) > now

/** Optional subject fields an organization may declare in the agent's metadata. */
const metadataOf = (metadata: Readonly<Record<string, unknown>>) => ({
  modelId: typeof metadata.model_id === "string" ? metadata.model_id : null,
  euAiActCompliant: metadata.eu_ai_act_compliant === true,
  maxActionValue: typeof metadata.max_action_value === "number" && Number.isFinite(metadata.max_action_value) ? metadata.max_action_value : null
})

const REQUIRED_FIELDS = ["@context", "type", "issuer", "issuanceDate", "credentialSubject", "proof"] as const

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The credential itself, or the one inside `GET …/credential`'s answer (`{credential, message}`),
 * which the published SDKs send as it came; a null inside (none current) is verified as `{}`.
 */
const unwrapped = (given: Record<string, unknown>): Record<string, unknown> => {
  const looksWrapped = "credential" in given && !("@context" in given) && !("proof" in given)
  if (!looksWrapped) return given
  return isObject(given.credential) ? given.credential : {}
}

export const makeCredentials = Effect.gen(function* () {
  const store = yield* makeCredentialsStore
  const config = yield* Config
  const receipts = yield* Receipts
  const baseUrl = config.baseUrl
  const rootDid = platformDid(baseUrl)
  const statusListUrl = (listId: string) => `${baseUrl}/credentials/status/${listId}`

  /** The loader and the signer of this moment (the platform key may have rotated). */
  const signing = Effect.gen(function* () {
    const document = (yield* receipts.didDocument) as unknown as RootDid["document"]
    const signer = yield* receipts.platformSigner
    return {
      loader: makeDocumentLoader(baseUrl, { id: rootDid, document }),
      signer: { id: `${rootDid}#${signer.publicKeyId}`, signRaw: signer.signRaw }
    }
  }).pipe(Effect.provideService(SqlClient.SqlClient, store.sql))

  const sign = (credential: object) =>
    Effect.flatMap(signing, ({ loader, signer }) => Effect.promise(() => signCredential(credential, signer, loader)))

  const credentialFor = (subject: SubjectRow, vcId: string, listId: string, index: number, issuedAt: Date) => ({
    "@context": [CREDENTIALS_V1, STATUS_LIST_2021_V1, agentCapabilityContextUrl(baseUrl)],
    id: vcId,
    type: ["VerifiableCredential", "AgentCapabilityCredential"],
    issuer: rootDid,
    issuanceDate: issuedAt.toISOString(),
    expirationDate: new Date(issuedAt.getTime() + VALIDITY_MS).toISOString(),
    credentialSubject: {
      id: agentDid(baseUrl, subject.agent_slug),
      agentSlug: subject.agent_slug,
      displayName: subject.name,
      ownerOrganization: subject.org_uuid,
      capabilities: subject.capabilities,
      version: subject.current_version,
      notarizationEnabled: true,
      ...metadataOf(subject.metadata)
    },
    credentialStatus: {
      id: `${statusListUrl(listId)}#${index}`,
      type: "StatusList2021Entry",
      statusPurpose: "revocation",
      statusListIndex: String(index),
      statusListCredential: statusListUrl(listId)
    }
  })

  /** Signed status-list credentials, rebuilt only when the list changed. */
  const signedLists = new Map<string, { readonly updatedAt: string; readonly document: Record<string, unknown> }>()

  const loadOwned = Effect.fnUntraced(function* (principal: Principal, slug: string) {
    const subject = yield* store.subject(slug)
    if (subject === undefined || subject.org_uuid !== principal.orgUuid) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return subject
  })

  const issue = Effect.fn("Credentials.issue")(function* (slug: string) {
    const subject = yield* store.subject(slug)
    if (subject === undefined) return yield* Effect.die(new Error(`credential for unknown agent ${slug}`))
    for (const vcId of yield* store.unrevoked(slug)) yield* store.revoke(vcId, "superseded")
    const version = yield* store.nextVersion(slug)
    const { listId, index } = yield* store.allocateIndex
    const vcId = `urn:uuid:${randomUUID()}`
    const issuedAt = new Date(yield* Clock.currentTimeMillis)
    const credential = credentialFor(subject, vcId, listId, index, issuedAt)
    const signed = yield* sign(credential)
    yield* store.insert({
      vcId,
      slug,
      orgUuid: subject.org_uuid,
      version,
      vc: signed,
      listId,
      index,
      issuedAt: issuedAt.toISOString(),
      expiresAt: credential.expirationDate
    })
  })

  const current = Effect.fn("Credentials.current")(function* (slug: string) {
    if ((yield* store.subject(slug)) === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    const [newest] = yield* store.bySlug(slug)
    if (newest === undefined) return { credential: null, message: "No credential has been issued for this agent" }
    if (newest.revoked_at !== null) return { credential: null, message: "The agent's credential was revoked; none is current until it is reissued" }
    if (!isActive(newest, yield* Clock.currentTimeMillis)) return { credential: null, message: "The agent's credential has expired" }
    return { credential: newest.vc_json, message: null }
  })

  const list = Effect.fn("Credentials.list")(function* (principal: Principal, slug: string) {
    yield* loadOwned(principal, slug)
    const credentials = (yield* store.bySlug(slug)).map(record)
    return { credentials, data: credentials }
  })

  const revoke = Effect.fn("Credentials.revoke")(function* (principal: Principal, slug: string, reason: string | null, context: AuditContext) {
    yield* loadOwned(principal, slug)
    const now = yield* Clock.currentTimeMillis
    const active = (yield* store.bySlug(slug)).find((row) => isActive(row, now))
    if (active === undefined) return yield* refuse(NoActiveCredential.of(slug))
    const revoked = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const row = yield* store.revoke(active.vc_id, reason)
          if (row !== undefined) {
            yield* store.audit({
              orgUuid: principal.orgUuid,
              actor: auditActor(principal),
              event: "credential.revoked",
              target: active.vc_id,
              details: { agent_slug: slug, reason },
              requestId: context.requestId
            })
          }
          return row
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    if (revoked === undefined || revoked.revoked_at === null) return yield* refuse(NoActiveCredential.of(slug))
    return { vc_id: revoked.vc_id, revoked_at: revoked.revoked_at, reason }
  })

  const verify = Effect.fn("Credentials.verify")(function* (given: Record<string, unknown>) {
    const credential = unwrapped(given)
    const structure_valid = REQUIRED_FIELDS.every((field) => credential[field] !== undefined && credential[field] !== null)
    const issuer = credential.issuer
    const issuerId = typeof issuer === "string" ? issuer : typeof issuer === "object" && issuer !== null ? (issuer as { id?: unknown }).id : undefined
    const issuer_valid = issuerId === rootDid
    const now = yield* Clock.currentTimeMillis
    const expiration = typeof credential.expirationDate === "string" ? Date.parse(credential.expirationDate) : undefined
    const not_expired = expiration === undefined ? credential.expirationDate === undefined : !Number.isNaN(expiration) && expiration > now
    const stored = typeof credential.id === "string" ? yield* store.byId(credential.id) : undefined
    const not_revoked = stored !== undefined && stored.revoked_at === null
    const { loader } = yield* signing
    const signature = structure_valid && (yield* Effect.promise(() => proofVerifies(credential, loader)))
    const checks = { signature, not_expired, not_revoked, issuer_valid, structure_valid }
    return { valid: Object.values(checks).every(Boolean), checks }
  })

  const statusList = Effect.fn("Credentials.statusList")(function* (listId: string) {
    const list = yield* store.statusList(listId)
    if (list === undefined) return yield* refuse(StatusListNotFound.of(listId))
    const kept = signedLists.get(listId)
    if (kept !== undefined && kept.updatedAt === list.updated_at) return kept.document
    const id = statusListUrl(listId)
    const document = yield* sign({
      "@context": [CREDENTIALS_V1, STATUS_LIST_2021_V1],
      id,
      type: ["VerifiableCredential", "StatusList2021Credential"],
      issuer: rootDid,
      issuanceDate: list.updated_at,
      issued: list.updated_at,
      credentialSubject: { id: `${id}#list`, type: "StatusList2021", statusPurpose: "revocation", encodedList: encodeStatusList(list.bits) }
    })
    signedLists.set(listId, { updatedAt: list.updated_at, document })
    return document
  })

  return Credentials.of({ issue, current, list, revoke, verify, statusList, context: agentCapabilityContext(baseUrl) })
})

export interface CredentialsService {
  /**
   * A new credential for the agent as it now is, superseding (revoking) the previous one.
   * Runs in the caller's transaction: the registration or change commits with its credential.
   */
  readonly issue: (slug: string) => Effect.Effect<void>
  /** The public read: the current (newest, unrevoked, unexpired) credential or null with why. */
  readonly current: (slug: string) => Effect.Effect<CurrentCredential, CredentialsError>
  readonly list: (principal: Principal, slug: string) => Effect.Effect<CredentialList, CredentialsError>
  /** `reason` null: none given. */
  readonly revoke: (principal: Principal, slug: string, reason: string | null, context: AuditContext) => Effect.Effect<Revoked, CredentialsError>
  /** The spec's five checks, of the credential or of the one `GET …/credential` wrapped; `valid` only when all pass. Never fails: unreadable input fails checks. */
  readonly verify: (credential: Record<string, unknown>) => Effect.Effect<Verification>
  /** The StatusList2021 credential of a list, signed by the platform key. */
  readonly statusList: (listId: string) => Effect.Effect<Record<string, unknown>, CredentialsError>
  /** The JSON-LD context of agent capability credentials. */
  readonly context: Record<string, unknown>
}

export class Credentials extends Context.Service<Credentials, CredentialsService>()("gateway/Credentials") {
  static readonly layer = Layer.effect(Credentials, makeCredentials)
}

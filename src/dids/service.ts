/**
 * Agent DIDs: keys generated at registration and rotated by admins, did:web documents and
 * agent cards, resolution of anyone's did:web (ours from the database, others over HTTPS with a
 * 5-minute cache), and the agent key's signature for mutual signing.
 */
import { readFileSync } from "node:fs"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { type AgentCard, type AgentDidInfo, DID_CONTEXT, type DidDocument, ED25519_2020_CONTEXT, type Resolved, type Rotated } from "../../protocol/dids.js"
import { auditActor } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { agentDid, didWebDocumentUrl, ed25519Multibase, localAgentSlug, platformDid } from "../platform/did-web.js"
import { Outbound, outbound, responseText } from "../platform/outbound/index.js"
import { ShortCache } from "../platform/redis/index.js"
import { Secrets } from "../platform/secrets.js"
import { AgentNotFound, DidNotResolved, type DidsError, refuse } from "./errors.js"
import { generateAgentKey, signWithAgentKey } from "./keys.js"
import { AgentScores } from "./ports.js"
import { type AgentKeyRow, makeDidsStore } from "./store.js"

/** Remote documents are kept this long (spec 001 "Limits"). */
const RESOLVE_CACHE_MS = 5 * 60_000
/** A DID document larger than this is refused. */
const MAX_DOCUMENT_BYTES = 256 * 1024

export interface AuditContext {
  readonly requestId: string | null
}

export const makeDids = Effect.gen(function* () {
  const store = yield* makeDidsStore
  const config = yield* Config
  const { envelope } = yield* Secrets
  const cache = yield* ShortCache
  const baseUrl = config.baseUrl
  const policy = (yield* Outbound).policy
  const ca = config.outboundCaFile === undefined ? undefined : readFileSync(config.outboundCaFile)

  const documentOf = (row: AgentKeyRow & { public_key_multibase: string }): DidDocument => {
    const did = agentDid(baseUrl, row.agent_slug)
    const keyId = `${did}#key-1`
    return {
      "@context": [DID_CONTEXT, ED25519_2020_CONTEXT],
      id: did,
      verificationMethod: [{ id: keyId, type: "Ed25519VerificationKey2020", controller: did, publicKeyMultibase: row.public_key_multibase }],
      authentication: [keyId],
      assertionMethod: [keyId],
      service: [{ id: `${did}#agent-card`, type: "AgentCard", serviceEndpoint: `${baseUrl}/agents/${row.agent_slug}/.well-known/agent-card.json` }]
    }
  }

  const withKey = (row: AgentKeyRow | undefined): row is AgentKeyRow & { public_key_multibase: string; private_key_sealed: string; version: number } =>
    row !== undefined && row.public_key_multibase !== null && row.private_key_sealed !== null && row.version !== null

  /** Another party's did:web document over HTTPS (the outbound client's address checks apply). */
  const fetchRemote = Effect.fnUntraced(function* (did: string) {
    const url = didWebDocumentUrl(did)
    if (url === undefined) return yield* refuse(DidNotResolved.of(did, "not a well-formed did:web identifier"))
    const response = yield* outbound(url, {
      policy,
      headers: { accept: "application/did+json, application/json" },
      maxResponseBytes: MAX_DOCUMENT_BYTES,
      timeoutMs: 10_000,
      ...(ca === undefined ? {} : { ca })
    }).pipe(Effect.catch((error) => refuse(DidNotResolved.of(did, error.message))))
    if (response.status !== 200) return yield* refuse(DidNotResolved.of(did, `${url.href} answered ${response.status}`))
    let document: unknown
    try {
      document = JSON.parse(responseText(response))
    } catch {
      return yield* refuse(DidNotResolved.of(did, "the document is not JSON"))
    }
    if (document === null || typeof document !== "object" || Array.isArray(document)) return yield* refuse(DidNotResolved.of(did, "the document is not a JSON object"))
    if ((document as { id?: unknown }).id !== did) return yield* refuse(DidNotResolved.of(did, "the document's id is another DID"))
    return document as Record<string, unknown>
  })

  /** Our own DIDs, read from the database: the platform's root and every agent's. */
  const resolveLocal = Effect.fnUntraced(function* (did: string) {
    const slug = localAgentSlug(baseUrl, did)
    if (slug === undefined) return undefined
    const row = yield* store.find(slug)
    if (!withKey(row)) return yield* refuse(DidNotResolved.of(did, "no such agent, or it has no key"))
    return documentOf(row) as unknown as Record<string, unknown>
  })

  const resolve = Effect.fn("Dids.resolve")(function* (did: string) {
    const local = yield* resolveLocal(did)
    if (local !== undefined) return { did, document: local, cached: false }
    const key = `did:${did}`
    const hit = yield* cache.get(key)
    if (hit !== undefined) return { did, document: JSON.parse(hit) as Record<string, unknown>, cached: true }
    const document = yield* fetchRemote(did)
    yield* cache.set(key, JSON.stringify(document), RESOLVE_CACHE_MS)
    return { did, document, cached: false }
  })

  const createKey = Effect.fn("Dids.createKey")(function* (slug: string) {
    const key = generateAgentKey(envelope, slug, 1)
    yield* store.storeKey(slug, ed25519Multibase(key.publicKeyRaw), key.privateKeySealed, 1)
  })

  const publicDocument = Effect.fn("Dids.publicDocument")(function* (slug: string) {
    const row = yield* store.find(slug)
    if (!withKey(row)) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return documentOf(row)
  })

  const agentDidOf = Effect.fn("Dids.agentDid")(function* (principal: Principal, slug: string) {
    const row = yield* store.find(slug)
    if (row === undefined || row.org_uuid !== principal.orgUuid) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    const did = agentDid(baseUrl, slug)
    return withKey(row)
      ? { did, document: documentOf(row), created_at: row.key_created_at, version: row.version }
      : { did, document: {}, created_at: null, version: 0 }
  })

  const rotate = Effect.fn("Dids.rotate")(function* (principal: Principal, slug: string, context: AuditContext) {
    const version = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const locked = yield* store.lockVersion(principal.orgUuid, slug)
          if (locked === undefined) return undefined
          const next = (locked.version ?? 0) + 1
          const key = generateAgentKey(envelope, slug, next)
          yield* store.storeKey(slug, ed25519Multibase(key.publicKeyRaw), key.privateKeySealed, next)
          yield* store.audit({
            orgUuid: principal.orgUuid,
            actor: auditActor(principal),
            event: "agent.did.rotated",
            target: slug,
            details: { version: next },
            requestId: context.requestId
          })
          return next
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    if (version === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return { new_did: agentDid(baseUrl, slug), new_version: version }
  })

  const card = Effect.fn("Dids.card")(function* (slug: string) {
    const row = yield* store.find(slug)
    if (row === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    const block = { notarization: true, mutual_signing: withKey(row), reputation_score: yield* (yield* AgentScores).scoreOf(slug) }
    return {
      name: row.name,
      description: row.description,
      url: `${baseUrl}/api/v1/agents/public/${slug}`,
      did: agentDid(baseUrl, slug),
      capabilities: row.capabilities,
      authentication: { type: "bearer", authorization_url: `${baseUrl}/api/v1/auth/login` },
      aira: block,
      platform: block
    }
  })

  const signAs = Effect.fn("Dids.signAs")(function* (orgUuid: string, slug: string, bytes: Uint8Array) {
    const row = yield* store.find(slug)
    if (row === undefined || row.org_uuid !== orgUuid) return "no_agent" as const
    if (!withKey(row)) return "no_key" as const
    return { did: agentDid(baseUrl, slug), signature: signWithAgentKey(envelope, slug, row.version, row.private_key_sealed, bytes) }
  })

  return Dids.of({ createKey, publicDocument, agentDid: agentDidOf, rotate, card, resolve, signAs, rootDid: platformDid(baseUrl) })
})

export interface DidsService {
  /** A fresh key for a newly registered agent (version 1); call in the registration's transaction. */
  readonly createKey: (slug: string) => Effect.Effect<void>
  /** The public document: any agent with a key, whoever owns it. */
  readonly publicDocument: (slug: string) => Effect.Effect<DidDocument, DidsError>
  /** The organization's own agent: its DID info record. */
  readonly agentDid: (principal: Principal, slug: string) => Effect.Effect<AgentDidInfo, DidsError>
  /** A new keypair; the old one is overwritten (destroyed) and the DID stays. Audited as agent.did.rotated. */
  readonly rotate: (principal: Principal, slug: string, context: AuditContext) => Effect.Effect<Rotated, DidsError>
  /** The platform block's `reputation_score` is the agent's score now (the reputation area, through `AgentScores`). */
  readonly card: (slug: string) => Effect.Effect<AgentCard, DidsError, AgentScores>
  /** Ours from the database, others over HTTPS (cached 5 minutes). */
  readonly resolve: (did: string) => Effect.Effect<Resolved, DidsError>
  /**
   * The organization's agent's DID and its signature over `bytes`: `no_agent` when the slug is
   * not an agent of `orgUuid` (slugs are global: another organization's agent never signs),
   * `no_key` when it has no key.
   */
  readonly signAs: (orgUuid: string, slug: string, bytes: Uint8Array) => Effect.Effect<"no_agent" | "no_key" | { readonly did: string; readonly signature: string }>
  readonly rootDid: string
}

export class Dids extends Context.Service<Dids, DidsService>()("gateway/Dids") {
  static readonly layer = Layer.effect(Dids, makeDids)
}

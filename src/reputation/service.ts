/**
 * Reputation: each agent's score under formula "1.0", computed from its record when asked
 * (reputation, verify, the agent card, an accepted attestation, decommissioning) and kept as a
 * signed snapshot whenever its inputs changed; counterparties' attestations of its actions, signed
 * with a key of their own did:web document (resolved as mutual signing resolves it).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { listPage } from "../../protocol/common.js"
import {
  AttestationStatement,
  type Attested,
  AttestRequest,
  type Reputation as ReputationAnswer,
  type ReputationHistory,
  type ReputationInputs,
  type ReputationVerification
} from "../../protocol/reputation.js"
import { AgentScores } from "../dids/ports.js"
import { Dids } from "../dids/service.js"
import { ed25519Methods } from "../dids/verification.js"
import { Config } from "../platform/config.js"
import { agentDid, localAgentSlug, platformDid } from "../platform/did-web.js"
import { sha256Tagged } from "../platform/digest.js"
import { newId } from "../platform/ids.js"
import { parseInstant } from "../platform/instant.js"
import { Receipts } from "../receipts/service.js"
import { signPayload, verifySignature } from "../receipts/signing.js"
import {
  AgentNotFound,
  AttestationInvalidSignature,
  AttestedActionNotFound,
  AttestedActionState,
  DidNoVerificationMethod,
  DidUnsupportedKeyFormat,
  DuplicateAttestation,
  InvalidInput,
  type ReputationError,
  refuse,
  SelfAttestation
} from "./errors.js"
import { FORMULA_VERSION, sameInputs, scoreOf, signedStatement, tierOf } from "./formula.js"
import { type AgentRow, makeReputationStore, type SnapshotRow } from "./store.js"

const DAY_MS = 86_400_000
/** How far in the future an attestation may be dated (clock skew between the parties). */
const ATTESTED_AT_LEEWAY_MS = 5 * 60_000
/** Only these outcomes of an action can be attested. */
const ATTESTABLE = new Set(["notarized", "failed"])

type Trigger = SnapshotRow["trigger"]
type Issue = { readonly path: string; readonly message: string }

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** Every issue of `schema` over `value`, its paths under `prefix` (empty: the body). */
const issuesOf = <S extends Schema.Top>(schema: S, value: unknown, prefix: string): ReadonlyArray<Issue> => {
  const decoded = Schema.decodeUnknownExit(schema as unknown as Schema.Codec<unknown, unknown>, { errors: "all" })(value)
  if (decoded._tag === "Success") return []
  const error = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined || !Schema.isSchemaError(error.error)) return [{ path: prefix || "body", message: "is not valid" }]
  return formatter(error.error.issue).issues.map((issue) => {
    const segments = (issue.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment))
    return { path: [prefix, ...segments].filter((part) => part !== "").join(".") || "body", message: issue.message }
  })
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value)

const reputationView = (row: SnapshotRow): ReputationAnswer => ({
  agent_slug: row.agent_slug,
  score: row.score,
  tier: row.tier,
  total_attestations: row.inputs.attestations,
  computed_at: row.inputs.computed_at,
  score_hash: row.score_hash,
  formula_version: row.formula_version,
  signature: row.signature,
  public_key_id: row.public_key_id,
  snapshot_uuid: row.snapshot_uuid
})

const snapshotView = (row: SnapshotRow) => ({
  snapshot_uuid: row.snapshot_uuid,
  score: row.score,
  tier: row.tier,
  formula_version: row.formula_version,
  inputs: row.inputs,
  score_hash: row.score_hash,
  signature: row.signature,
  public_key_id: row.public_key_id,
  computed_at: row.inputs.computed_at,
  trigger: row.trigger
})

export const makeReputation = Effect.gen(function* () {
  const store = yield* makeReputationStore
  const receipts = yield* Receipts
  const dids = yield* Dids
  const { baseUrl } = yield* Config

  const requireAgent = Effect.fnUntraced(function* (slug: string) {
    const agent = yield* store.agent(slug)
    if (agent === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return agent
  })

  /**
   * The agent's inputs counted now, under the agent's lock; the latest snapshot when they are the
   * same apart from `computed_at`, else a new signed one. Runs in the caller's transaction.
   */
  const snapshotIn = Effect.fnUntraced(function* (slug: string, trigger: Trigger) {
    yield* store.lock(slug)
    const agent = yield* store.agent(slug)
    if (agent === undefined) return undefined
    const counts = yield* store.counts(slug)
    const now = yield* Clock.currentTimeMillis
    const inputs: ReputationInputs = {
      agent_slug: slug,
      notarized: counts.notarized,
      failed: counts.failed,
      denied_by_policy: counts.denied_by_policy,
      denied_by_human: counts.denied_by_human,
      human_approved: counts.human_approved,
      attested_success: counts.attested_success,
      attested_failure: counts.attested_failure,
      attestations: counts.attestations,
      age_days: Math.max(0, Math.floor((now - Date.parse(agent.created_at)) / DAY_MS)),
      decommissioned: agent.status === "decommissioned",
      computed_at: new Date(now).toISOString()
    }
    const latest = yield* store.latest(slug)
    if (latest !== undefined && latest.formula_version === FORMULA_VERSION && sameInputs(latest.inputs, inputs)) return latest
    const score = scoreOf(inputs)
    // Signed like a receipt: the active receipt key over the JCS bytes whose sha256 is score_hash.
    const signed = signPayload(yield* receipts.platformSigner, signedStatement(FORMULA_VERSION, inputs, score))
    const row: SnapshotRow = {
      snapshot_uuid: newId("rep"),
      org_uuid: agent.org_uuid,
      agent_slug: slug,
      formula_version: FORMULA_VERSION,
      inputs,
      score,
      tier: tierOf(inputs, score),
      score_hash: signed.payload_hash,
      signature: signed.signature,
      public_key_id: signed.public_key_id,
      computed_at: inputs.computed_at,
      trigger
    }
    yield* store.insertSnapshot(row)
    return row
  })

  const snapshot = (slug: string, trigger: Trigger) => store.sql.withTransaction(snapshotIn(slug, trigger)).pipe(Effect.catchTag("SqlError", Effect.die))

  const currentRow = Effect.fnUntraced(function* (slug: string) {
    const row = yield* snapshot(slug, "read")
    if (row === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return row
  })

  const current = Effect.fn("Reputation.current")(function* (slug: string) {
    return reputationView(yield* currentRow(slug))
  })

  const verify = Effect.fn("Reputation.verify")(function* (slug: string) {
    const row = yield* currentRow(slug)
    return {
      agent_slug: row.agent_slug,
      inputs: row.inputs,
      formula_version: row.formula_version,
      score: row.score,
      tier: row.tier,
      score_hash: row.score_hash,
      signature: row.signature,
      public_key_id: row.public_key_id,
      computed_at: row.inputs.computed_at
    } satisfies ReputationVerification
  })

  const history = Effect.fn("Reputation.history")(function* (slug: string, page: number, perPage: number) {
    yield* requireAgent(slug)
    const { rows, total } = yield* store.history(slug, page, perPage)
    return listPage(rows.map(snapshotView), { page, perPage, total }, "snapshots") satisfies ReputationHistory
  })

  /** 422 for the body's shape and for a statement that disagrees with it, every issue at once. */
  const checkedRequest = Effect.fnUntraced(function* (slug: string, body: unknown, now: number) {
    if (!isObject(body)) return yield* refuse(InvalidInput.one("body", "must be a JSON object"))
    // The SDKs send the action as `action_id`: read when `action_uuid` is absent.
    const actionUuid = body.action_uuid ?? body.action_id
    const given = actionUuid === undefined ? body : { ...body, action_uuid: actionUuid }
    const shape = issuesOf(AttestRequest, given, "")
    if (shape.length > 0) return yield* refuse(InvalidInput.of(shape))
    const request = given as unknown as AttestRequest
    let statement: unknown
    try {
      statement = JSON.parse(request.attestation)
    } catch {
      statement = undefined
    }
    if (!isObject(statement)) return yield* refuse(InvalidInput.one("attestation", "must be the text of a JSON object"))
    const issues = [...issuesOf(AttestationStatement, statement, "attestation")]
    const disagrees = (key: "agent_slug" | "action_uuid" | "counterparty_did", expected: string, where: string) => {
      if (typeof statement[key] === "string" && statement[key] !== expected) issues.push({ path: `attestation.${key}`, message: `must equal ${where}` })
    }
    disagrees("agent_slug", slug, "the agent of the path")
    disagrees("action_uuid", request.action_uuid, "the body's action_uuid")
    disagrees("counterparty_did", request.counterparty_did, "the body's counterparty_did")
    let attestedAt: number | undefined
    if (typeof statement.attested_at === "string") {
      attestedAt = parseInstant(statement.attested_at)
      if (attestedAt === undefined) issues.push({ path: "attestation.attested_at", message: "must be an ISO 8601 timestamp" })
      else if (attestedAt > now + ATTESTED_AT_LEEWAY_MS) issues.push({ path: "attestation.attested_at", message: "must not be more than 5 minutes after now" })
    }
    if (issues.length > 0 || attestedAt === undefined) return yield* refuse(InvalidInput.of(issues))
    const outcome = statement.outcome as "success" | "failure"
    return { ...request, outcome, attestedAt: new Date(attestedAt).toISOString() }
  })

  /** The agent's own DID, another agent's of its organization, or the platform's. */
  const selfAttested = Effect.fnUntraced(function* (agent: AgentRow, did: string) {
    if (did === agentDid(baseUrl, agent.agent_slug) || did === platformDid(baseUrl)) return true
    const other = localAgentSlug(baseUrl, did)
    return other !== undefined && (yield* store.ownerOf(other)) === agent.org_uuid
  })

  /** The counterparty's Ed25519 methods, or the refusal its document earns (not resolved: no method). */
  const counterpartyMethods = Effect.fnUntraced(function* (actionUuid: string, did: string) {
    const resolved = yield* Effect.option(dids.resolve(did))
    if (resolved._tag === "None") return yield* refuse(DidNoVerificationMethod.of(actionUuid))
    const methods = ed25519Methods(resolved.value.document)
    if (methods === "none") return yield* refuse(DidNoVerificationMethod.of(actionUuid))
    if (methods === "unsupported") return yield* refuse(DidUnsupportedKeyFormat.of(actionUuid))
    return methods
  })

  /** Checked in the contract's order; stored with the exact text and signature, never edited. */
  const attest = Effect.fn("Reputation.attest")(function* (slug: string, body: unknown) {
    const agent = yield* requireAgent(slug)
    const request = yield* checkedRequest(slug, body, yield* Clock.currentTimeMillis)
    const action = yield* store.ownedAction(slug, request.action_uuid)
    if (action === undefined) return yield* refuse(AttestedActionNotFound.of(request.action_uuid))
    if (!ATTESTABLE.has(action.status)) return yield* refuse(AttestedActionState.of(action.action_uuid, action.status))
    if (yield* selfAttested(agent, request.counterparty_did)) return yield* refuse(SelfAttestation.of(request.counterparty_did))
    const methods = yield* counterpartyMethods(action.action_uuid, request.counterparty_did)
    const bytes = Buffer.from(request.attestation, "utf8")
    const method = methods.find((candidate) => verifySignature(candidate.publicKeyRaw, bytes, request.signature))
    if (method === undefined) return yield* refuse(AttestationInvalidSignature.of(request.counterparty_did))
    const attestation = {
      attestation_uuid: newId("att"),
      org_uuid: action.org_uuid,
      agent_slug: slug,
      action_uuid: action.action_uuid,
      counterparty_did: request.counterparty_did,
      outcome: request.outcome,
      attested_at: request.attestedAt,
      attestation: request.attestation,
      signature: request.signature,
      attestation_hash: sha256Tagged(bytes),
      verification_method: method.id ?? request.counterparty_did,
      recorded_at: new Date(yield* Clock.currentTimeMillis).toISOString()
    }
    // The attestation and the snapshot it changes commit together.
    const recorded = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          if (!(yield* store.insertAttestation(attestation))) return "duplicate" as const
          return yield* snapshotIn(slug, "attestation")
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    if (recorded === "duplicate") return yield* refuse(DuplicateAttestation.of(action.action_uuid, request.counterparty_did))
    if (recorded === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    const { org_uuid: _org, attestation: _text, signature: _signature, ...answered } = attestation
    return { ...answered, reputation: { score: recorded.score, tier: recorded.tier, score_hash: recorded.score_hash } } satisfies Attested
  })

  const scoreOfAgent = Effect.fn("Reputation.scoreOf")(function* (slug: string) {
    const row = yield* snapshot(slug, "read")
    return row === undefined ? null : row.score
  })

  const recordDecommission = Effect.fn("Reputation.recordDecommission")(function* (slug: string) {
    yield* snapshot(slug, "decommission")
  })

  return Reputation.of({ current, history, verify, attest, scoreOf: scoreOfAgent, recordDecommission })
})

export interface ReputationService {
  /** The score now: the latest snapshot when the inputs are unchanged, else a new one (trigger `read`). */
  readonly current: (slug: string) => Effect.Effect<ReputationAnswer, ReputationError>
  /** Stored snapshots, newest first. */
  readonly history: (slug: string, page: number, perPage: number) => Effect.Effect<ReputationHistory, ReputationError>
  /** The same snapshot as `current`, with the inputs anyone recomputes the score and its hash from. */
  readonly verify: (slug: string) => Effect.Effect<ReputationVerification, ReputationError>
  /** A counterparty's signed attestation of one of the agent's actions (`body` as received: checked here, after the agent). */
  readonly attest: (slug: string, body: unknown) => Effect.Effect<Attested, ReputationError>
  /** The score now, for the agent card; null when there is no such agent. */
  readonly scoreOf: (slug: string) => Effect.Effect<number | null>
  /** The snapshot of a decommissioning (trigger `decommission`), after it committed. */
  readonly recordDecommission: (slug: string) => Effect.Effect<void>
}

export class Reputation extends Context.Service<Reputation, ReputationService>()("gateway/Reputation") {
  static readonly layer = Layer.effect(Reputation, makeReputation)
}

/** Agent cards read their score through the DIDs area's port. */
export const AgentScoresLive = Layer.effect(AgentScores)(Effect.map(Reputation, (reputation) => AgentScores.of({ scoreOf: reputation.scoreOf })))

/** The service and the port: add to servicesLayer below the agents registry (which records decommissions) and above DIDs. */
export const reputationLayer = AgentScoresLive.pipe(Layer.provideMerge(Reputation.layer))

/**
 * Evidence and discovery. A package freezes the organization's chosen actions, each with its
 * signed receipt and its place in the receipt and parent chains, into one document signed by the
 * platform key (`Receipts.signDocument`: JCS, sha256, Ed25519, RFC 3161). Time travel answers
 * from the actions' status history as it stood at a past instant, and records every query. A
 * liability chain walks parent actions up to the root.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { listPage, type Page } from "../../protocol/common.js"
import {
  type CreatePackageRequest,
  type DiscoveryQueryFields,
  type DiscoveryRecord,
  type EvidencePackage,
  type LiabilityChain,
  type LiabilityHop,
  MAX_CHAIN_ENTRIES,
  MAX_DISCOVERY_RESULTS,
  type PackageAction,
  type PackageSummary,
  type SealedPackage,
  type TimeTravelRequest
} from "../../protocol/evidence.js"
import { chainAgentId } from "../actions/chain.js"
import { auditActor } from "../platform/audit.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newUuid } from "../platform/ids.js"
import { parseInstant } from "../platform/instant.js"
import { Receipts } from "../receipts/service.js"
import { canonicalJsonBytes, sha256Tagged } from "../receipts/signing.js"
import {
  ChainActionNotFound,
  CrossOrgActions,
  EmptyActionList,
  type EvidenceError,
  FutureTimestamp,
  MissingReason,
  PackageActionsNotFound,
  PackageNotFound,
  refuse
} from "./errors.js"
import { type ChainRow, type DiscoveryFilter, makeEvidenceStore, type PackagedActionRow, type PackageRow } from "./store.js"

const MAX_METADATA_BYTES = 16_384

export interface RequestContext {
  readonly requestId: string | null
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** Who authorized an action: the human who approved it, else the policy that let it through, else nobody. */
export const authorizedBy = (row: Pick<ChainRow, "status" | "approved_by" | "approved_at" | "approval_via" | "policy_uuid">): string | null => {
  const went = row.status === "authorized" || row.status === "approved" || row.status === "notarized" || row.status === "failed"
  if (!went) return null
  if (row.approved_at !== null && row.approval_via !== "expiry") return row.approved_by ?? "human"
  return row.policy_uuid ?? "policy"
}

const unique = (values: ReadonlyArray<string>) => [...new Set(values)]

/** The receipt as it was signed, and the links a verifier follows from it. */
const packagedAction = (row: PackagedActionRow): PackageAction => {
  const signed = row.receipt === null ? undefined : (JSON.parse(row.receipt.signed_payload) as Record<string, unknown>)
  const textOf = (key: string) => (typeof signed?.[key] === "string" ? (signed[key] as string) : null)
  const r = row.receipt
  return {
    action_uuid: row.action_uuid,
    action_type: row.action_type,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    model_id: row.model_id,
    model_version: row.model_version,
    status: row.status,
    action_details_hash: row.action_details_hash,
    instruction_hash: row.instruction_hash,
    outcome: row.outcome,
    outcome_hash: row.outcome_hash,
    policy_uuid: row.policy_uuid,
    approved_by: row.approved_by,
    approved_at: row.approved_at,
    denial_reason: row.denial_reason,
    created_at: row.created_at,
    receipt:
      r === null
        ? null
        : {
            receipt_uuid: r.receipt_uuid,
            receipt_version: r.receipt_version,
            receipt_status: r.receipt_status,
            payload_hash: r.payload_hash,
            signature: r.signature,
            public_key_id: r.public_key_id,
            timestamp_token: r.timestamp_token,
            signed_payload: r.signed_payload,
            created_at: r.created_at
          },
    chain: {
      chain_agent_id: chainAgentId(row.agent_id),
      agent_sequence: r?.agent_sequence ?? null,
      previous_payload_hash: textOf("previous_payload_hash"),
      previous_receipt_uuid: row.previous_receipt_uuid,
      parent_action_uuid: row.parent_action_uuid,
      parent_payload_hash: textOf("parent_payload_hash")
    }
  }
}

/** The published SDKs' keys of a package (CONTRACT-sdk-beyond §8), outside what is sealed. */
const sdkKeys = (row: PackageRow) => ({
  id: row.package_uuid,
  action_uuids: row.action_uuids,
  created_at: row.sealed_at,
  description: row.purpose,
  agent_slugs: [...new Set(row.agent_ids)].sort()
})

const summaryOf = (row: PackageRow): PackageSummary => ({
  package_uuid: row.package_uuid,
  title: row.title,
  purpose: row.purpose,
  status: "sealed",
  action_count: row.action_count,
  package_hash: row.package_hash,
  signature: row.signature,
  public_key_id: row.public_key_id,
  sealed_at: row.sealed_at,
  created_by: row.created_by,
  ...sdkKeys(row)
})

/** A parent outside the chain (another organization's, or gone) is not named: it was not followed. */
const hopOf = (row: ChainRow, shownParent: (uuid: string) => boolean): LiabilityHop => ({
  hop: row.hop,
  action_uuid: row.action_uuid,
  action_type: row.action_type,
  agent_id: row.agent_id,
  model_id: row.model_id,
  status: row.status,
  authorized_by: authorizedBy(row),
  parent_action_uuid: row.parent_action_uuid !== null && shownParent(row.parent_action_uuid) ? row.parent_action_uuid : null,
  created_at: row.created_at
})

/** The query's filters, from `query` or (the published SDK) the top level, checked and normalized. */
const filterOf = (request: TimeTravelRequest) =>
  Effect.gen(function* () {
    // The published SDKs name the agent `agent_slug`; `agent_id` wins when both are there.
    const fields: DiscoveryQueryFields = request.query ?? { ...request, agent_id: request.agent_id ?? request.agent_slug }
    const from = fields.date_from ?? null
    const to = fields.date_to ?? null
    const fromAt = from === null ? null : parseInstant(from)
    const toAt = to === null ? null : parseInstant(to, true)
    const issues = [
      ...(fromAt === undefined ? [{ path: "query.date_from", message: "must be an ISO 8601 date or timestamp" }] : []),
      ...(toAt === undefined ? [{ path: "query.date_to", message: "must be an ISO 8601 date or timestamp" }] : []),
      ...(typeof fromAt === "number" && typeof toAt === "number" && fromAt > toAt ? [{ path: "query.date_to", message: "must not be before date_from" }] : [])
    ]
    if (issues.length > 0) return yield* refuse(InvalidInput.of(issues))
    return {
      agent_id: fields.agent_id ?? null,
      action_type: fields.action_type ?? null,
      date_from: typeof fromAt === "number" ? new Date(fromAt).toISOString() : null,
      date_to: typeof toAt === "number" ? new Date(toAt).toISOString() : null,
      status: fields.status ?? null
    } satisfies DiscoveryFilter
  })

export const makeEvidence = Effect.gen(function* () {
  const store = yield* makeEvidenceStore
  const receipts = yield* Receipts

  /**
   * Seals a package: every uuid must be an action of the caller's organization (unknown → 404
   * ACTION_NOT_FOUND, another organization's → 422 CROSS_ORG_ACTIONS), checked before anything is signed.
   */
  const createPackage = Effect.fn("Evidence.createPackage")(function* (principal: Principal, input: CreatePackageRequest, context: RequestContext) {
    const uuids = unique(input.action_uuids)
    if (uuids.length === 0) return yield* refuse(new EmptyActionList({}))
    const metadata = input.metadata ?? {}
    if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
      return yield* refuse(InvalidInput.one("metadata", `must be at most ${MAX_METADATA_BYTES} bytes as JSON`))
    }
    const owners = yield* store.owners(principal.orgUuid, uuids)
    const missing = uuids.filter((uuid) => !owners.has(uuid))
    if (missing.length > 0) return yield* refuse(PackageActionsNotFound.of(missing))
    const foreign = uuids.filter((uuid) => owners.get(uuid) === false)
    if (foreign.length > 0) return yield* refuse(CrossOrgActions.of(foreign))

    const rows = yield* store.packagedActions(principal.orgUuid, uuids)
    const byUuid = new Map(rows.map((row) => [row.action_uuid, row]))
    // Every uuid was the organization's a moment ago; actions are never deleted except with the organization.
    const actions = uuids.flatMap((uuid) => {
      const row = byUuid.get(uuid)
      return row === undefined ? [] : [packagedAction(row)]
    })
    const sealed: SealedPackage = {
      package_uuid: newUuid(),
      org_uuid: principal.orgUuid,
      title: input.title,
      // The published SDKs send `description`; `purpose` wins when both are there.
      purpose: input.purpose ?? input.description ?? null,
      status: "sealed",
      action_count: actions.length,
      actions,
      metadata,
      sealed_at: new Date(yield* Clock.currentTimeMillis).toISOString(),
      created_by: principal.userUuid
    }
    const signed = yield* receipts.signDocument(sealed)
    const row: PackageRow = {
      package_uuid: sealed.package_uuid,
      org_uuid: sealed.org_uuid,
      title: sealed.title,
      purpose: sealed.purpose,
      action_count: sealed.action_count,
      signed_payload: signed.signed_payload,
      package_hash: signed.payload_hash,
      signature: signed.signature,
      public_key_id: signed.public_key_id,
      timestamp_token: signed.timestamp_token,
      created_by: sealed.created_by,
      sealed_at: sealed.sealed_at,
      action_uuids: actions.map((action) => action.action_uuid),
      agent_ids: actions.flatMap((action) => (action.agent_id === null ? [] : [action.agent_id]))
    }
    yield* store.insertPackage(row, {
      orgUuid: principal.orgUuid,
      actor: auditActor(principal),
      event: "evidence.package.sealed",
      target: row.package_uuid,
      details: { action_count: row.action_count, package_hash: row.package_hash },
      requestId: context.requestId
    })
    return summaryOf(row)
  })

  const listPackages = Effect.fn("Evidence.listPackages")(function* (principal: Principal, query: PageRequest) {
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    const [rows, total] = yield* store.packages(principal.orgUuid, page, perPage)
    return listPage(rows.map(summaryOf), { page, perPage, total }, "packages")
  })

  /** The package exactly as sealed, with its seal. */
  const getPackage = Effect.fn("Evidence.getPackage")(function* (principal: Principal, packageUuid: string) {
    // The column is a UUID: anything else names no package (and must not reach the query).
    const row = UUID.test(packageUuid) ? yield* store.packageById(principal.orgUuid, packageUuid.toLowerCase()) : undefined
    if (row === undefined) return yield* refuse(PackageNotFound.of(packageUuid))
    const sealed = JSON.parse(row.signed_payload) as SealedPackage
    return {
      ...sealed,
      package_hash: row.package_hash,
      signature: row.signature,
      public_key_id: row.public_key_id,
      timestamp_token: row.timestamp_token,
      ...sdkKeys(row)
    } satisfies EvidencePackage
  })

  /** Answers as of `point_in_time` and records the query (the answer is the record). */
  const timeTravel = Effect.fn("Evidence.timeTravel")(function* (principal: Principal, request: TimeTravelRequest, context: RequestContext) {
    const reason = request.reason?.trim() ?? ""
    if (reason === "") return yield* refuse(new MissingReason({}))
    const at = parseInstant(request.point_in_time)
    if (at === undefined) return yield* refuse(InvalidInput.one("point_in_time", "must be an ISO 8601 date or timestamp"))
    const now = yield* Clock.currentTimeMillis
    if (at > now) return yield* refuse(FutureTimestamp.of(request.point_in_time))
    const filter = yield* filterOf(request)
    const pointInTime = new Date(at).toISOString()
    const { results, total } = yield* store.asOf(principal.orgUuid, pointInTime, filter, MAX_DISCOVERY_RESULTS)
    const record: DiscoveryRecord = {
      discovery_query_uuid: newUuid(),
      point_in_time: pointInTime,
      reason,
      query: filter,
      results,
      result_count: total,
      results_truncated: total > results.length,
      results_hash: sha256Tagged(canonicalJsonBytes(results)),
      queried_at: new Date(now).toISOString(),
      queried_by: principal.userUuid
    }
    yield* store.insertDiscovery(
      { ...record, org_uuid: principal.orgUuid },
      {
        orgUuid: principal.orgUuid,
        actor: auditActor(principal),
        event: "evidence.discovery.queried",
        target: record.discovery_query_uuid,
        details: { point_in_time: pointInTime, reason, query: filter, result_count: total, results_hash: record.results_hash },
        requestId: context.requestId
      }
    )
    return record
  })

  const liabilityChain = Effect.fn("Evidence.liabilityChain")(function* (principal: Principal, actionUuid: string) {
    const rows = yield* store.liabilityChain(principal.orgUuid, actionUuid, MAX_CHAIN_ENTRIES)
    const last = rows.at(-1)
    if (last === undefined) return yield* refuse(ChainActionNotFound.of(actionUuid))
    const seen = new Set(rows.map((row) => row.action_uuid))
    // The walk stopped at the bound, not at a root, a loop or a parent it may not follow.
    const truncated = rows.length === MAX_CHAIN_ENTRIES && last.parent_action_uuid !== null && !seen.has(last.parent_action_uuid)
    const hops = rows.map((row) => hopOf(row, (parent) => seen.has(parent) || (truncated && row === last)))
    return {
      action_uuid: actionUuid,
      liability_chain: hops,
      chain: hops,
      total_hops: hops.length,
      root_action_id: last.action_uuid,
      truncated
    } satisfies LiabilityChain
  })

  return Evidence.of({ createPackage, listPackages, getPackage, timeTravel, liabilityChain })
})

export interface PageRequest {
  readonly page?: number
  readonly per_page?: number
}

export interface EvidenceService {
  readonly createPackage: (principal: Principal, input: CreatePackageRequest, context: RequestContext) => Effect.Effect<PackageSummary, EvidenceError>
  readonly listPackages: (
    principal: Principal,
    query: PageRequest
  ) => Effect.Effect<Page<PackageSummary> & { readonly packages: ReadonlyArray<PackageSummary> }>
  readonly getPackage: (principal: Principal, packageUuid: string) => Effect.Effect<EvidencePackage, EvidenceError>
  readonly timeTravel: (principal: Principal, request: TimeTravelRequest, context: RequestContext) => Effect.Effect<DiscoveryRecord, EvidenceError>
  readonly liabilityChain: (principal: Principal, actionUuid: string) => Effect.Effect<LiabilityChain, EvidenceError>
}

export class Evidence extends Context.Service<Evidence, EvidenceService>()("gateway/Evidence") {
  static readonly layer = Layer.effect(Evidence, makeEvidence)
}

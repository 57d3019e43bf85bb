/**
 * The agent registry: register, read, update, publish versions, decommission, and the public
 * page. Slugs are global (the did:web holds only the slug); every read by an organization
 * is scoped to the agents it owns, so another organization's agent is simply not found.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  type AgentPage,
  type AgentVersion,
  type AgentView,
  type Decommissioned,
  MAX_AGENT_VERSIONS,
  type PublicAgent,
  type PublishVersionRequest,
  type RegisterAgentRequest,
  type RegisteredAgent,
  type TransferRequest,
  type Transferred,
  type UpdateAgentRequest,
  type VersionList
} from "../../protocol/agents.js"
import type { Principal } from "../../protocol/auth.js"
import { listPage } from "../../protocol/common.js"
import { Credentials } from "../credentials/service.js"
import { Dids } from "../dids/service.js"
import { auditActor } from "../platform/audit.js"
import { InvalidInput } from "../platform/domain-error.js"
import { Receipts } from "../receipts/service.js"
import { Reputation } from "../reputation/service.js"
import {
  AgentNotFound,
  type AgentsError,
  AgentVersionExists,
  DecommissionedAgent,
  InvalidSlug,
  InvalidTransferSignature,
  refuse,
  SlugTaken,
  TargetOrgNotFound
} from "./errors.js"
import { type AgentFields, type CountedAgentRow, makeAgentsStore } from "./store.js"
import { transferSignatureValid } from "./transfer.js"
import { agentView, decommissionedView, described, listItem, registeredView, versionView } from "./views.js"

/** 3-64 characters, lowercase alphanumeric and hyphens (spec 001 "Limits"). */
const SLUG = /^[a-z0-9-]{3,64}$/
/** Paths under /api/v1/agents that a slug would shadow. */
const RESERVED_SLUGS = new Set(["public"])
/** Stored metadata, as JSON text, at most this long. */
const MAX_METADATA_BYTES = 16_384

export interface AuditContext {
  readonly requestId: string | null
}

const checkedMetadata = (metadata: Readonly<Record<string, unknown>>) =>
  Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES
    ? refuse(InvalidInput.one("metadata", `must be at most ${MAX_METADATA_BYTES} bytes as JSON`))
    : Effect.succeed(metadata)

/** `target_org_id`, or the published SDKs' `to_org_uuid`: one is required, and both must name the same organization. */
const transferTarget = (input: TransferRequest): Effect.Effect<string, AgentsError> => {
  const target = input.target_org_id ?? input.to_org_uuid
  if (target === undefined) return refuse(InvalidInput.one("target_org_id", "is required (or to_org_uuid)"))
  if (input.to_org_uuid !== undefined && input.to_org_uuid !== target) return refuse(InvalidInput.one("to_org_uuid", "differs from target_org_id"))
  return Effect.succeed(target)
}

const uniqueCapabilities = (capabilities: ReadonlyArray<string> | null | undefined) => [...new Set(capabilities ?? [])]

export const makeAgents = Effect.gen(function* () {
  const store = yield* makeAgentsStore
  const dids = yield* Dids
  const credentials = yield* Credentials
  const receipts = yield* Receipts
  const reputation = yield* Reputation

  const audit = (principal: Principal, event: string, slug: string, context: AuditContext, details?: Record<string, unknown>) =>
    store.audit({ orgUuid: principal.orgUuid, actor: auditActor(principal), event, target: slug, details, requestId: context.requestId })

  const load = Effect.fnUntraced(function* (principal: Principal, slug: string) {
    const row = yield* store.find(principal.orgUuid, slug)
    if (row === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return row
  })

  /** The agent's newest versions, as every view of it shows them. */
  const newestVersions = (slug: string) => Effect.map(store.newestVersions([slug], MAX_AGENT_VERSIONS), (bySlug) => bySlug.get(slug) ?? [])

  const view = Effect.fnUntraced(function* (row: CountedAgentRow) {
    return agentView(row, yield* newestVersions(row.agent_slug))
  })

  const register = Effect.fn("Agents.register")(function* (principal: Principal, input: RegisterAgentRequest, context: AuditContext) {
    const slug = input.agent_slug
    if (!SLUG.test(slug) || RESERVED_SLUGS.has(slug)) return yield* refuse(InvalidSlug.of(slug))
    const name = input.name ?? input.display_name
    if (name === undefined) return yield* refuse(InvalidInput.one("name", "is required"))
    const fields: AgentFields = {
      name,
      description: input.description ?? null,
      capabilities: uniqueCapabilities(input.capabilities),
      metadata: yield* checkedMetadata(input.metadata ?? {}),
      public: input.public ?? false
    }
    // The agent, its DID key and its first credential commit together.
    const row = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const inserted = yield* store.insert(principal.orgUuid, slug, fields)
          if (inserted === undefined) return yield* refuse(SlugTaken.of(slug))
          yield* dids.createKey(slug)
          yield* credentials.issue(slug)
          yield* audit(principal, "agent.registered", slug, context)
          return inserted
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    return registeredView(row, [])
  })

  const list = Effect.fn("Agents.list")(function* (principal: Principal, query: { readonly page?: number; readonly per_page?: number; readonly status?: string }) {
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    const { rows, total } = yield* store.list(principal.orgUuid, page, perPage, query.status ?? null)
    const versions = yield* store.newestVersions(rows.map((row) => row.agent_slug), MAX_AGENT_VERSIONS)
    return listPage(rows.map((row) => listItem(row, versions.get(row.agent_slug) ?? [])), { page, perPage, total }, "agents")
  })

  const get = Effect.fn("Agents.get")(function* (principal: Principal, slug: string) {
    return yield* view(yield* load(principal, slug))
  })

  const owned = Effect.fn("Agents.owned")(function* (principal: Principal, slug: string) {
    return (yield* load(principal, slug)).agent_slug
  })

  /** The whole agent as it now is (the decommission's answer). */
  const decommissionAnswer = Effect.fnUntraced(function* (principal: Principal, slug: string) {
    const row = yield* load(principal, slug)
    return decommissionedView(row, yield* newestVersions(slug))
  })

  const update = Effect.fn("Agents.update")(function* (principal: Principal, slug: string, patch: UpdateAgentRequest, context: AuditContext) {
    const current = yield* load(principal, slug)
    const fields: AgentFields = {
      name: patch.name ?? patch.display_name ?? current.name,
      description: patch.description !== undefined ? patch.description : current.description,
      capabilities: patch.capabilities !== undefined ? uniqueCapabilities(patch.capabilities) : current.capabilities,
      metadata: patch.metadata !== undefined ? yield* checkedMetadata(patch.metadata ?? {}) : current.metadata,
      public: patch.public ?? current.public
    }
    const capabilitiesChanged = JSON.stringify(fields.capabilities) !== JSON.stringify(current.capabilities)
    const updated = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const row = yield* store.update(principal.orgUuid, slug, fields)
          // New capabilities, new credential (CONTRACT.md), committed with the change.
          if (row !== undefined && capabilitiesChanged) yield* credentials.issue(slug)
          return row
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    if (updated === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    yield* audit(principal, "agent.updated", slug, context, { fields: Object.keys(patch) })
    return yield* view({ ...updated, action_count: current.action_count })
  })

  const publishVersion = Effect.fn("Agents.publishVersion")(function* (principal: Principal, slug: string, input: PublishVersionRequest, context: AuditContext) {
    const { agent, published } = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const outcome = yield* store.publishVersion(principal.orgUuid, slug, {
            version: input.version,
            instruction_hash: input.instruction_hash ?? null,
            changelog: input.changelog ?? null,
            model_id: input.model_id ?? null,
            config_hash: input.config_hash ?? null
          })
          // A new version, a new credential, committed with it.
          if (outcome.published !== undefined) yield* credentials.issue(slug)
          return outcome
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    if (agent === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    if (agent.status === "decommissioned") return yield* refuse(DecommissionedAgent.of(slug))
    if (published === undefined) return yield* refuse(AgentVersionExists.of(slug, input.version))
    yield* audit(principal, "agent.version_published", slug, context, { version: published.version })
    return versionView(published)
  })

  const versions = Effect.fn("Agents.versions")(function* (principal: Principal, slug: string) {
    yield* load(principal, slug)
    return (yield* store.versions(slug)).map(versionView)
  })

  const decommission = Effect.fn("Agents.decommission")(function* (principal: Principal, slug: string, reason: string | null, context: AuditContext) {
    const row = yield* store.decommission(principal.orgUuid, slug, reason)
    if (row === undefined) {
      // Not there, or already decommissioned (irreversible: a second request changes nothing).
      yield* load(principal, slug)
      return yield* refuse(DecommissionedAgent.of(slug))
    }
    yield* audit(principal, "agent.decommissioned", slug, context, { reason })
    yield* reputation.recordDecommission(slug)
    return yield* decommissionAnswer(principal, row.agent_slug)
  })

  /**
   * Moves the agent to another organization: the owner's signature over the terms checked
   * first, then the target; one transaction moves it (waiting for notarizations holding the row),
   * reissues its credential for the new owner, stores a transfer receipt signed by the platform
   * key and audits the transfer in both organizations.
   */
  const transfer = Effect.fn("Agents.transfer")(function* (
    principal: Principal,
    slug: string,
    input: TransferRequest,
    credential: string,
    context: AuditContext
  ) {
    const target = yield* transferTarget(input)
    const current = yield* load(principal, slug)
    if (current.status === "decommissioned") return yield* refuse(DecommissionedAgent.of(slug))
    const terms = { agent_slug: slug, from_org: principal.orgUuid, to_org: target }
    if (!transferSignatureValid(credential, terms, input.signature)) return yield* refuse(InvalidTransferSignature.of(slug))
    if (target === principal.orgUuid) return yield* refuse(InvalidInput.one("target_org_id", "is already the agent's owner"))
    if (!(yield* store.organizationExists(target))) return yield* refuse(TargetOrgNotFound.of(target))
    const transferred = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const moved = yield* store.moveTo(principal.orgUuid, slug, target)
          if (moved === undefined) return undefined
          yield* credentials.issue(slug)
          const record = yield* receipts.signTransferReceipt({
            kind: "agent_transfer",
            agent_slug: slug,
            previous_owner: principal.orgUuid,
            new_owner: target
          })
          yield* store.insertTransfer(record)
          const details = { transfer_receipt_id: record.transfer_receipt_id, previous_owner: record.previous_owner, new_owner: record.new_owner, payload_hash: record.payload_hash }
          yield* store.audit({ orgUuid: principal.orgUuid, actor: auditActor(principal), event: "agent.transferred_out", target: slug, details, requestId: context.requestId })
          yield* store.audit({ orgUuid: target, actor: auditActor(principal), event: "agent.transferred_in", target: slug, details, requestId: context.requestId })
          return record
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    // Decommissioned or moved away meanwhile.
    if (transferred === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return {
      agent_slug: slug,
      previous_owner: transferred.previous_owner,
      new_owner: transferred.new_owner,
      transferred_at: transferred.transferred_at,
      transfer_receipt_id: transferred.transfer_receipt_id
    }
  })


  const publicView = Effect.fn("Agents.publicView")(function* (slug: string) {
    const row = yield* store.findAnywhere(slug)
    if (row === undefined) return yield* refuse(new AgentNotFound({ agent_slug: slug }))
    return {
      ...described(row),
      current_version: row.current_version,
      // The owner is an organization registered on this gateway, which signs for it.
      owner_verified: true,
      action_count: row.action_count,
      created_at: row.created_at
    }
  })

  return Agents.of({ register, list, get, owned, update, publishVersion, versions, decommission, transfer, publicView })
})

export interface AgentsService {
  readonly register: (principal: Principal, input: RegisterAgentRequest, context: AuditContext) => Effect.Effect<RegisteredAgent, AgentsError>
  readonly list: (principal: Principal, query: { readonly page?: number; readonly per_page?: number }) => Effect.Effect<AgentPage>
  readonly get: (principal: Principal, slug: string) => Effect.Effect<AgentView, AgentsError>
  /** The slug only, after checking the caller's organization owns it. */
  readonly owned: (principal: Principal, slug: string) => Effect.Effect<string, AgentsError>
  readonly update: (principal: Principal, slug: string, patch: UpdateAgentRequest, context: AuditContext) => Effect.Effect<AgentView, AgentsError>
  readonly publishVersion: (principal: Principal, slug: string, input: PublishVersionRequest, context: AuditContext) => Effect.Effect<AgentVersion, AgentsError>
  readonly versions: (principal: Principal, slug: string) => Effect.Effect<VersionList, AgentsError>
  /** `reason` null: none given (the published SDKs send `{}`). */
  readonly decommission: (principal: Principal, slug: string, reason: string | null, context: AuditContext) => Effect.Effect<Decommissioned, AgentsError>
  readonly transfer: (
    principal: Principal,
    slug: string,
    input: TransferRequest,
    credential: string,
    context: AuditContext
  ) => Effect.Effect<Transferred, AgentsError>
  /** The public page: any registered agent, whoever owns it. */
  readonly publicView: (slug: string) => Effect.Effect<PublicAgent, AgentsError>
}

export class Agents extends Context.Service<Agents, AgentsService>()("gateway/Agents") {
  static readonly layer = Layer.effect(Agents, makeAgents)
}

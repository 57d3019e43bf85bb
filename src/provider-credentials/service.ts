/**
 * Provider credentials: each POST merges one provider's fields into what is stored (other
 * providers untouched), sealed with the envelope under `provider-credentials:{org}:{slug}`;
 * nothing secret is ever answered. The model layer reads them through `credentialsFor`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { PROVIDER_SLUGS, PROVIDER_TYPES, type ProviderSlug, type ProviderStatus } from "../../protocol/provider-credentials.js"
import { auditActor } from "../platform/audit.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { destinationProblem, Outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { type ProviderCredentialsError, refuse } from "./errors.js"
import { destinationsOf, isProviderSlug, mergeCredentials, visibleParts } from "./fields.js"
import { makeProviderCredentialsStore } from "./store.js"

export interface AuditContext {
  readonly requestId: string | null
}

const sealedFor = (orgUuid: string, slug: string) => `provider-credentials:${orgUuid}:${slug}`

const knownSlug = (provider: string) =>
  isProviderSlug(provider) ? Effect.succeed(provider) : refuse(InvalidInput.one("provider", `must be one of ${PROVIDER_SLUGS.join(", ")}`))

export const makeProviderCredentials = Effect.gen(function* () {
  const store = yield* makeProviderCredentialsStore
  const { envelope } = yield* Secrets
  const policy = (yield* Outbound).policy

  /** URL fields checked against the outbound address rules before anything is stored (each call checks again). */
  const unreachable = (slug: ProviderSlug, credentials: Readonly<Record<string, unknown>>) =>
    Effect.promise(async () => {
      const issues: Array<Issue> = []
      for (const { path, url } of destinationsOf(slug, credentials)) {
        const problem = await destinationProblem(url, policy)
        if (problem !== undefined) issues.push({ path, message: problem })
      }
      return issues
    })

  const open = (orgUuid: string, slug: string, sealed: string) => JSON.parse(envelope.openText(sealed, sealedFor(orgUuid, slug))) as Record<string, string>

  const audit = (principal: Principal, event: string, slug: string, context: AuditContext) =>
    store.audit({ orgUuid: principal.orgUuid, actor: auditActor(principal), event, target: slug, requestId: context.requestId })

  const save = Effect.fn("ProviderCredentials.save")(function* (
    principal: Principal,
    provider: string,
    credentials: Readonly<Record<string, unknown>>,
    context: AuditContext
  ) {
    const slug = yield* knownSlug(provider)
    const refused = yield* unreachable(slug, credentials)
    if (refused.length > 0) return yield* refuse(InvalidInput.of(refused))
    const outcome = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const stored = yield* store.lock(principal.orgUuid, slug)
          const merged = mergeCredentials(slug, stored === undefined ? {} : open(principal.orgUuid, slug, stored.sealed), credentials)
          if ("issues" in merged) return merged
          const sealed = envelope.seal(JSON.stringify(merged.fields), sealedFor(principal.orgUuid, slug))
          yield* store.upsert(principal.orgUuid, { slug, sealed, key_id: envelope.keyIdOf(sealed), ...visibleParts(slug, merged.fields) })
          yield* audit(principal, "provider_credentials.saved", slug, context)
          return merged
        })
      )
      // What remains is the transaction's own BEGIN/COMMIT failing.
      .pipe(Effect.orDie)
    if ("issues" in outcome) return yield* refuse(InvalidInput.of(outcome.issues))
    return { message: `Credentials for ${slug} saved` }
  })

  const list = Effect.fn("ProviderCredentials.list")(function* (principal: Principal) {
    const rows = new Map((yield* store.all(principal.orgUuid)).map((row) => [row.slug, row]))
    return {
      providers: PROVIDER_SLUGS.map((slug): ProviderStatus => {
        const row = rows.get(slug)
        return { slug, type: PROVIDER_TYPES[slug], configured: row !== undefined, region: row?.region ?? null, endpoint: row?.endpoint ?? null }
      })
    }
  })

  const remove = Effect.fn("ProviderCredentials.remove")(function* (principal: Principal, provider: string, context: AuditContext) {
    const slug = yield* knownSlug(provider)
    const removed = yield* store.remove(principal.orgUuid, slug)
    if (removed) yield* audit(principal, "provider_credentials.deleted", slug, context)
    return { message: removed ? `Credentials for ${slug} deleted` : `No credentials for ${slug} were configured` }
  })

  const credentialsFor = Effect.fn("ProviderCredentials.credentialsFor")(function* (orgUuid: string, slug: ProviderSlug) {
    const row = (yield* store.all(orgUuid)).find((candidate) => candidate.slug === slug)
    return row === undefined ? undefined : open(orgUuid, slug, row.sealed)
  })

  return ProviderCredentials.of({ save, list, remove, credentialsFor })
})

export interface ProviderCredentialsService {
  /** Merges one provider's fields into what is stored (other providers untouched). */
  readonly save: (
    principal: Principal,
    provider: string,
    credentials: Readonly<Record<string, unknown>>,
    context: AuditContext
  ) => Effect.Effect<{ readonly message: string }, ProviderCredentialsError>
  readonly list: (principal: Principal) => Effect.Effect<{ readonly providers: ReadonlyArray<ProviderStatus> }>
  readonly remove: (principal: Principal, provider: string, context: AuditContext) => Effect.Effect<{ readonly message: string }, ProviderCredentialsError>
  /** The organization's fields for a provider (secrets included), for calling it; undefined when not configured. */
  readonly credentialsFor: (orgUuid: string, slug: ProviderSlug) => Effect.Effect<Record<string, string> | undefined>
}

export class ProviderCredentials extends Context.Service<ProviderCredentials, ProviderCredentialsService>()("gateway/ProviderCredentials") {
  static readonly layer = Layer.effect(ProviderCredentials, makeProviderCredentials)
}

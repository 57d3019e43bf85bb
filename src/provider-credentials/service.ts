/**
 * Provider credentials: each POST merges one provider's fields into what is stored (other
 * providers untouched), sealed with the envelope under `provider-credentials:{org}:{slug}`;
 * nothing secret is ever answered. The model layer reads them through `credentialsFor`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { PROVIDER_SLUGS, PROVIDER_TYPES, type ProviderSlug } from "../../protocol/provider-credentials.js"
import { auditActor } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { destinationProblem, outboundPolicyOfConfig } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { refuse } from "./errors.js"
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
  const policy = outboundPolicyOfConfig(yield* Config)

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

  return {
    save: (principal: Principal, provider: string, credentials: Readonly<Record<string, unknown>>, context: AuditContext) =>
      Effect.gen(function* () {
        const slug = yield* knownSlug(provider)
        const refused = yield* unreachable(slug, credentials)
        if (refused.length > 0) return yield* refuse(new InvalidInput({ issues: refused }))
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
          .pipe(Effect.orDie)
        if ("issues" in outcome) return yield* refuse(new InvalidInput({ issues: outcome.issues }))
        return { message: `Credentials for ${slug} saved` }
      }),

    list: (principal: Principal) =>
      Effect.gen(function* () {
        const rows = new Map((yield* Effect.orDie(store.all(principal.orgUuid))).map((row) => [row.slug, row]))
        return {
          providers: PROVIDER_SLUGS.map((slug) => {
            const row = rows.get(slug)
            return { slug, type: PROVIDER_TYPES[slug], configured: row !== undefined, region: row?.region ?? null, endpoint: row?.endpoint ?? null }
          })
        }
      }),

    remove: (principal: Principal, provider: string, context: AuditContext) =>
      Effect.gen(function* () {
        const slug = yield* knownSlug(provider)
        const removed = yield* Effect.orDie(store.remove(principal.orgUuid, slug))
        if (removed) yield* Effect.orDie(audit(principal, "provider_credentials.deleted", slug, context))
        return { message: removed ? `Credentials for ${slug} deleted` : `No credentials for ${slug} were configured` }
      }),

    /** The organization's fields for a provider (secrets included), for calling it; undefined when not configured. */
    credentialsFor: (orgUuid: string, slug: ProviderSlug) =>
      Effect.map(Effect.orDie(store.all(orgUuid)), (rows) => {
        const row = rows.find((candidate) => candidate.slug === slug)
        return row === undefined ? undefined : open(orgUuid, slug, row.sealed)
      })
  }
})

export class ProviderCredentials extends Context.Service<ProviderCredentials, Effect.Success<typeof makeProviderCredentials>>()("gateway/ProviderCredentials") {
  static readonly layer = Layer.effect(ProviderCredentials, makeProviderCredentials)
}

/**
 * What a socket may subscribe to. Every channel needs its read scope; a `case:<id>` channel also
 * needs the case to be one of the caller's organization, which costs a database lookup, so the
 * lookup counts against the credential's per-minute rate limit like a `GET /cases/{id}` would.
 */
import * as Effect from "effect/Effect"
import type { Principal } from "../../protocol/auth.js"
import { hasScope } from "../access/guards.js"
import type { AccessService } from "../access/service.js"
import { makeCasesStore } from "../cases/store.js"
import type { RateLimitResult } from "../platform/redis/index.js"

/** The read scope a channel needs: `case:<id>` reads cases. */
export const channelScope = (channel: string): string =>
  channel === "actions" ? "actions:read" : channel === "notifications" ? "notifications:read" : "cases:read"

/** The case id of a `case:<id>` channel, else undefined. */
export const caseIdOf = (channel: string): string | undefined => (channel.startsWith("case:") ? channel.slice(5) : undefined)

/** Whether `principal` may hold `channel`: yes, or why not (an error frame's code and message, and when to retry). */
export type ChannelVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly retryAfter?: number }

const allowed: ChannelVerdict = { ok: true }

const limited = (limit: RateLimitResult): ChannelVerdict => ({
  ok: false,
  code: "RATE_LIMIT_EXCEEDED",
  message: `Rate limit of ${limit.limit} requests per minute exceeded; retry in ${limit.retryAfterSeconds} s`,
  retryAfter: limit.retryAfterSeconds
})

export const makeChannelCheck = (access: AccessService) =>
  Effect.map(makeCasesStore, (cases) => {
    const caseVerdict = (principal: Principal, caseId: string) =>
      Effect.gen(function* () {
        const limit = yield* access.rateLimitPrincipal(principal)
        if (!limit.allowed) return limited(limit)
        const found = yield* cases.byId(principal.orgUuid, caseId)
        return found === undefined ? ({ ok: false, code: "NOT_FOUND", message: `Case ${caseId} not found` } as const) : allowed
      })

    /** At once when no lookup is needed; a promise when the case must be looked up (never rejects). */
    return (principal: Principal, channel: string): ChannelVerdict | Promise<ChannelVerdict> => {
      const scope = channelScope(channel)
      if (!hasScope(principal, scope)) return { ok: false, code: "FORBIDDEN", message: `This key lacks the ${scope} scope` }
      const caseId = caseIdOf(channel)
      if (caseId === undefined) return allowed
      return Effect.runPromise(caseVerdict(principal, caseId)).catch(() => ({
        ok: false,
        code: "UNAVAILABLE",
        message: "Could not check the case now; try again"
      }))
    }
  })

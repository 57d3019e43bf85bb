/**
 * Tells a will's notification targets that its agent died: e-mail through the configured SMTP
 * server, `webhook` and `slack` through the outbound client (which refuses private addresses
 * unless OUTBOUND_ALLOW_PRIVATE opens them). A will holds no shared secret, so a webhook body is
 * the JCS of the event signed with the platform key (`X-Gateway-Signature`, key id in
 * `X-Gateway-Key-Id`, verifiable with the JWKS). Each target is tried once; its result is
 * audited; nothing here ever fails.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { DeathCertificateAnswer, NotifyTarget } from "../../protocol/estate.js"
import { canonicalJson } from "../../protocol/verifier/canonical.js"
import { maskUrl, slackText } from "../approvers/messages.js"
import type { AppConfig } from "../platform/config.js"
import { makeMailer } from "../platform/mail.js"
import { type OutboundPolicy, outbound } from "../platform/outbound/index.js"

const SEND_TIMEOUT_MS = 15_000

export interface NotifyResult {
  readonly type: NotifyTarget["type"]
  /** E-mail addresses as given; URLs masked (they are often secrets). */
  readonly target: string
  readonly status: "sent" | "failed" | "skipped"
  readonly detail: string | null
}

/** Line breaks and other control characters never reach a subject or a chat line. */
const oneLine = (value: string) => value.replace(/[\p{Cc}\u2028\u2029]+/gu, " ").slice(0, 200)

const lines = (answer: DeathCertificateAnswer, text: (value: string) => string) => {
  const { death_certificate: certificate, succession } = answer
  return [
    `Agent ${text(answer.agent_slug)} has been declared deceased (cause: ${text(certificate.cause)}).`,
    `Death certificate ${certificate.certificate_id}, issued at ${certificate.issued_at}.`,
    succession.triggered
      ? `Succession: ${succession.succession_policy}${succession.successor_slug ? ` to ${text(succession.successor_slug)}` : ""}${
          succession.transfer_receipt_id ? ` (transfer receipt ${succession.transfer_receipt_id})` : ""
        }${succession.purge_after ? `; data purged after ${succession.purge_after}` : ""}.`
      : "No will: no succession ran."
  ]
}

/** Signs bytes with the platform's receipt key. */
export type Signer = Effect.Effect<{ readonly sign: (bytes: Uint8Array) => string; readonly publicKeyId: string }>

export const makeNotifier = (config: AppConfig, policy: OutboundPolicy, signer: Signer) => {
  const mailer = makeMailer(config.smtpUrl)
  const sender = config.smtpFrom || `estate@${hostOf(config.baseUrl)}`

  const post = (url: string, body: unknown, signed = false) =>
    Effect.gen(function* () {
      const bytes = Buffer.from(canonicalJson(body), "utf8")
      const key = signed ? yield* signer : undefined
      const response = yield* outbound(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(key !== undefined ? { "x-gateway-signature": key.sign(bytes), "x-gateway-key-id": key.publicKeyId } : {})
        },
        body: bytes,
        policy,
        timeoutMs: SEND_TIMEOUT_MS
      })
      if (response.status < 200 || response.status >= 300) return yield* Effect.fail(new Error(`HTTP ${response.status}`))
      return `HTTP ${response.status}`
    })

  const sendOne = (target: NotifyTarget, answer: DeathCertificateAnswer, slackOn: boolean): Effect.Effect<string | null, unknown> => {
    switch (target.type) {
      case "email":
        if (mailer === undefined) return Effect.fail(new Skipped("SMTP_URL is not set"))
        return Effect.tryPromise({
          try: () =>
            mailer.send({
              from: sender,
              to: target.target,
              subject: `Agent ${oneLine(answer.agent_slug)} declared deceased`,
              text: lines(answer, oneLine).join("\n\n")
            }),
          catch: (error) => new Error(`SMTP: ${(error as Error).message}`)
        }).pipe(
          Effect.timeout(SEND_TIMEOUT_MS),
          Effect.as(null)
        )
      case "slack":
        if (!slackOn) return Effect.fail(new Skipped("slack_integration is turned off"))
        return post(target.target, { text: lines(answer, slackText).join("\n") })
      case "webhook":
        return Effect.flatMap(Clock.currentTimeMillis, (now) =>
          post(target.target, { event: "agent.death_certificate_issued", timestamp: new Date(now).toISOString(), data: answer }, true)
        )
    }
  }

  /** Every target in parallel; the results, never a failure. */
  /** `slackOn`: the organization's `slack_integration` flag. */
  return (targets: ReadonlyArray<NotifyTarget>, answer: DeathCertificateAnswer, slackOn: boolean): Effect.Effect<ReadonlyArray<NotifyResult>> =>
    Effect.forEach(
      targets,
      (target) =>
        sendOne(target, answer, slackOn).pipe(
          Effect.map((detail): NotifyResult => ({ type: target.type, target: shown(target), status: "sent", detail })),
          Effect.catchCause((cause) => {
            const error = Cause.squash(cause)
            const status = error instanceof Skipped ? "skipped" : "failed"
            return Effect.succeed<NotifyResult>({ type: target.type, target: shown(target), status, detail: describe(error) })
          })
        ),
      { concurrency: 4 }
    )
}

class Skipped extends Error {}

const shown = (target: NotifyTarget) => (target.type === "email" ? target.target : maskUrl(target.target))

const describe = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  return text.length > 500 ? `${text.slice(0, 500)}…` : text
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname || "localhost"
  } catch {
    return "localhost"
  }
}

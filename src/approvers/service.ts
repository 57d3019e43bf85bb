/**
 * Approval notification channels: the per-organization settings (chat webhook
 * URLs sealed at rest) and the announcement of `action.approval_requested`
 * through every enabled channel in parallel. Each channel's result is written
 * to `channel_deliveries`; one failing never stops the others.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { NotificationChannelsInput } from "../../protocol/approvers.js"
import { ApprovalGrants } from "../actions/ports.js"
import { Flags } from "../flags/service.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { makeMailer } from "../platform/mail.js"
import { Outbound, outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { type ChannelsError, refuse } from "./errors.js"
import { type ApprovalRequest, approverEmail, maskUrl, noticeEmail, slackMessage, teamsMessage } from "./messages.js"
import { type ChannelsRow, makeChannelsStore } from "./store.js"
import { webhookUrlProblem } from "./url.js"

export type ChannelName = "email" | "slack" | "teams"
type Input = typeof NotificationChannelsInput.Type

export interface ChannelsView {
  readonly email: { readonly enabled: boolean; readonly recipients: ReadonlyArray<string> }
  readonly slack: { readonly enabled: boolean; readonly webhook_url: string | null }
  readonly teams: { readonly enabled: boolean; readonly webhook_url: string | null }
}

const CHAT_TIMEOUT_MS = 10_000
const SMTP_TIMEOUT_MS = 15_000


const aadOf = (orgUuid: string, channel: "slack" | "teams") => `notification-channel:${orgUuid}:${channel}`

export interface ChannelResult {
  readonly channel: ChannelName
  readonly status: string
  readonly detail: string | null
}

export interface ApprovalChannelsService {
  readonly get: (orgUuid: string) => Effect.Effect<ChannelsView>
  readonly put: (orgUuid: string, input: Input) => Effect.Effect<ChannelsView, ChannelsError>
  /** Sends to every enabled channel in parallel and records each result; never fails. */
  readonly notifyApproval: (request: ApprovalRequest) => Effect.Effect<ReadonlyArray<ChannelResult>>
}

export class ApprovalChannels extends Context.Service<ApprovalChannels, ApprovalChannelsService>()("gateway/ApprovalChannels") {
  static readonly layer = Layer.effect(ApprovalChannels)(
    Effect.gen(function* () {
      const store = yield* makeChannelsStore
      const config = yield* Config
      const { envelope } = yield* Secrets
      const grants = yield* ApprovalGrants
      const flags = yield* Flags
      const policy = (yield* Outbound).policy
      const mailer = makeMailer(config.smtpUrl)
      const sender = config.smtpFrom || `approvals@${hostOf(config.baseUrl)}`

      const chatUrl = (orgUuid: string, channel: "slack" | "teams", sealed: string | null) =>
        sealed === null ? null : envelope.openText(sealed, aadOf(orgUuid, channel))

      const view = (orgUuid: string, row: ChannelsRow | undefined): ChannelsView => ({
        email: { enabled: row?.email_enabled ?? false, recipients: row?.email_recipients ?? [] },
        slack: { enabled: row?.slack_enabled ?? false, webhook_url: mapNull(chatUrl(orgUuid, "slack", row?.slack_url_sealed ?? null), maskUrl) },
        teams: { enabled: row?.teams_enabled ?? false, webhook_url: mapNull(chatUrl(orgUuid, "teams", row?.teams_url_sealed ?? null), maskUrl) }
      })

      const get = Effect.fn("ApprovalChannels.get")(function* (orgUuid: string) {
        return view(orgUuid, yield* store.load(orgUuid))
      })

      const put = Effect.fn("ApprovalChannels.put")(function* (orgUuid: string, input: Input) {
          const issues: Array<{ path: string; message: string }> = []
          const problems: Partial<Record<"slack" | "teams", string>> = {}
          for (const channel of ["slack", "teams"] as const) {
            const given = input[channel]?.webhook_url
            if (typeof given !== "string") continue
            const problem = yield* Effect.promise(() => webhookUrlProblem(given, policy))
            if (problem !== undefined) {
              problems[channel] = problem
              issues.push({ path: `${channel}.webhook_url`, message: problem })
            }
          }
          const sealedUrl = (channel: "slack" | "teams", current: string | null): string | null => {
            const given = input[channel]?.webhook_url
            if (given === undefined || problems[channel] !== undefined) return current
            return given === null ? null : envelope.seal(given, aadOf(orgUuid, channel))
          }
          const row = yield* store.load(orgUuid)
          const slackUrl = sealedUrl("slack", row?.slack_url_sealed ?? null)
          const teamsUrl = sealedUrl("teams", row?.teams_url_sealed ?? null)
          const slackEnabled = input.slack?.enabled ?? row?.slack_enabled ?? false
          const teamsEnabled = input.teams?.enabled ?? row?.teams_enabled ?? false
          if (slackEnabled && slackUrl === null) issues.push({ path: "slack.webhook_url", message: "required when slack is enabled" })
          if (teamsEnabled && teamsUrl === null) issues.push({ path: "teams.webhook_url", message: "required when teams is enabled" })
          if (issues.length > 0) return yield* refuse(InvalidInput.of(issues))
          const emailEnabled = input.email?.enabled ?? row?.email_enabled ?? false
          const recipients = input.email?.recipients ?? row?.email_recipients ?? []
          yield* store.save({ orgUuid, emailEnabled, recipients, slackEnabled, slackUrl, teamsEnabled, teamsUrl })
          return yield* get(orgUuid)
      })

      const send = (to: string, message: { subject: string; text: string }) =>
        Effect.tryPromise({
          try: () => mailer!.send({ from: sender, to, subject: message.subject, text: message.text }),
          catch: (error) => new Error(`SMTP: ${(error as Error).message}`)
        }).pipe(Effect.timeout(SMTP_TIMEOUT_MS))

      /**
       * Each approver gets a personal message with their own code and links
       * (the only place those exist); configured recipients who are not
       * approvers get a notice. Without a mail server no code is issued at all.
       */
      const sendEmail = (request: ApprovalRequest, configured: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          if (mailer === undefined) return { status: "skipped", detail: "SMTP_URL is not set" }
          const issued = yield* grants.issue(request.orgUuid, request.actionUuid)
          const approvers = new Set(issued.map((grant) => grant.email))
          const notices = [...new Set(configured.map((email) => email.toLowerCase()))].filter((email) => !approvers.has(email))
          if (issued.length + notices.length === 0) return { status: "skipped", detail: "no recipients" }
          const sent = yield* Effect.forEach(
            [...issued.map((grant) => send(grant.email, approverEmail(request, grant))), ...notices.map((email) => send(email, noticeEmail(request)))],
            (job) => Effect.result(job),
            { concurrency: 4 }
          )
          const failed = sent.filter((result) => result._tag === "Failure")
          const detail = `${issued.length} approver(s), ${notices.length} notice(s)${failed.length > 0 ? `, ${failed.length} failed` : ""}`
          if (failed.length === sent.length) return yield* Effect.fail(new Error(detail))
          return { status: "sent", detail }
        })

      const sendChat = (url: string, body: unknown) =>
        Effect.gen(function* () {
          const response = yield* outbound(url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
            policy,
            timeoutMs: CHAT_TIMEOUT_MS
          })
          if (response.status < 200 || response.status >= 300) return yield* Effect.fail(new Error(`HTTP ${response.status}`))
          return { status: "sent", detail: `HTTP ${response.status}` }
        })

      // The log is best effort: a failed insert never stops the announcement.
      const record = (request: ApprovalRequest, channel: ChannelName, status: string, detail: string | null) =>
        store.record({ orgUuid: request.orgUuid, eventId: request.eventId, channel, status, detail }).pipe(Effect.ignoreCause({ log: true }))

      const notifyApproval = Effect.fn("ApprovalChannels.notifyApproval")(
        function* (request: ApprovalRequest) {
          const row = yield* store.load(request.orgUuid)
          if (row === undefined) return []
          const jobs: Array<readonly [ChannelName, Effect.Effect<{ status: string; detail: string | null }, unknown>]> = []
          if (row.email_enabled) jobs.push(["email", sendEmail(request, row.email_recipients)])
          for (const channel of ["slack", "teams"] as const) {
            const enabled = channel === "slack" ? row.slack_enabled : row.teams_enabled
            const sealed = channel === "slack" ? row.slack_url_sealed : row.teams_url_sealed
            if (!enabled || sealed === null) continue
            if (!(yield* flags.isEnabled(request.orgUuid, `${channel}_integration`))) {
              jobs.push([channel, Effect.succeed({ status: "skipped", detail: `${channel}_integration is turned off` })])
              continue
            }
            const message = channel === "slack" ? slackMessage(request) : teamsMessage(request)
            jobs.push([channel, Effect.suspend(() => sendChat(envelope.openText(sealed, aadOf(request.orgUuid, channel)), message))])
          }
          return yield* Effect.forEach(
            jobs,
            ([channel, job]) =>
              job.pipe(
                Effect.catchCause((cause) => Effect.succeed({ status: "failed", detail: describeCause(cause) })),
                Effect.tap((result) => record(request, channel, result.status, result.detail)),
                Effect.map((result) => ({ channel, ...result }))
              ),
            { concurrency: "unbounded" }
          )
        },
        // Announcing never fails the caller; a failure to read the settings is logged and nothing is sent.
        (effect) => effect.pipe(Effect.catchCause((cause) => Effect.as(Effect.logWarning("approval announcement failed", { cause: String(cause) }), [])))
      )

      return ApprovalChannels.of({ get, put, notifyApproval })
    })
  )
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname || "localhost"
  } catch {
    return "localhost"
  }
}

const mapNull = <A, B>(value: A | null, f: (a: A) => B): B | null => (value === null ? null : f(value))

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const text = error instanceof Error ? error.message : String(error)
  return text.length > 500 ? `${text.slice(0, 500)}…` : text
}

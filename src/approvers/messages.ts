/**
 * The text of approval announcements. Chat messages and notice e-mails only
 * notify and link to the dashboard; the personal e-mail to an approver is the
 * one place an approval code and its links ever appear.
 *
 * Text that came with the request (action type, agent id) is escaped for each
 * target's markup, so it can neither mention everyone nor disguise a link.
 */
import type { IssuedGrant } from "../actions/ports.js"

export interface ApprovalRequest {
  readonly eventId: string
  readonly orgUuid: string
  readonly actionUuid: string
  readonly actionType: string
  readonly agentId: string | null
  /** `{BASE_URL}/dashboard/actions/{action_uuid}` (needs sign-in). */
  readonly reviewUrl: string
  readonly expiresAt: string | null
}

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

/** Reads an `action.approval_requested` event's data; undefined when it lacks the action or the link. */
export const approvalRequestOf = (eventId: string, orgUuid: string, data: Readonly<Record<string, unknown>>): ApprovalRequest | undefined => {
  const actionUuid = text(data.action_uuid)
  const reviewUrl = text(data.review_url)
  if (actionUuid === null || reviewUrl === null) return undefined
  return {
    eventId,
    orgUuid,
    actionUuid,
    actionType: text(data.action_type) ?? "action",
    agentId: text(data.agent_id),
    reviewUrl,
    expiresAt: text(data.expires_at)
  }
}

/** Control characters (line breaks included) never reach a subject line or a chat message. */
const oneLine = (value: string): string => value.replace(/[\p{Cc}\u2028\u2029]+/gu, " ").slice(0, 200)

/** Slack mrkdwn: `&`, `<`, `>` escaped (no `<!channel>`, no `<url|label>`), inside a code span (no formatting, no mentions). */
export const slackText = (value: string): string =>
  `\`${oneLine(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/`/g, "'")}\``

/** Teams markdown: HTML special characters as entities, markdown punctuation backslash-escaped. */
export const teamsText = (value: string): string =>
  oneLine(value)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_{}[\]()#+\-.!|~]/g, (char) => `\\${char}`)

type Escape = (value: string) => string

const summary = (request: ApprovalRequest, markup: Escape): string =>
  `An agent${request.agentId ? ` (${markup(request.agentId)})` : ""} asks for approval of ${markup(request.actionType)}.`

const noticeLines = (request: ApprovalRequest, markup: Escape): Array<string> => [
  summary(request, markup),
  `Review it in the dashboard: ${request.reviewUrl}`,
  ...(request.expiresAt ? [`The request expires at ${request.expiresAt}.`] : []),
  "This message only notifies; approve or deny in the dashboard."
]

const subject = (request: ApprovalRequest) => `Approval requested: ${oneLine(request.actionType)}`

/** The personal e-mail of one approver: their code and links, valid for them alone. */
export const approverEmail = (request: ApprovalRequest, grant: IssuedGrant) => ({
  subject: subject(request),
  text: [
    summary(request, oneLine),
    `Review and decide: ${grant.approval_url}`,
    `Your personal approval code: ${grant.code}`,
    `Approve directly: ${grant.approve_url}`,
    `Deny directly: ${grant.deny_url}`,
    `Or in the dashboard: ${request.reviewUrl}`,
    `The code and links are for ${grant.email} only, work once, and expire at ${grant.expires_at}. Do not forward this message.`
  ].join("\n\n")
})

/** An e-mail to a configured recipient who is not an approver: notification only. */
export const noticeEmail = (request: ApprovalRequest) => ({
  subject: subject(request),
  text: noticeLines(request, oneLine).join("\n\n")
})

export const slackMessage = (request: ApprovalRequest) => {
  const body = noticeLines(request, slackText).join("\n")
  return {
    text: body,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: body } },
      {
        type: "actions",
        elements: [{ type: "button", text: { type: "plain_text", text: "Open in dashboard" }, url: request.reviewUrl }]
      }
    ]
  }
}

export const teamsMessage = (request: ApprovalRequest) => ({
  "@type": "MessageCard",
  "@context": "https://schema.org/extensions",
  summary: subject(request),
  title: `Approval requested: ${teamsText(request.actionType)}`,
  text: noticeLines(request, teamsText).join("\n\n"),
  potentialAction: [{ "@type": "OpenUri", name: "Open in dashboard", targets: [{ os: "default", uri: request.reviewUrl }] }]
})

/** Shows scheme and host and the last four characters: enough to recognize, useless to call. */
export const maskUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}/…${url.slice(-4)}`
  } catch {
    return `…${url.slice(-4)}`
  }
}

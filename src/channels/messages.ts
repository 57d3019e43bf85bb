/**
 * The text of approval announcements. Plain functions: they only describe the
 * request and link to it; nothing here can approve anything.
 */

export interface ApprovalRequest {
  readonly eventId: string
  readonly orgUuid: string
  readonly actionUuid: string
  readonly actionType: string
  readonly agentId: string | null
  readonly approvalUrl: string
  readonly approvalCode: string | null
  readonly expiresAt: string | null
}

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

/** Reads an `action.approval_requested` event's data; undefined when it lacks the action or the link. */
export const approvalRequestOf = (eventId: string, orgUuid: string, data: Readonly<Record<string, unknown>>): ApprovalRequest | undefined => {
  const actionUuid = text(data.action_uuid)
  const approvalUrl = text(data.approval_url)
  if (actionUuid === null || approvalUrl === null) return undefined
  return {
    eventId,
    orgUuid,
    actionUuid,
    actionType: text(data.action_type) ?? "action",
    agentId: text(data.agent_id),
    approvalUrl,
    approvalCode: text(data.approval_code),
    expiresAt: text(data.expires_at)
  }
}

const lines = (request: ApprovalRequest): Array<string> => [
  `An agent${request.agentId ? ` (${request.agentId})` : ""} asks for approval of "${request.actionType}".`,
  `Review it here: ${request.approvalUrl}`,
  ...(request.approvalCode ? [`Approval code: ${request.approvalCode}`] : []),
  ...(request.expiresAt ? [`The request expires at ${request.expiresAt}.`] : []),
  "This message only notifies; approve or deny in the dashboard."
]

export const emailMessage = (request: ApprovalRequest) => ({
  subject: `Approval requested: ${request.actionType}`,
  text: lines(request).join("\n\n")
})

export const slackMessage = (request: ApprovalRequest) => {
  const body = lines(request).join("\n")
  return {
    text: body,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: body } },
      {
        type: "actions",
        elements: [{ type: "button", text: { type: "plain_text", text: "Open in dashboard" }, url: request.approvalUrl }]
      }
    ]
  }
}

export const teamsMessage = (request: ApprovalRequest) => ({
  "@type": "MessageCard",
  "@context": "https://schema.org/extensions",
  summary: `Approval requested: ${request.actionType}`,
  title: `Approval requested: ${request.actionType}`,
  text: lines(request).join("\n\n"),
  potentialAction: [{ "@type": "OpenUri", name: "Open in dashboard", targets: [{ os: "default", uri: request.approvalUrl }] }]
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

/**
 * A real SMTP server inside the test: the only way approval codes leave the
 * gateway is an e-mail to the approver, so tests read them from here.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SMTPServer } from "smtp-server"
import { call, type Org } from "./client.js"
import { useFixture } from "./fixture.js"
import { Gateway, type ServerEnv } from "./server.js"

export interface Mail {
  readonly to: ReadonlyArray<string>
  readonly subject: string
  /** The decoded text body. */
  readonly text: string
  /** The message as it arrived. */
  readonly raw: string
}

/** One approver's credentials, as read from their personal e-mail. */
export interface Grant {
  readonly email: string
  readonly code: string
  readonly approval_url: string
  readonly approve_url: string
  readonly deny_url: string
}

/** Quoted-printable (what nodemailer uses for long lines): soft breaks and =XX escapes. */
const decodeQuotedPrintable = (body: string): string =>
  Buffer.from(
    body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    "latin1"
  ).toString("utf8")

const parse = (to: ReadonlyArray<string>, raw: string): Mail => {
  const split = raw.indexOf("\r\n\r\n")
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ")
  const body = raw.slice(split + 4)
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "im").exec(head)?.[1]?.trim() ?? ""
  const encoding = header("Content-Transfer-Encoding").toLowerCase()
  const text = encoding === "quoted-printable" ? decodeQuotedPrintable(body) : encoding === "base64" ? Buffer.from(body, "base64").toString("utf8") : body
  return { to, subject: header("Subject"), text: text.replace(/\r\n/g, "\n"), raw }
}

const field = (text: string, label: string) => new RegExp(`${label}: (\\S+)`).exec(text)?.[1]

export class Inbox {
  readonly mails: Array<Mail> = []
  private waiters = new Set<() => void>()

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number
  ) {}

  static async start(): Promise<Inbox> {
    let inbox: Inbox | undefined
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          inbox?.receive(parse(session.envelope.rcptTo.map((r) => r.address.toLowerCase()), Buffer.concat(chunks).toString("utf8")))
          callback()
        })
      }
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.server.address()
    if (typeof address !== "object" || address === null) throw new Error("the SMTP server has no port")
    inbox = new Inbox(server, address.port)
    return inbox
  }

  /** What the gateway's SMTP_URL should be. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`
  }

  private receive(mail: Mail) {
    this.mails.push(mail)
    for (const wake of this.waiters) wake()
  }

  /** The first mail matching `predicate`, waiting up to `timeoutMs` for it. */
  async waitFor(predicate: (mail: Mail) => boolean, timeoutMs = 10_000): Promise<Mail> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.mails.find(predicate)
      if (found) return found
      const left = deadline - Date.now()
      if (left <= 0) throw new Error("no matching e-mail arrived")
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake)
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(wake, left)
        this.waiters.add(wake)
      })
    }
  }

  /** The personal grant of `email` (default: whoever got one first) for an action, from their e-mail. */
  async grant(actionUuid: string, email?: string): Promise<Grant> {
    const mail = await this.waitFor(
      (m) => m.text.includes(`/actions/${actionUuid}/approve?token=`) && (email === undefined || m.to.includes(email.toLowerCase()))
    )
    const code = field(mail.text, "Your personal approval code")
    const approval_url = field(mail.text, "Review and decide")
    const approve_url = field(mail.text, "Approve directly")
    const deny_url = field(mail.text, "Deny directly")
    if (!code || !approval_url || !approve_url || !deny_url) throw new Error(`approval e-mail without credentials:\n${mail.text}`)
    return { email: mail.to[0]!, code, approval_url, approve_url, deny_url }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** Turns on the organization's e-mail channel (owner's JWT), so its approvers receive codes. */
export const enableApprovalMail = async (base: string, org: Org, recipients?: ReadonlyArray<string>): Promise<void> => {
  const reply = await call(base, "PUT", "/api/v1/approvers/notification-channels", {
    token: org.token,
    body: { email: { enabled: true, ...(recipients ? { recipients } : {}) } }
  })
  if (reply.status !== 200) throw new Error(`enabling e-mail failed: ${reply.status} ${reply.text}`)
}

/** The file's inbox: started before its first test (declare it before the server that mails to it), stopped after its last. */
export const useInbox = (): Inbox =>
  useFixture(
    () => Inbox.start(),
    (inbox) => inbox.stop()
  )

/** The inbox of a suite written as Effects: started with the layer, stopped when it is released. */
export class Mailbox extends Context.Service<Mailbox, Inbox>()("test/Mailbox") {
  static readonly layer = Layer.effect(
    Mailbox,
    Effect.acquireRelease(
      Effect.promise(() => Inbox.start()),
      (inbox) => Effect.promise(() => inbox.stop())
    )
  )
}

/** The test server mailing through a fresh inbox, both provided. */
export const gatewayWithMail = (env: ServerEnv = {}) =>
  Layer.unwrap(Effect.map(Mailbox, (inbox) => Gateway.layer({ ...env, SMTP_URL: inbox.url }))).pipe(Layer.provideMerge(Mailbox.layer))

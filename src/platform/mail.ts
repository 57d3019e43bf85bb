/**
 * Outgoing mail over SMTP_URL. nodemailer is imported, and its transport made, at the first
 * message (src/platform/lazy.ts): a gateway without a mail server, or that never sends, does not
 * hold it in memory.
 */
import { loadOnce } from "./lazy.js"

export interface MailMessage {
  readonly from: string
  readonly to: string
  readonly subject: string
  readonly text: string
}

export interface Mailer {
  readonly send: (message: MailMessage) => Promise<unknown>
}

/** A mailer for `smtpUrl`, or undefined when none is configured. */
export const makeMailer = (smtpUrl: string | undefined): Mailer | undefined => {
  if (!smtpUrl) return undefined
  const transport = loadOnce(async () => (await import("nodemailer")).default.createTransport(smtpUrl))
  return { send: async (message) => (await transport()).sendMail(message) }
}

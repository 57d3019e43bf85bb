/**
 * The one Google credential shape `cloud_c` accepts: a service-account key file. Every other
 * credential type google-auth-library honours (`external_account`, `authorized_user`,
 * `impersonated_service_account`, ...) can name local files or URLs that its own HTTP client would
 * read or call, so none is accepted; the URL fields a key file carries must hold Google's own
 * values, because the gateway mints the access token itself at Google's fixed token endpoint.
 */
import { createPrivateKey } from "node:crypto"

export const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"

export interface ServiceAccountKey {
  readonly clientEmail: string
  readonly privateKey: string
  readonly privateKeyId: string | undefined
}

/** Fields of a key file whose value, when present, must be exactly Google's. */
const FIXED_VALUES: Readonly<Record<string, string>> = {
  token_uri: GOOGLE_TOKEN_URL,
  universe_domain: "googleapis.com",
  auth_uri: "https://accounts.google.com/o/oauth2/auth",
  auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs"
}
const CERT_URL_PREFIX = "https://www.googleapis.com/robot/v1/metadata/x509/"
const FREE_TEXT = new Set(["project_id", "client_id"])
const KNOWN = new Set(["type", "private_key", "private_key_id", "client_email", "client_x509_cert_url", ...FREE_TEXT, ...Object.keys(FIXED_VALUES)])

const EMAIL = /^[^\s@]{1,64}@[A-Za-z0-9.-]{1,253}$/
const KEY_ID = /^[A-Za-z0-9]{1,128}$/
const MAX_PRIVATE_KEY_CHARS = 16_384

const isRsaPrivateKey = (pem: string) => {
  if (!pem.includes("-----BEGIN PRIVATE KEY-----") || pem.length > MAX_PRIVATE_KEY_CHARS) return false
  try {
    return createPrivateKey({ key: pem, format: "pem" }).asymmetricKeyType === "rsa"
  } catch {
    return false
  }
}

/** The key, or why this text is not a service-account key the gateway accepts. */
export const parseServiceAccount = (text: string): { key: ServiceAccountKey } | { problem: string } => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { problem: "must be the JSON of a Google service-account key file" }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: "must be the JSON of a Google service-account key file" }
  const fields = value as Record<string, unknown>
  if (fields.type !== "service_account") return { problem: 'type must be "service_account"; other Google credential types (external_account, authorized_user, ...) are not accepted' }
  for (const name of Object.keys(fields)) if (!KNOWN.has(name)) return { problem: `${name} is not a field of a service-account key` }
  for (const [name, expected] of Object.entries(FIXED_VALUES)) {
    if (fields[name] !== undefined && fields[name] !== expected) return { problem: `${name} must be ${expected} when present` }
  }
  const certUrl = fields.client_x509_cert_url
  if (certUrl !== undefined && (typeof certUrl !== "string" || !certUrl.startsWith(CERT_URL_PREFIX) || certUrl.length > 512)) {
    return { problem: `client_x509_cert_url must start with ${CERT_URL_PREFIX} when present` }
  }
  for (const name of FREE_TEXT) {
    const text = fields[name]
    if (text !== undefined && (typeof text !== "string" || text.length > 200)) return { problem: `${name} must be a string of at most 200 characters` }
  }
  const { client_email: clientEmail, private_key: privateKey, private_key_id: privateKeyId } = fields
  if (typeof clientEmail !== "string" || !EMAIL.test(clientEmail)) return { problem: "client_email must be the service account's e-mail address" }
  if (typeof privateKey !== "string" || !isRsaPrivateKey(privateKey)) return { problem: "private_key must be the key file's PEM RSA private key" }
  if (privateKeyId !== undefined && (typeof privateKeyId !== "string" || !KEY_ID.test(privateKeyId))) return { problem: "private_key_id must be letters and digits" }
  return { key: { clientEmail, privateKey, privateKeyId } }
}

/**
 * Webhook secrets and signatures (CONTRACT.md "Webhooks"): Standard Webhooks
 * (`v1,` base64 HMAC-SHA256 keyed with the bytes after `whsec_`, over
 * "{id}.{timestamp}.{body}") and the simpler `X-Signature: sha256=<hex>` keyed
 * with the whole `whsec_…` string.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes } from "node:crypto"

const SECRET_PREFIX = "whsec_"

/** `whsec_` + base64 of 32 random bytes. */
export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString("base64")

export const secretKeyBytes = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

export const standardSignature = (secret: string, id: string, timestampSeconds: number, body: string): string =>
  `v1,${createHmac("sha256", secretKeyBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`

export const simpleSignature = (secret: string, body: string): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

/** The headers of delivery attempts, for one secret. */
export type Signer = (deliveryId: string, timestampSeconds: number, body: string) => Record<string, string>

/**
 * Prepares a secret's two HMAC keys once (a sender signs a whole batch with them). Every header
 * of one attempt; `X-Aira-Signature` repeats `X-Signature` for the published SDK's verifier.
 */
export const webhookSigner = (secret: string): Signer => {
  const standardKey: KeyObject = createSecretKey(secretKeyBytes(secret))
  const simpleKey: KeyObject = createSecretKey(Buffer.from(secret, "utf8"))
  return (deliveryId, timestampSeconds, body) => {
    const simple = `sha256=${createHmac("sha256", simpleKey).update(body).digest("hex")}`
    return {
      "content-type": "application/json",
      "user-agent": "accountability-gateway-webhooks/1",
      "webhook-id": deliveryId,
      "webhook-timestamp": String(timestampSeconds),
      "webhook-signature": `v1,${createHmac("sha256", standardKey).update(`${deliveryId}.${timestampSeconds}.${body}`).digest("base64")}`,
      "x-signature": simple,
      "x-aira-signature": simple
    }
  }
}

export const signedHeaders = (secret: string, deliveryId: string, timestampSeconds: number, body: string): Record<string, string> =>
  webhookSigner(secret)(deliveryId, timestampSeconds, body)

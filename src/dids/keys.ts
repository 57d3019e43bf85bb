/** Agent keys: fresh Ed25519 pairs, the private half sealed with the envelope while at rest. */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto"
import type { Envelope } from "../platform/envelope.js"

export interface NewAgentKey {
  readonly publicKeyRaw: Uint8Array
  readonly privateKeySealed: string
}

/** What the sealed key is bound to: another agent's or another version's row cannot be swapped in. */
const sealedFor = (slug: string, version: number) => `agent-did:${slug}:${version}`

const rawPublicKey = (publicKey: KeyObject): Uint8Array => Buffer.from(publicKey.export({ format: "jwk" }).x as string, "base64url")

export const generateAgentKey = (envelope: Envelope, slug: string, version: number): NewAgentKey => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519")
  const der = privateKey.export({ format: "der", type: "pkcs8" })
  return { publicKeyRaw: rawPublicKey(publicKey), privateKeySealed: envelope.seal(der, sealedFor(slug, version)) }
}

/** Signs `bytes` with the agent's key: `ed25519:` + base64url, as receipts write signatures. */
export const signWithAgentKey = (envelope: Envelope, slug: string, version: number, sealed: string, bytes: Uint8Array): string => {
  const privateKey = createPrivateKey({ key: Buffer.from(envelope.open(sealed, sealedFor(slug, version))), format: "der", type: "pkcs8" })
  return `ed25519:${sign(null, bytes, privateKey).toString("base64url")}`
}

/** Node's KeyObject for a raw Ed25519 public key. */
export const ed25519PublicKey = (raw: Uint8Array): KeyObject =>
  createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(raw).toString("base64url") }, format: "jwk" })

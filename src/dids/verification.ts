/**
 * The Ed25519 keys of a resolved DID document, as a counterparty's signature is checked against
 * them (mutual signing, reputation attestations): `verificationMethod` entries of type
 * Ed25519VerificationKey2020 with a base58btc multibase key.
 */
import { ed25519FromMultibase } from "../platform/did-web.js"

export interface Ed25519Method {
  /** The method's `id`, or null when the entry has none. */
  readonly id: string | null
  readonly publicKeyRaw: Uint8Array
}

/** The usable methods, or which refusal the document earns: no methods at all, or none of that form. */
export const ed25519Methods = (document: Record<string, unknown>): ReadonlyArray<Ed25519Method> | "none" | "unsupported" => {
  const methods = Array.isArray(document.verificationMethod) ? document.verificationMethod : []
  if (methods.length === 0) return "none"
  const usable = methods.flatMap((method: unknown) => {
    if (method === null || typeof method !== "object") return []
    const { id, type, publicKeyMultibase } = method as { id?: unknown; type?: unknown; publicKeyMultibase?: unknown }
    if (type !== "Ed25519VerificationKey2020" || typeof publicKeyMultibase !== "string") return []
    const publicKeyRaw = ed25519FromMultibase(publicKeyMultibase)
    return publicKeyRaw === undefined ? [] : [{ id: typeof id === "string" ? id : null, publicKeyRaw }]
  })
  return usable.length === 0 ? "unsupported" : usable
}

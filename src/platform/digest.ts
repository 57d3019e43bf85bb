/** The contract's digest form, `sha256:` and 64 lowercase hex digits: one home for every area that writes one. */
import { hash } from "node:crypto"

/** `sha256:<hex>` of bytes, or of text as UTF-8. */
// crypto.hash skips the Hash object: about 3x faster on small inputs (receipt mints hash every payload).
export const sha256Tagged = (input: Uint8Array | string): string => `sha256:${hash("sha256", input, "hex")}`

/** `sha256:<hex>` of a digest already computed (Merkle roots, leaf hashes). */
export const taggedDigest = (digest: Uint8Array): string => `sha256:${Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString("hex")}`

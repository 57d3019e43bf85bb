/**
 * Settlement checkpoints in the C2SP tlog-checkpoint signed-note format:
 *
 *   <origin>\n<tree size>\n<base64 root hash>\n\n— <key name> <base64(key id ‖ signature)>\n
 *
 * The signature is Ed25519 over the note text (the first three lines, each
 * ending in a newline); the key id is the first 4 bytes of
 * SHA-256(key name ‖ "\n" ‖ 0x01 ‖ public key). A verifier key is written
 * `<name>+<hex key id>+<base64(0x01 ‖ public key)>`.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { base64Decode, base64Encode, bytesEqual, bytesToHex, utf8Bytes } from "./encoding.js"
import { verifyEd25519 } from "./receipt.js"

const ED25519_ALGORITHM = 0x01
const EM_DASH_PREFIX = "\u2014 "

export interface Checkpoint {
  readonly origin: string
  readonly treeSize: number
  readonly rootHash: Uint8Array
  /** The signed text: origin, size and root lines with their newlines. */
  readonly body: string
  readonly signatures: ReadonlyArray<{ readonly name: string; readonly keyId: Uint8Array; readonly signature: Uint8Array }>
}

export const checkpointBody = (origin: string, treeSize: number, rootHash: Uint8Array): string =>
  `${origin}\n${treeSize}\n${base64Encode(rootHash)}\n`

export const noteKeyId = (name: string, publicKey: Uint8Array): Uint8Array => {
  const nameBytes = utf8Bytes(name)
  const input = new Uint8Array(nameBytes.length + 2 + publicKey.length)
  input.set(nameBytes, 0)
  input[nameBytes.length] = 0x0a
  input[nameBytes.length + 1] = ED25519_ALGORITHM
  input.set(publicKey, nameBytes.length + 2)
  return sha256(input).slice(0, 4)
}

export const verifierKey = (name: string, publicKey: Uint8Array): string => {
  const typed = new Uint8Array(33)
  typed[0] = ED25519_ALGORITHM
  typed.set(publicKey, 1)
  return `${name}+${bytesToHex(noteKeyId(name, publicKey))}+${base64Encode(typed)}`
}

/** The signature line for a body signed with `signature` (64 raw bytes). */
export const signatureLine = (name: string, publicKey: Uint8Array, signature: Uint8Array): string => {
  const blob = new Uint8Array(4 + signature.length)
  blob.set(noteKeyId(name, publicKey), 0)
  blob.set(signature, 4)
  return `${EM_DASH_PREFIX}${name} ${base64Encode(blob)}\n`
}

export class CheckpointError extends Error {}

const fail = (message: string): never => {
  throw new CheckpointError(message)
}

/** Parses a signed checkpoint; throws CheckpointError when it is malformed. */
export const parseCheckpoint = (text: string): Checkpoint => {
  const split = text.indexOf("\n\n")
  if (split < 0) fail("no blank line between the note text and its signatures")
  const body = text.slice(0, split + 1)
  const lines = body.slice(0, -1).split("\n")
  if (lines.length < 3) fail("a checkpoint has an origin, a tree size and a root hash")
  const [origin, sizeText, rootText] = lines
  if (origin.length === 0) fail("empty origin")
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) fail("tree size is not a decimal integer")
  let rootHash: Uint8Array = new Uint8Array(0)
  try {
    rootHash = base64Decode(rootText)
  } catch {
    fail("root hash is not base64")
  }
  if (rootHash.length !== 32) fail("root hash is not 32 bytes")
  const signatureText = text.slice(split + 2)
  if (!signatureText.endsWith("\n")) fail("the signature block does not end with a newline")
  const signatures = signatureText
    .slice(0, -1)
    .split("\n")
    .map((line) => {
      if (!line.startsWith(EM_DASH_PREFIX)) fail("a signature line starts with an em dash and a space")
      const [name, blobText, ...rest] = line.slice(EM_DASH_PREFIX.length).split(" ")
      if (name === undefined || blobText === undefined || rest.length > 0) fail("a signature line is `— <name> <signature>`")
      let blob: Uint8Array = new Uint8Array(0)
      try {
        blob = base64Decode(blobText)
      } catch {
        fail("signature is not base64")
      }
      if (blob.length < 5) fail("signature too short")
      return { name, keyId: blob.slice(0, 4), signature: blob.slice(4) }
    })
  return { origin, treeSize: Number(sizeText), rootHash, body, signatures }
}

/** True when `text` is a checkpoint carrying a valid signature by (name, publicKey). */
export const verifyCheckpoint = (text: string, name: string, publicKey: Uint8Array): boolean => {
  let checkpoint: Checkpoint
  try {
    checkpoint = parseCheckpoint(text)
  } catch {
    return false
  }
  const keyId = noteKeyId(name, publicKey)
  return checkpoint.signatures.some(
    (line) =>
      line.name === name &&
      bytesEqual(line.keyId, keyId) &&
      line.signature.length === 64 &&
      verifyEd25519(line.signature, utf8Bytes(checkpoint.body), publicKey)
  )
}

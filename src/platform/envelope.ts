/**
 * Secrets at rest (signing keys, provider credentials, webhook secrets) as
 * AES-256-GCM ciphertext under a master key.
 *
 * Sealed form: `v1.<keyId>.<base64url iv>.<base64url ciphertext || tag>`.
 * The AAD names what the secret is for (e.g. `signing_key:rk_…`), so a
 * ciphertext copied into another row does not open there. The version and key
 * id are authenticated too. Several keys can be known at once: seal with the
 * current one, open with whichever the sealed text names (key rotation).
 */
import * as nodeCrypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Data } from "effect"

const VERSION = "v1"
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const MASTER_KEY_FILE = "master.key"

export type EnvelopeErrorReason = "malformed" | "unknown_key" | "authentication_failed"

export class EnvelopeError extends Data.TaggedError("EnvelopeError")<{
  readonly reason: EnvelopeErrorReason
  readonly message: string
}> {}

/** `"mk_"` + first 8 hex characters of sha256(key): names a key without revealing it. */
export const masterKeyId = (key: Uint8Array): string =>
  "mk_" + nodeCrypto.createHash("sha256").update(key).digest("hex").slice(0, 8)

export interface EnvelopeKey {
  readonly key: Uint8Array
  /** Defaults to masterKeyId(key). */
  readonly keyId?: string
}

export interface Envelope {
  /** Id of the key new secrets are sealed with. */
  readonly keyId: string
  readonly keyIds: ReadonlyArray<string>
  readonly seal: (plaintext: Uint8Array | string, aad: string) => string
  readonly open: (sealed: string, aad: string) => Uint8Array
  /** open() decoded as UTF-8. */
  readonly openText: (sealed: string, aad: string) => string
  /** Which key a sealed text was made with (to find secrets still under a retired key). */
  readonly keyIdOf: (sealed: string) => string
}

const checkKey = (key: Uint8Array, keyId: string): void => {
  if (key.length !== KEY_BYTES) throw new RangeError(`master key ${keyId} must be 32 bytes, got ${key.length}`)
  if (!/^[A-Za-z0-9_-]+$/.test(keyId)) throw new RangeError(`key id ${keyId} may only use [A-Za-z0-9_-]`)
}

const additionalData = (keyId: string, aad: string): Buffer => Buffer.from(`${VERSION}.${keyId}.${aad}`, "utf8")

/**
 * `masterKey` (with `keyId`, derived when omitted) seals; `olderKeys` only open.
 */
export const makeEnvelope = (
  masterKey: Uint8Array,
  keyId: string = masterKeyId(masterKey),
  olderKeys: ReadonlyArray<EnvelopeKey> = []
): Envelope => {
  const keys = new Map<string, Buffer>()
  checkKey(masterKey, keyId)
  keys.set(keyId, Buffer.from(masterKey))
  for (const older of olderKeys) {
    const id = older.keyId ?? masterKeyId(older.key)
    checkKey(older.key, id)
    if (!keys.has(id)) keys.set(id, Buffer.from(older.key))
  }
  const currentKey = keys.get(keyId)!

  const seal = (plaintext: Uint8Array | string, aad: string): string => {
    const iv = nodeCrypto.randomBytes(IV_BYTES)
    const cipher = nodeCrypto.createCipheriv("aes-256-gcm", currentKey, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(additionalData(keyId, aad))
    const data = typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext
    const body = Buffer.concat([cipher.update(data), cipher.final(), cipher.getAuthTag()])
    return `${VERSION}.${keyId}.${iv.toString("base64url")}.${body.toString("base64url")}`
  }

  const parse = (sealed: string): { id: string; iv: Buffer; body: Buffer } => {
    const parts = typeof sealed === "string" ? sealed.split(".") : []
    if (parts.length !== 4 || parts[0] !== VERSION) {
      throw new EnvelopeError({ reason: "malformed", message: "not a v1 sealed secret" })
    }
    const [, id, ivText, bodyText] = parts
    const iv = Buffer.from(ivText, "base64url")
    const body = Buffer.from(bodyText, "base64url")
    // Buffer's base64url decoder skips bad characters: insist on the canonical text.
    if (iv.length !== IV_BYTES || iv.toString("base64url") !== ivText || body.length < TAG_BYTES || body.toString("base64url") !== bodyText) {
      throw new EnvelopeError({ reason: "malformed", message: "sealed secret has a malformed iv or body" })
    }
    return { id, iv, body }
  }

  const open = (sealed: string, aad: string): Uint8Array => {
    const { id, iv, body } = parse(sealed)
    const key = keys.get(id)
    if (key === undefined) throw new EnvelopeError({ reason: "unknown_key", message: `no master key with id ${id}` })
    const decipher = nodeCrypto.createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(additionalData(id, aad))
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES))
    try {
      const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()])
      return new Uint8Array(plain.buffer, plain.byteOffset, plain.byteLength)
    } catch {
      throw new EnvelopeError({
        reason: "authentication_failed",
        message: "sealed secret failed authentication (wrong AAD, wrong key or tampered)"
      })
    }
  }

  return {
    keyId,
    keyIds: [...keys.keys()],
    seal,
    open,
    openText: (sealed, aad) => Buffer.from(open(sealed, aad)).toString("utf8"),
    keyIdOf: (sealed) => parse(sealed).id
  }
}

/** 32 bytes from hex (64 characters) or base64 / base64url. */
export const parseMasterKey = (text: string): Uint8Array => {
  const trimmed = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return new Uint8Array(Buffer.from(trimmed, "hex"))
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64")
    if (bytes.length === KEY_BYTES) return new Uint8Array(bytes)
  }
  throw new RangeError("MASTER_KEY must be 32 bytes as 64 hex characters or base64")
}

export interface LoadedMasterKey {
  readonly key: Uint8Array
  readonly keyId: string
  readonly source: "env" | "file"
  /** Path of the key file when read from or written to disk. */
  readonly path?: string
  /** True when a new key file was just created: the caller must warn loudly (back it up). */
  readonly generated: boolean
}

/**
 * The master key from `MASTER_KEY`, else from `<dataDir>/master.key`, which is
 * created (32 random bytes, base64, mode 0600) when missing.
 */
export const loadMasterKey = (options: { readonly MASTER_KEY?: string | undefined; readonly dataDir: string }): LoadedMasterKey => {
  if (options.MASTER_KEY !== undefined && options.MASTER_KEY.trim() !== "") {
    const key = parseMasterKey(options.MASTER_KEY)
    return { key, keyId: masterKeyId(key), source: "env", generated: false }
  }
  const file = path.join(options.dataDir, MASTER_KEY_FILE)
  const readExisting = (): LoadedMasterKey => {
    const key = parseMasterKey(fs.readFileSync(file, "utf8"))
    return { key, keyId: masterKeyId(key), source: "file", path: file, generated: false }
  }
  if (fs.existsSync(file)) return readExisting()
  fs.mkdirSync(options.dataDir, { recursive: true })
  const key = new Uint8Array(nodeCrypto.randomBytes(KEY_BYTES))
  try {
    // "wx": never overwrite a key another process created a moment ago.
    fs.writeFileSync(file, Buffer.from(key).toString("base64") + "\n", { mode: 0o600, flag: "wx" })
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "EEXIST") return readExisting()
    throw cause
  }
  // The mode given at creation is filtered by the umask; make sure it is exactly 0600.
  fs.chmodSync(file, 0o600)
  return { key, keyId: masterKeyId(key), source: "file", path: file, generated: true }
}

/**
 * The receipt-signing key and the internal timestamp authority, loaded from the
 * database (private halves sealed with the envelope) or created once on first
 * start. Creation races between processes are settled by the database: a
 * partial unique index allows one active signing key, the TSA row has a fixed id.
 */
import * as Effect from "effect/Effect"
import type { Envelope } from "../platform/envelope.js"
import { type Ed25519PublicJwk, generateSigningKey, importSigningKey, publicJwk, type ReceiptSigner } from "./signing.js"
import {
  activeSigningKey,
  insertActiveKeyIfNone,
  insertTsaIdentityIfNone,
  retireActiveKey,
  type SigningKeyRow,
  tsaIdentity
} from "./store.js"
import { generateTsaMaterial, loadTimestampAuthority, type TimestampAuthority } from "./tsa/authority.js"

export const TSA_IDENTITY_ID = "internal"
const TSA_ALGORITHM = "ECDSA-P256"

const signingKeyAad = (publicKeyId: string) => `signing-key:${publicKeyId}`
const tsaKeyAad = (id: string) => `tsa-key:${id}`

export const rawPublicKeyOf = (row: Pick<SigningKeyRow, "public_key_raw">): Uint8Array =>
  new Uint8Array(Buffer.from(row.public_key_raw, "base64url"))

/** The key's public JWK plus its lifecycle status. */
export const jwkOf = (row: SigningKeyRow): Ed25519PublicJwk & { readonly status: "active" | "retired" } => ({
  ...publicJwk(rawPublicKeyOf(row), row.public_key_id),
  status: row.status
})

export const openSigner = (envelope: Envelope, row: SigningKeyRow): ReceiptSigner => {
  const signer = importSigningKey(envelope.open(row.private_key_sealed, signingKeyAad(row.public_key_id)))
  if (signer.publicKeyId !== row.public_key_id) throw new Error(`signing key ${row.public_key_id} does not match its private key`)
  return signer
}

/** A fresh key, sealed; not yet stored. */
const newSealedKey = (envelope: Envelope) => {
  const generated = generateSigningKey()
  return {
    publicKeyId: generated.publicKeyId,
    publicKeyRaw: Buffer.from(generated.publicKeyRaw).toString("base64url"),
    sealed: envelope.seal(generated.privateKeyPkcs8Der, signingKeyAad(generated.publicKeyId))
  }
}

/** The active signer, creating the first key when there is none. */
export const loadActiveSigner = (envelope: Envelope) =>
  Effect.gen(function* () {
    const existing = yield* activeSigningKey
    if (existing !== undefined) return openSigner(envelope, existing)
    // A concurrent starter may win the insert; either way the row read back is the one key.
    yield* insertActiveKeyIfNone(newSealedKey(envelope))
    const active = yield* activeSigningKey
    if (active === undefined) return yield* Effect.die(new Error("no active signing key after creating one"))
    return openSigner(envelope, active)
  })

/**
 * Retires the active key and activates a new one; run inside a transaction.
 * `undefined` when a concurrent rotation won the race.
 */
export const rotateSigningKey = (envelope: Envelope) =>
  Effect.gen(function* () {
    const previous = yield* retireActiveKey
    const next = newSealedKey(envelope)
    const inserted = yield* insertActiveKeyIfNone(next)
    if (!inserted) return undefined
    return { publicKeyId: next.publicKeyId, previousPublicKeyId: previous }
  })

/** The internal TSA, creating its ECDSA P-256 identity (self-signed certificate) on first start. */
export const loadTimestampAuthorityIdentity = (envelope: Envelope) =>
  Effect.gen(function* () {
    let row = yield* tsaIdentity(TSA_IDENTITY_ID)
    if (row === undefined) {
      const material = yield* Effect.promise(() => generateTsaMaterial({ algorithm: TSA_ALGORITHM }))
      yield* insertTsaIdentityIfNone({
        id: TSA_IDENTITY_ID,
        algorithm: TSA_ALGORITHM,
        certificate_der: Buffer.from(material.certificateDer).toString("base64"),
        private_key_sealed: envelope.seal(material.privateKeyPkcs8Der, tsaKeyAad(TSA_IDENTITY_ID))
      })
      row = yield* tsaIdentity(TSA_IDENTITY_ID)
      if (row === undefined) return yield* Effect.die(new Error("no TSA identity after creating one"))
    }
    const identity = row
    return yield* Effect.try({
      try: (): TimestampAuthority =>
        loadTimestampAuthority({
          certificateDer: new Uint8Array(Buffer.from(identity.certificate_der, "base64")),
          privateKeyPkcs8Der: envelope.open(identity.private_key_sealed, tsaKeyAad(identity.id))
        }),
      catch: (cause) => new Error(`cannot load the timestamp authority: ${(cause as Error).message}`)
    }).pipe(Effect.orDie)
  })

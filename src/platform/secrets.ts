/**
 * The master key and everything derived from it: the envelope for secrets at
 * rest, the API-key pepper and the JWT signing key.
 */
import { createHash, createPrivateKey, createPublicKey, hkdfSync, type KeyObject } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Config } from "./config.js"
import { type Envelope, loadMasterKey, makeEnvelope } from "./envelope.js"

export interface ServerSecrets {
  readonly pepper: Buffer
  /** Keys invite-code hashes; distinct from `pepper`, so an invite hash never equals a key digest. */
  readonly invitePepper: Buffer
  readonly jwtPrivateKey: KeyObject
  readonly jwtPublicKey: KeyObject
  /** `iss` of every JWT: the same on every node sharing MASTER_KEY, whatever their BASE_URL. */
  readonly jwtIssuer: string
  /** Signs legacy approve/deny tokens. */
  readonly tokenKey: Buffer
}

const derive = (master: Uint8Array, label: string, length = 32): Buffer =>
  Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), `agent-gateway/${label}`, length))

/** PKCS#8 wrapper of a raw Ed25519 seed (RFC 8410). */
const ed25519Pkcs8 = (seed: Buffer): Buffer => Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed])

/** Names the signing key, not a node: a fixed prefix and a digest of the public key. */
const issuerOf = (publicKey: KeyObject): string =>
  `urn:agent-gateway:jwt:${createHash("sha256").update(publicKey.export({ format: "der", type: "spki" })).digest("hex").slice(0, 32)}`

export const deriveServerSecrets = (masterKey: Uint8Array): ServerSecrets => {
  const jwtPrivateKey = createPrivateKey({ key: ed25519Pkcs8(derive(masterKey, "jwt-ed25519")), format: "der", type: "pkcs8" })
  const jwtPublicKey = createPublicKey(jwtPrivateKey)
  return {
    pepper: derive(masterKey, "api-key-pepper"),
    invitePepper: derive(masterKey, "invite-code-pepper"),
    jwtPrivateKey,
    jwtPublicKey,
    jwtIssuer: issuerOf(jwtPublicKey),
    tokenKey: derive(masterKey, "approval-token")
  }
}

export interface SecretsService extends ServerSecrets {
  readonly envelope: Envelope
}

export class Secrets extends Context.Service<Secrets, SecretsService>()("gateway/Secrets") {
  static readonly layer = Layer.effect(Secrets)(
    Effect.gen(function* () {
      const config = yield* Config
      const master = yield* Effect.try({
        try: () => loadMasterKey({ MASTER_KEY: config.masterKey && Redacted.value(config.masterKey), dataDir: config.dataDir }),
        catch: (cause) => new Error(`cannot load the master key: ${(cause as Error).message}`)
      })
      if (master.generated) {
        yield* Effect.logWarning("GENERATED A NEW MASTER KEY", {
          path: master.path,
          note: "Every secret at rest (signing keys, webhook secrets, stored details) is encrypted under this key. Back it up, and set MASTER_KEY in production; losing it makes those secrets unreadable."
        })
      } else if (master.source === "file") {
        yield* Effect.logWarning("using the master key file (embedded default); set MASTER_KEY in production", { path: master.path })
      }
      return { ...deriveServerSecrets(master.key), envelope: makeEnvelope(master.key, master.keyId) }
    })
  )
}

/**
 * The master key and everything derived from it: the envelope for secrets at
 * rest, the API-key pepper and the JWT signing key.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { deriveServerSecrets, type ServerSecrets } from "../access/credentials.js"
import { Config } from "../config.js"
import { type Envelope, loadMasterKey, makeEnvelope } from "./envelope.js"
import { logLine } from "./log.js"

export interface SecretsService extends ServerSecrets {
  readonly envelope: Envelope
}

export class Secrets extends Context.Service<Secrets, SecretsService>()("gateway/Secrets") {
  static readonly layer = Layer.effect(Secrets)(
    Effect.gen(function* () {
      const config = yield* Config
      const master = yield* Effect.try({
        try: () => loadMasterKey({ MASTER_KEY: config.masterKey, dataDir: config.dataDir }),
        catch: (cause) => new Error(`cannot load the master key: ${(cause as Error).message}`)
      })
      if (master.generated) {
        logLine("warn", "GENERATED A NEW MASTER KEY", {
          path: master.path,
          note: "Every secret at rest (signing keys, webhook secrets, stored details) is encrypted under this key. Back it up, and set MASTER_KEY in production; losing it makes those secrets unreadable."
        })
      } else if (master.source === "file") {
        logLine("warn", "using the master key file (embedded default); set MASTER_KEY in production", { path: master.path })
      }
      return { ...deriveServerSecrets(master.key), envelope: makeEnvelope(master.key, master.keyId) }
    })
  )
}

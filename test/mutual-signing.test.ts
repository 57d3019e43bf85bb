/**
 * Mutual signing end to end (spec 001): an organization's agent asks a counterparty of another
 * organization to co-sign an action; the counterparty's DID document is served over HTTPS by
 * its own host (a local TLS server here) and it signs with that key using @noble/ed25519. Every
 * error of the spec's list, in its order, and expiry under a shortened lifetime. Over the typed
 * client (HttpApiClient over GatewayApi); what the contract cannot send goes raw (`raw`).
 */
import { createHash } from "node:crypto"
import { writeFileSync } from "node:fs"
import { expect } from "@effect/vitest"
import * as ed from "@noble/ed25519"
import bs58 from "bs58"
import canonicalize from "canonicalize"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { answer, client, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { useDidHost } from "./support/did-host.js"
import { liveLayer } from "./support/effect.js"
import { Gateway, type ServerEnv } from "./support/server.js"

const multibase = (publicKey: Uint8Array) => `z${bs58.encode(Buffer.concat([Buffer.from([0xed, 0x01]), publicKey]))}`
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`
const signature = (bytes: Uint8Array, secretKey: Uint8Array) =>
  Effect.promise(async () => `ed25519:${Buffer.from(await ed.signAsync(bytes, secretKey)).toString("base64url")}`)

/** The counterparty's own key and host: its DID documents, served over HTTPS. */
const counterpartyKey = ed.utils.randomSecretKey()
const otherKey = ed.utils.randomSecretKey()
const { didAt, publish, certPem } = useDidHost()

class Parties extends Context.Service<
  Parties,
  { readonly initiator: Org; readonly counterparty: Org; readonly bankDid: string; readonly emptyDid: string; readonly jwkDid: string }
>()("test/mutual-signing/Parties") {}

/** The gateway trusting the peer's certificate, the counterparty's documents published, and both organizations. */
const setUp = (env: ServerEnv = {}) =>
  Layer.effect(
    Parties,
    Effect.gen(function* () {
      const bankDid = publish("partners/bank", [
        {
          id: `${didAt("partners/bank")}#key-1`,
          type: "Ed25519VerificationKey2020",
          publicKeyMultibase: multibase(yield* Effect.promise(() => ed.getPublicKeyAsync(counterpartyKey)))
        }
      ])
      const emptyDid = publish("partners/empty", [])
      const jwkDid = publish("partners/jwk", [{ id: `${didAt("partners/jwk")}#key-1`, type: "JsonWebKey2020", publicKeyJwk: { kty: "OKP", crv: "Ed25519", x: "AAAA" } }])
      const { initiator, counterparty } = yield* Effect.all({ initiator: register("Initiator"), counterparty: register("Counterparty Bank") })
      return { initiator, counterparty, bankDid, emptyDid, jwkDid }
    })
  ).pipe(
    Layer.provideMerge(
      // Built after the TLS fixture above, whose certificate it trusts.
      Layer.suspend(() => {
        const caFile = `/tmp/mutual-sign-ca-${process.pid}.pem`
        writeFileSync(caFile, certPem())
        return Gateway.layer({ OUTBOUND_CA_FILE: caFile, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", ...env })
      })
    )
  )

let counter = 0
/** A registered agent of the initiator and one of its authorized actions. */
const actionOf = (agentId: string | null = "register") =>
  Effect.gen(function* () {
    const { initiator } = yield* Parties
    const api = yield* client(initiator.key)
    let agent = agentId
    if (agentId === "register") {
      agent = `signer-${process.pid}-${++counter}`
      expect((yield* api.agents.register({ payload: { agent_slug: agent, name: "Signer" }, responseMode: "response-only" })).status).toBe(201)
    }
    const [action, reply] = yield* api.actions.authorize({
      headers: {},
      payload: {
        action_type: "payment.transfer",
        details: "pay 1,000,000 EUR to the bank",
        instruction_hash: sha256("instructions"),
        model_id: "model-x",
        ...(agent ? { agent_id: agent } : {})
      },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return { actionUuid: action.action_uuid, agent }
  })
const params = (actionUuid: string) => ({ action_uuid: actionUuid })
const publicApi = Effect.map(client(), (api) => api.mutualSignPublic)
/* Each as answered (status and JSON body). */
const request = (actionUuid: string, counterpartyDid: string, token?: string) =>
  Effect.gen(function* () {
    const { initiator } = yield* Parties
    const api = yield* client(token ?? initiator.key)
    return yield* answer(api.mutualSign.request({ params: params(actionUuid), payload: { counterparty_did: counterpartyDid }, responseMode: "response-only" }))
  })
const complete = (actionUuid: string, payload: { readonly did: string; readonly signature: string; readonly signed_payload_hash: string }) =>
  Effect.flatMap(publicApi, (api) => answer(api.complete({ params: params(actionUuid), payload, responseMode: "response-only" })))
const reject = (actionUuid: string, payload: { readonly reason?: string }) =>
  Effect.flatMap(publicApi, (api) => answer(api.reject({ params: params(actionUuid), payload, responseMode: "response-only" })))
const pendingOf = (actionUuid: string) => Effect.flatMap(publicApi, (api) => api.pending({ params: params(actionUuid) }))

liveLayer(setUp())((it) => {
  it.describe("a mutual signature between two organizations", () => {
    it.effect("request → pending → counterparty signs with its DID key → one sealed receipt", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const s = yield* Parties
        const api = yield* publicApi
        const { actionUuid, agent } = yield* actionOf()
        const [requested, requestedReply] = yield* (yield* client(s.initiator.key)).mutualSign.request({
          params: params(actionUuid),
          payload: { counterparty_did: s.bankDid },
          responseMode: "decoded-and-response"
        })
        expect(requestedReply.status).toBe(200)
        expect(requested).toMatchObject({ action_uuid: actionUuid, status: "pending", counterparty_did: s.bankDid })
        const hours = (Date.parse(requested.expires_at) - Date.parse(requested.requested_at)) / 3_600_000
        expect(hours).toBeCloseTo(24, 5)

        // What the counterparty sees, without a key: the payload, its hash and the initiator's signature.
        const [pending, pendingReply] = yield* api.pending({ params: params(actionUuid), responseMode: "decoded-and-response" })
        expect(pendingReply.status).toBe(200)
        const port = new URL(server.url).port
        expect(pending).toMatchObject({ status: "pending", initiator_did: `did:web:127.0.0.1%3A${port}:agents:${agent}`, counterparty_did: s.bankDid })
        expect(pending.payload).toEqual({
          action_uuid: actionUuid,
          org_uuid: s.initiator.orgUuid,
          agent_id: agent,
          action_type: "payment.transfer",
          action_details_hash: sha256("pay 1,000,000 EUR to the bank"),
          instruction_hash: sha256("instructions"),
          model_id: "model-x",
          created_at: expect.any(String)
        })
        const jcs = canonicalize(pending.payload)!
        const bytes = new TextEncoder().encode(jcs)
        expect(pending.payload_hash).toBe(sha256(jcs))
        // The initiator's signature verifies with the key of the initiator's own DID document.
        const initiatorDoc = yield* (yield* client()).didsPublic.agentDidDocument({ params: { agent_slug: agent! } })
        const initiatorKey = bs58.decode(initiatorDoc.verificationMethod[0]!.publicKeyMultibase.slice(1)).slice(2)
        expect(yield* Effect.promise(() => ed.verifyAsync(Buffer.from(pending.initiator_signature.slice(8), "base64url"), bytes, initiatorKey))).toBe(true)

        const counterpartySignature = yield* signature(bytes, counterpartyKey)
        const [completed, completedReply] = yield* api.complete({
          params: params(actionUuid),
          payload: { did: s.bankDid, signature: counterpartySignature, signed_payload_hash: pending.payload_hash },
          responseMode: "decoded-and-response"
        })
        expect(completedReply.status).toBe(200)
        const combined = `sha256:${createHash("sha256").update(jcs + pending.initiator_signature + counterpartySignature).digest("hex")}`
        expect(completed).toMatchObject({ action_uuid: actionUuid, status: "completed", combined_receipt_hash: combined })

        const [receipt, receiptReply] = yield* api.receipt({ params: params(actionUuid), responseMode: "decoded-and-response" })
        expect(receiptReply.status).toBe(200)
        expect(receipt).toMatchObject({
          status: "completed",
          initiator_did: pending.initiator_did,
          counterparty_did: s.bankDid,
          payload: pending.payload,
          payload_hash: pending.payload_hash,
          initiator_signature: pending.initiator_signature,
          counterparty_signature: counterpartySignature,
          combined_receipt_hash: combined,
          sealed_at: completed.sealed_at
        })
        expect(Date.parse(receipt.counterparty_signed_at!)).not.toBeNaN()

        // Sealed: nothing more can happen to it.
        expect((yield* complete(actionUuid, { did: s.bankDid, signature: counterpartySignature, signed_payload_hash: pending.payload_hash })).body.code).toBe(
          "MUTUAL_SIGN_NOT_PENDING"
        )
        expect((yield* reject(actionUuid, {})).body.code).toBe("MUTUAL_SIGN_NOT_PENDING")
      })
    )
  })

  it.describe("request errors", () => {
    it.effect("404 for unknown and other organizations' actions, NO_AGENT, NO_DID_KEY, ALREADY_REQUESTED, 422 for a DID that is not did:web", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const s = yield* Parties
        expect((yield* request("act_nothing", s.bankDid)).status).toBe(404)
        const { actionUuid } = yield* actionOf()
        const foreign = yield* request(actionUuid, s.bankDid, s.counterparty.key)
        expect(foreign.status).toBe(404)
        expect(foreign.body.code).toBe("NOT_FOUND")

        const noAgent = yield* actionOf(null)
        expect((yield* request(noAgent.actionUuid, s.bankDid)).body).toMatchObject({ code: "MUTUAL_SIGN_NO_AGENT" })
        const unregistered = yield* actionOf(`nobody-${process.pid}`)
        expect((yield* request(unregistered.actionUuid, s.bankDid)).status).toBe(400)
        // Another organization's registered agent never signs for this one.
        const theirs = `theirs-${process.pid}`
        expect((yield* (yield* client(s.counterparty.key)).agents.register({ payload: { agent_slug: theirs, name: "Theirs" }, responseMode: "response-only" })).status).toBe(201)
        const borrowed = yield* actionOf(theirs)
        expect((yield* request(borrowed.actionUuid, s.bankDid)).body).toMatchObject({ code: "MUTUAL_SIGN_NO_AGENT" })

        const keyless = yield* actionOf()
        yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`DELETE FROM agent_dids WHERE agent_slug = ${keyless.agent}`
            })
          )
        )
        const noKey = yield* request(keyless.actionUuid, s.bankDid)
        expect(noKey.status).toBe(400)
        expect(noKey.body.code).toBe("MUTUAL_SIGN_NO_DID_KEY")

        expect((yield* request(actionUuid, s.bankDid)).status).toBe(200)
        const again = yield* request(actionUuid, s.bankDid)
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("MUTUAL_SIGN_ALREADY_REQUESTED")

        const fresh = yield* actionOf()
        for (const did of ["did:key:z6Mkabc", "https://bank.example", ""]) {
          // Raw: a DID that is not did:web is outside the contract; the typed client would not send it.
          const bad = yield* raw("POST", `/api/v1/actions/${fresh.actionUuid}/mutual-sign/request`, { token: s.initiator.key, body: { counterparty_did: did } })
          expect(bad.status, did).toBe(422)
          expect(bad.body.code).toBe("VALIDATION_ERROR")
        }
      })
    )
  })

  it.describe("complete errors, in the spec's order", () => {
    const pendingFor = (counterpartyDid: string) =>
      Effect.gen(function* () {
        const { actionUuid } = yield* actionOf()
        expect((yield* request(actionUuid, counterpartyDid)).status).toBe(200)
        const pending = yield* pendingOf(actionUuid)
        const bytes = new TextEncoder().encode(canonicalize(pending.payload)!)
        return { actionUuid, pending, bytes }
      })

    it.effect("NOT_FOUND, DID_MISMATCH before the signature, INVALID_SIGNATURE before the hash, PAYLOAD_MISMATCH", () =>
      Effect.gen(function* () {
        const s = yield* Parties
        const noRequest = yield* actionOf()
        const signed = yield* signature(new TextEncoder().encode("x"), counterpartyKey)
        expect((yield* complete(noRequest.actionUuid, { did: s.bankDid, signature: signed, signed_payload_hash: sha256("x") })).status).toBe(404)

        const { actionUuid, pending, bytes } = yield* pendingFor(s.bankDid)
        const good = yield* signature(bytes, counterpartyKey)
        const byOther = yield* signature(bytes, otherKey)

        // A wrong DID with a wrong signature and hash: the DID is checked first.
        const mismatch = yield* complete(actionUuid, { did: s.emptyDid, signature: byOther, signed_payload_hash: sha256("other") })
        expect(mismatch.status).toBe(403)
        expect(mismatch.body.code).toBe("MUTUAL_SIGN_DID_MISMATCH")
        // The right DID, a signature by another key and a wrong hash: the signature is checked before the hash.
        const invalid = yield* complete(actionUuid, { did: s.bankDid, signature: byOther, signed_payload_hash: sha256("other") })
        expect(invalid.status).toBe(400)
        expect(invalid.body.code).toBe("MUTUAL_SIGN_INVALID_SIGNATURE")
        const mismatchedHash = yield* complete(actionUuid, { did: s.bankDid, signature: good, signed_payload_hash: sha256("other") })
        expect(mismatchedHash.status).toBe(400)
        expect(mismatchedHash.body.code).toBe("MUTUAL_SIGN_PAYLOAD_MISMATCH")
        // Still pending after every refusal; the receipt is not there yet.
        const early = yield* answer((yield* publicApi).receipt({ params: params(actionUuid), responseMode: "response-only" }))
        expect(early.status).toBe(400)
        expect(early.body.code).toBe("MUTUAL_SIGN_NOT_COMPLETED")
        expect((yield* complete(actionUuid, { did: s.bankDid, signature: good, signed_payload_hash: pending.payload_hash })).status).toBe(200)
      })
    )

    it.effect("DID_NO_VERIFICATION_METHOD and DID_UNSUPPORTED_KEY_FORMAT from the counterparty's document", () =>
      Effect.gen(function* () {
        const s = yield* Parties
        const empty = yield* pendingFor(s.emptyDid)
        const signedEmpty = yield* signature(empty.bytes, counterpartyKey)
        const noMethod = yield* complete(empty.actionUuid, { did: s.emptyDid, signature: signedEmpty, signed_payload_hash: empty.pending.payload_hash })
        expect(noMethod.status).toBe(400)
        expect(noMethod.body.code).toBe("DID_NO_VERIFICATION_METHOD")

        const jwk = yield* pendingFor(s.jwkDid)
        const unsupported = yield* complete(jwk.actionUuid, { did: s.jwkDid, signature: yield* signature(jwk.bytes, counterpartyKey), signed_payload_hash: jwk.pending.payload_hash })
        expect(unsupported.status).toBe(400)
        expect(unsupported.body.code).toBe("DID_UNSUPPORTED_KEY_FORMAT")
      })
    )

    it.effect("a counterparty that is one of our agents is checked against its key without a network call", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const s = yield* Parties
        const local = `bank-agent-${process.pid}`
        expect((yield* (yield* client(s.counterparty.key)).agents.register({ payload: { agent_slug: local, name: "Bank agent" }, responseMode: "response-only" })).status).toBe(201)
        const localDid = `did:web:127.0.0.1%3A${new URL(server.url).port}:agents:${local}`
        const { actionUuid, pending, bytes } = yield* pendingFor(localDid)
        // Only the bank's server holds that key: any other signature is refused, by the key of its document.
        const refused = yield* complete(actionUuid, { did: localDid, signature: yield* signature(bytes, counterpartyKey), signed_payload_hash: pending.payload_hash })
        expect(refused.status).toBe(400)
        expect(refused.body.code).toBe("MUTUAL_SIGN_INVALID_SIGNATURE")
      })
    )
  })

  it.describe("reject", () => {
    it.effect('stores the reason ("" without one) and closes the request', () =>
      Effect.gen(function* () {
        const s = yield* Parties
        const { actionUuid } = yield* actionOf()
        expect((yield* request(actionUuid, s.bankDid)).status).toBe(200)
        // Raw: a reject without any body, which the typed client does not send (it always sends its payload).
        const rejected = yield* raw("POST", `/api/v1/actions/${actionUuid}/mutual-sign/reject`)
        expect(rejected.status).toBe(200)
        expect(rejected.body).toMatchObject({ action_uuid: actionUuid, status: "rejected", reason: "" })
        expect((yield* pendingOf(actionUuid)).status).toBe("rejected")
        const late = yield* complete(actionUuid, { did: s.bankDid, signature: yield* signature(new Uint8Array(1), counterpartyKey), signed_payload_hash: sha256("x") })
        expect(late.body.code).toBe("MUTUAL_SIGN_NOT_PENDING")

        const other = yield* actionOf()
        yield* request(other.actionUuid, s.bankDid)
        const withReason = yield* reject(other.actionUuid, { reason: "amount too high" })
        expect(withReason.body).toMatchObject({ status: "rejected", reason: "amount too high" })
        expect((yield* reject("act_nothing", {})).status).toBe(404)
        expect((yield* (yield* publicApi).pending({ params: params("act_nothing"), responseMode: "response-only" })).status).toBe(404)
      })
    )
  })
})

liveLayer(setUp({ MUTUAL_SIGN_TTL_MS: "400" }))((it) => {
  it.describe("expiry", () => {
    it.effect("after the lifetime, complete answers 410 (before the DID check), pending shows expired, reject is refused", () =>
      Effect.gen(function* () {
        const s = yield* Parties
        const { actionUuid } = yield* actionOf()
        const requested = yield* request(actionUuid, s.bankDid)
        expect(requested.status).toBe(200)
        const pending = yield* pendingOf(actionUuid)
        const bytes = new TextEncoder().encode(canonicalize(pending.payload)!)
        yield* Effect.sleep("500 millis")
        const expired = yield* complete(actionUuid, { did: s.emptyDid, signature: yield* signature(bytes, counterpartyKey), signed_payload_hash: pending.payload_hash })
        expect(expired.status).toBe(410)
        expect(expired.body.code).toBe("MUTUAL_SIGN_EXPIRED")
        expect((yield* pendingOf(actionUuid)).status).toBe("expired")
        expect((yield* reject(actionUuid, {})).body.code).toBe("MUTUAL_SIGN_NOT_PENDING")
      })
    )
  })
})

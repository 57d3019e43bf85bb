/**
 * Receipts end to end: minted through the ReceiptMinter port (as actions will),
 * then verified over HTTP (typed client over GatewayApi), by the portable
 * verifier, by the CLI and by OpenSSL. The server and the test share one
 * services context, hence one database.
 */
import { execFile, spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { servicesLayer } from "../src/app.js"
import { ed25519Multibase } from "../src/platform/did-web.js"
import { newId } from "../src/platform/ids.js"
import { type MintedReceipt, type ReceiptContent, ReceiptMinter } from "../src/receipts/ports.js"
import { sha256Tagged } from "../src/receipts/signing.js"
import { insertActiveKeyIfNone, receiptByUuid } from "../src/receipts/store.js"
import { adminClient, answer, client, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { receiptContent as receiptContentOf } from "./support/receipt-content.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/receipts-e2e/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Receipts Org"), other: register("Other Org") })).pipe(Layer.provideMerge(Gateway.layer()))


const content = (orgUuid: string, overrides: Partial<ReceiptContent> = {}): ReceiptContent =>
  receiptContentOf({
    action_uuid: newId("act"),
    org_uuid: orgUuid,
    agent_id: "billing-bot",
    agent_version: "2.1.0",
    action_type: "payment.transfer",
    action_details_hash: sha256Tagged("transfer 10 EUR to ACME"),
    model_id: "gpt-x",
    outcome_hash: sha256Tagged("done"),
    ...overrides
  })

let agentCounter = 0

/** Runs `effect` with the server's services (the server and the test share them, so tests can mint directly). */
const onServer = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(effect)))

/** Signs and stores a receipt, as a transition's statement does. */
const mintAndStore = (receiptContent: ReceiptContent) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const minter = yield* ReceiptMinter
    const signed = yield* minter.sign(receiptContent)
    yield* sql`${minter.insertion(signed)}`
    return signed.minted
  })

const mintIn = (receiptContent: ReceiptContent) =>
  onServer(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.withTransaction(mintAndStore(receiptContent))
    })
  )

/** A first receipt in a fresh (org, agent) chain. */
const mintFresh = (overrides: Partial<ReceiptContent> = {}) =>
  Effect.flatMap(Orgs, ({ org }) => mintIn(content(org.orgUuid, { agent_id: `agent-${++agentCounter}`, ...overrides })))

const verifyById = (receipt_uuid: string) => Effect.flatMap(client(), (api) => api.receiptsPublic.verifyReceipt({ params: { receipt_uuid } }))

const workDir = mkdtempSync(join(tmpdir(), "receipts-e2e-"))
const writeTemp = (name: string, data: string | Uint8Array) => {
  const path = join(workDir, name)
  writeFileSync(path, data)
  return path
}

/** A fresh receipt as the verify endpoint answers it, and its key from the JWKS. */
const fetchReceiptAndKey = Effect.gen(function* () {
  const minted = yield* mintFresh()
  const api = yield* client()
  const receipt = yield* api.receiptsPublic.verifyReceipt({ params: { receipt_uuid: minted.receipt_uuid } })
  const jwks = yield* api.receiptsPublic.jwks({})
  const key = jwks.keys.find((candidate) => candidate.kid === receipt.public_key_id)
  return { receipt, key }
})

liveLayer(Setup)((it) => {
  it.describe("minting", () => {
    it.effect("writes nothing when the caller's transaction rolls back", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const receiptContent = content(org.orgUuid, { agent_id: "rollback-agent" })
        const outcome = yield* onServer(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            let minted: MintedReceipt | undefined
            const exit = yield* Effect.exit(
              sql.withTransaction(
                Effect.gen(function* () {
                  minted = yield* mintAndStore(receiptContent)
                  return yield* Effect.fail("roll back")
                })
              )
            )
            return { exit, minted, stored: minted === undefined ? undefined : yield* receiptByUuid(minted.receipt_uuid) }
          })
        )
        expect(Exit.isFailure(outcome.exit)).toBe(true)
        expect(outcome.minted?.receipt_uuid).toMatch(/^rct_/)
        expect(outcome.stored).toBeUndefined()
        const api = yield* client()
        const reply = yield* answer(api.receiptsPublic.verifyAction({ params: { action_uuid: receiptContent.action_uuid }, responseMode: "response-only" }))
        expect(reply.status).toBe(404)
        expect(reply.body.code).toBe("NOT_FOUND")
      })
    )

    it.effect("signs a payload with every field present and answers the contract's fields", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const receiptContent = content(org.orgUuid, { agent_id: null, agent_version: null })
        const minted = yield* mintIn(receiptContent)
        expect(minted.receipt_version).toBe("1.1")
        expect(minted.payload_hash).toBe(sha256Tagged(minted.signed_payload))
        expect(minted.signature).toMatch(/^ed25519:[A-Za-z0-9_-]{86}$/)
        expect(minted.public_key_id).toMatch(/^rk_[0-9a-f]{16}$/)
        expect(minted.timestamp_token).toBeTypeOf("string")
        expect(minted.verify_url).toBe(`${server.url}/api/v1/verify/action/${receiptContent.action_uuid}`)
        const payload = JSON.parse(minted.signed_payload)
        expect(Object.keys(payload).sort()).toEqual(
          [
            "receipt_version", "receipt_uuid", "receipt_status", "action_uuid", "org_uuid", "agent_id", "agent_version",
            "action_type", "action_details_hash", "instruction_hash", "model_id", "model_version", "outcome", "outcome_hash",
            "output_scan_flags", "policy_uuid", "approval", "parent_payload_hash", "agent_sequence", "previous_payload_hash",
            "created_at"
          ].sort()
        )
        expect(payload.agent_id).toBeNull()
        expect(payload.created_at).toBe(minted.created_at)
      })
    )

    it.effect("a second start finds the active key instead of creating another", () =>
      Effect.gen(function* () {
        const inserted = yield* onServer(insertActiveKeyIfNone({ publicKeyId: "rk_0000000000000000", publicKeyRaw: "AA", sealed: "x" }))
        expect(inserted).toBe(false)
      })
    )
  })

  it.describe("verify endpoints", () => {
    it.effect("answer valid with every check true, by action and by receipt", () =>
      Effect.gen(function* () {
        const minted = yield* mintFresh()
        const payload = JSON.parse(minted.signed_payload)
        const api = yield* client()
        for (const answered of [
          api.receiptsPublic.verifyAction({ params: { action_uuid: payload.action_uuid }, responseMode: "decoded-and-response" }),
          api.receiptsPublic.verifyReceipt({ params: { receipt_uuid: minted.receipt_uuid }, responseMode: "decoded-and-response" })
        ]) {
          const [verification, reply] = yield* answered
          expect(reply.status).toBe(200)
          expect(verification.valid).toBe(true)
          expect(verification.checks).toEqual({
            payload_hash: true,
            signature: true,
            timestamp_imprint: true,
            timestamp_signature: true,
            chain: true
          })
          expect(verification.receipt_uuid).toBe(minted.receipt_uuid)
          expect(verification.algorithm).toBe("Ed25519")
          expect(verification.public_key?.kid).toBe(minted.public_key_id)
          expect(verification.signed_payload).toEqual(payload)
          // request_id is outside the contract's schema: read it from the body as sent.
          expect(((yield* reply.json) as { request_id?: string }).request_id).toMatch(/^req_/)
        }
      })
    )

    it.effect("404 for an unknown action or receipt", () =>
      Effect.gen(function* () {
        const api = yield* client()
        expect((yield* api.receiptsPublic.verifyAction({ params: { action_uuid: "act_missing" }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* api.receiptsPublic.verifyReceipt({ params: { receipt_uuid: "rct_missing" }, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("checks the per-agent hash chain", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const agent = `chain-agent-${++agentCounter}`
        const first = yield* mintIn(content(org.orgUuid, { agent_id: agent }))
        const second = yield* mintIn(content(org.orgUuid, { agent_id: agent, agent_sequence: 2, previous_payload_hash: first.payload_hash }))
        const good = yield* verifyById(second.receipt_uuid)
        expect(good.checks.chain).toBe(true)
        expect(good.valid).toBe(true)

        const broken = yield* mintIn(content(org.orgUuid, { agent_id: agent, agent_sequence: 3, previous_payload_hash: first.payload_hash }))
        const bad = yield* verifyById(broken.receipt_uuid)
        expect(bad.checks.chain).toBe(false)
        expect(bad.checks.signature).toBe(true)
        expect(bad.valid).toBe(false)

        const gap = yield* mintIn(content(org.orgUuid, { agent_id: agent, agent_sequence: 9, previous_payload_hash: broken.payload_hash }))
        expect((yield* verifyById(gap.receipt_uuid)).checks.chain).toBe(false)
      })
    )
  })

  it.describe("offline verification", () => {
    it.effect("the portable verifier accepts a fetched receipt and rejects a one-byte change", () =>
      Effect.gen(function* () {
        const { receipt, key } = yield* fetchReceiptAndKey
        expect(key).toBeDefined()
        const input = {
          signed_payload: receipt.signed_payload,
          payload_hash: receipt.payload_hash,
          signature: receipt.signature,
          public_key: key!,
          timestamp_token: receipt.timestamp_token
        }
        const result = verifyReceipt(input)
        expect(result.errors).toEqual([])
        expect(result.valid).toBe(true)
        expect(result.checks.timestamp_imprint).toBe(true)

        const tampered = { ...receipt.signed_payload, action_type: String(receipt.signed_payload.action_type).replace(/^p/, "q") }
        expect(verifyReceipt({ ...input, signed_payload: tampered }).valid).toBe(false)
        // Same payload, signature with one character changed.
        const signature = receipt.signature
        const flipped = signature.slice(0, 20) + (signature[20] === "A" ? "B" : "A") + signature.slice(21)
        expect(verifyReceipt({ ...input, signature: flipped }).checks.signature).toBe(false)
      })
    )

    it.effect(
      "the CLI exits 0 on a real receipt and non-zero on a tampered one",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const { receipt } = yield* fetchReceiptAndKey
          const jwksUrl = `${server.url}/api/v1/.well-known/jwks.json`
          // Asynchronous: the server runs in this process and must keep answering the CLI's JWKS fetch.
          const cli = (file: string) =>
            Effect.promise(() =>
              promisify(execFile)("npx", ["tsx", "scripts/verify.ts", file, "--jwks", jwksUrl], { cwd: join(__dirname, "..") }).then(
                (result) => ({ code: 0, output: result.stdout + result.stderr }),
                (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout}${error.stderr}` })
              )
            )
          const good = yield* cli(writeTemp("receipt.json", JSON.stringify(receipt)))
          expect(good.code, good.output).toBe(0)
          const tampered = { ...receipt, signed_payload: { ...receipt.signed_payload, agent_sequence: 2 } }
          const bad = yield* cli(writeTemp("tampered.json", JSON.stringify(tampered)))
          expect(bad.code).not.toBe(0)
          expect(bad.output).toMatch(/payload_hash/)
        }),
      60_000
    )

    it.effect("OpenSSL verifies the timestamp token against the published TSA certificate", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const minted = yield* mintFresh()
        const [pem, pemReply] = yield* (yield* client()).receiptsPublic.tsaCertificate({ query: {}, responseMode: "decoded-and-response" })
        expect(pemReply.status).toBe(200)
        expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----/)
        // Raw fetch: the DER form is binary, which the contract's text answer would mangle.
        const der = yield* Effect.promise(() => fetch(`${server.url}/api/v1/tsa/certificate?format=der`))
        expect(der.status).toBe(200)
        const derBytes = Buffer.from(yield* Effect.promise(() => der.arrayBuffer()))
        const pemBody = pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "")
        expect(derBytes.toString("base64")).toBe(pemBody)

        const digestHex = minted.payload_hash.slice("sha256:".length)
        const verify = (digest: string) =>
          spawnSync(
            "openssl",
            [
              "ts", "-verify", "-digest", digest, "-sha256", "-token_in",
              "-in", writeTemp("token.der", Buffer.from(minted.timestamp_token!, "base64")),
              "-CAfile", writeTemp("tsa.pem", pem)
            ],
            { encoding: "utf8" }
          )
        const ok = verify(digestHex)
        expect(ok.stdout + ok.stderr).toContain("Verification: OK")
        const wrong = verify(digestHex.replace(/^./, (c) => (c === "0" ? "1" : "0")))
        expect(wrong.stdout + wrong.stderr).not.toContain("Verification: OK")
      })
    )
  })

  it.describe("key rotation", () => {
    it.effect("needs the admin key", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const reply = yield* (yield* client(org.key)).admin.rotateSigningKey({ responseMode: "response-only" })
        expect([401, 403]).toContain(reply.status)
      })
    )

    it.effect("keeps old receipts verifiable, signs new ones with the new key, publishes both", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const before = yield* mintFresh()
        const [rotated, rotatedReply] = yield* (yield* adminClient()).admin.rotateSigningKey({ responseMode: "decoded-and-response" })
        expect(rotatedReply.status).toBe(200)
        expect(rotated.previous_public_key_id).toBe(before.public_key_id)
        expect(rotated.public_key_id).not.toBe(before.public_key_id)
        expect(rotated.rotated_at).toBeTypeOf("string")

        const after = yield* mintFresh()
        expect(after.public_key_id).toBe(rotated.public_key_id)

        for (const receipt of [before, after]) {
          const verification = yield* verifyById(receipt.receipt_uuid)
          expect(verification.valid).toBe(true)
          expect(verification.public_key?.kid).toBe(receipt.public_key_id)
        }

        const api = yield* client()
        const jwks = yield* api.receiptsPublic.jwks({})
        const kids = jwks.keys.map((key) => key.kid)
        expect(kids[0]).toBe(after.public_key_id)
        expect(kids).toContain(before.public_key_id)
        expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", use: "sig", alg: "EdDSA", status: "active" })
        expect(jwks.keys.find((key) => key.kid === before.public_key_id)?.status).toBe("retired")

        const [did, didReply] = yield* api.receiptsPublic.didDocument({ responseMode: "decoded-and-response" })
        expect(didReply.status).toBe(200)
        const port = new URL(server.url).port
        expect(did.id).toBe(`did:web:127.0.0.1%3A${port}`)
        const methodIds = did.verificationMethod.map((method) => method.id)
        expect(methodIds).toContain(`${did.id}#${before.public_key_id}`)
        expect(methodIds).toContain(`${did.id}#${after.public_key_id}`)
        expect(did.assertionMethod).toEqual(methodIds)
        expect(did.verificationMethod[0]).toMatchObject({ type: "Ed25519VerificationKey2020", controller: did.id })
        // The multibase key is the same raw key the JWKS publishes.
        for (const method of did.verificationMethod) {
          const kid = method.id.split("#")[1]
          const jwk = jwks.keys.find((key) => key.kid === kid)
          const raw = Buffer.from(jwk!.x, "base64url")
          expect(method.publicKeyMultibase).toBe(ed25519Multibase(raw))
        }
        expect(did.service).toEqual([expect.objectContaining({ serviceEndpoint: server.url })])

        const audit = yield* onServer(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql`SELECT org_uuid, target FROM audit_log WHERE event = 'signing_key.rotated'`
          })
        )
        expect(audit).toContainEqual({ org_uuid: null, target: after.public_key_id })
      })
    )
  })

  it.describe("rotation seen by another process", () => {
    // A second services stack on the same Postgres and Redis stands in for another gateway process.
    it.effect.skipIf(!process.env.REDIS_URL)("re-reads the active key after the announcement", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        // Built in the test's scope, closed when the test ends.
        const second = yield* Layer.build(servicesLayer(server.config))
        const mintElsewhere = () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql.withTransaction(mintAndStore(content(org.orgUuid, { agent_id: `agent-${++agentCounter}` })))
          }).pipe(Effect.provide(second))
        const before = yield* mintElsewhere()
        const [rotated, rotatedReply] = yield* (yield* adminClient()).admin.rotateSigningKey({ responseMode: "decoded-and-response" })
        expect(rotatedReply.status).toBe(200)
        expect(rotated.previous_public_key_id).toBe(before.public_key_id)
        let after = yield* mintElsewhere()
        for (let attempt = 0; attempt < 40 && after.public_key_id !== rotated.public_key_id; attempt++) {
          yield* Effect.sleep("50 millis")
          after = yield* mintElsewhere()
        }
        expect(after.public_key_id).toBe(rotated.public_key_id)
        expect((yield* verifyById(after.receipt_uuid)).valid).toBe(true)
      })
    )
  })

  it.describe("GET /api/v1/receipts/{receipt_uuid}", () => {
    it.effect("returns the organization's own receipt and 404 to another organization", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const minted = yield* mintFresh()
        const params = { receipt_uuid: minted.receipt_uuid }
        const [own, ownReply] = yield* (yield* client(org.key)).receipts.get({ params, responseMode: "decoded-and-response" })
        expect(ownReply.status).toBe(200)
        expect(own).toMatchObject({
          receipt_uuid: minted.receipt_uuid,
          payload_hash: minted.payload_hash,
          signature: minted.signature,
          public_key_id: minted.public_key_id,
          timestamp_token: minted.timestamp_token,
          verify_url: minted.verify_url,
          org_uuid: org.orgUuid
        })
        expect(own.signed_payload).toEqual(JSON.parse(minted.signed_payload))

        const foreign = yield* (yield* client(other.key)).receipts.get({ params, responseMode: "response-only" })
        expect(foreign.status).toBe(404)
        expect((yield* (yield* client(org.key)).receipts.get({ params: { receipt_uuid: "rct_nothing" }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* (yield* client()).receipts.get({ params, responseMode: "response-only" })).status).toBe(401)

        const [narrow, narrowReply] = yield* (yield* client(org.token)).apiKeys.create({
          payload: { name: "actions only", scopes: ["actions:read"] },
          responseMode: "decoded-and-response"
        })
        expect(narrowReply.status).toBe(201)
        const refused = yield* (yield* client(narrow.key)).receipts.get({ params, responseMode: "response-only" })
        expect(refused.status).toBe(403)
      })
    )
  })
})

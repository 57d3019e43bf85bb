/**
 * Receipts end to end: minted through the ReceiptMinter port (as actions will),
 * then verified over HTTP, by the portable verifier, by the CLI and by OpenSSL.
 * The server and the test share one services context, hence one database.
 */
import { execFile, spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { type Ed25519Jwk, verifyReceipt } from "../protocol/verifier/index.js"
import { servicesLayer } from "../src/app.js"
import { ed25519Multibase } from "../src/platform/did-web.js"
import { newId } from "../src/platform/ids.js"
import { type MintedReceipt, type ReceiptContent, ReceiptMinter } from "../src/receipts/ports.js"
import { sha256Tagged } from "../src/receipts/signing.js"
import { insertActiveKeyIfNone, receiptByUuid } from "../src/receipts/store.js"
import { call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const ADMIN = { "x-admin-key": "test-admin-key" }

const content = (orgUuid: string, overrides: Partial<ReceiptContent> = {}): ReceiptContent => ({
  receipt_status: "notarized",
  action_uuid: newId("act"),
  org_uuid: orgUuid,
  agent_id: "billing-bot",
  agent_version: "2.1.0",
  action_type: "payment.transfer",
  action_details_hash: sha256Tagged("transfer 10 EUR to ACME"),
  instruction_hash: null,
  model_id: "gpt-x",
  model_version: null,
  outcome: "completed",
  outcome_hash: sha256Tagged("done"),
  output_scan_flags: null,
  policy_uuid: null,
  approval: null,
  parent_payload_hash: null,
  agent_sequence: 1,
  previous_payload_hash: null,
  ...overrides
})

/** The server and the test share its services context (and so its database), so tests can mint directly. */
const harness = useServer()
const org = useFixture(() => registerOrg(harness.url, "Receipts Org"))
const other = useFixture(() => registerOrg(harness.url, "Other Org"))
let agentCounter = 0

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
  harness.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.withTransaction(mintAndStore(receiptContent))
    })
  )

/** A first receipt in a fresh (org, agent) chain. */
const mintFresh = (overrides: Partial<ReceiptContent> = {}) =>
  mintIn(content(org.orgUuid, { agent_id: `agent-${++agentCounter}`, ...overrides }))

const workDir = mkdtempSync(join(tmpdir(), "receipts-e2e-"))
const writeTemp = (name: string, data: string | Uint8Array) => {
  const path = join(workDir, name)
  writeFileSync(path, data)
  return path
}

describe("minting", () => {
  it("writes nothing when the caller's transaction rolls back", async () => {
    const receiptContent = content(org.orgUuid, { agent_id: "rollback-agent" })
    const outcome = await harness.run(
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
    const reply = await call(harness.url, "GET", `/api/v1/verify/action/${receiptContent.action_uuid}`)
    expect(reply.status).toBe(404)
    expect(reply.body.code).toBe("NOT_FOUND")
  })

  it("signs a payload with every field present and answers the contract's fields", async () => {
    const receiptContent = content(org.orgUuid, { agent_id: null, agent_version: null })
    const minted = await mintIn(receiptContent)
    expect(minted.receipt_version).toBe("1.1")
    expect(minted.payload_hash).toBe(sha256Tagged(minted.signed_payload))
    expect(minted.signature).toMatch(/^ed25519:[A-Za-z0-9_-]{86}$/)
    expect(minted.public_key_id).toMatch(/^rk_[0-9a-f]{16}$/)
    expect(minted.timestamp_token).toBeTypeOf("string")
    expect(minted.verify_url).toBe(`${harness.url}/api/v1/verify/action/${receiptContent.action_uuid}`)
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

  it("a second start finds the active key instead of creating another", async () => {
    const inserted = await harness.run(insertActiveKeyIfNone({ publicKeyId: "rk_0000000000000000", publicKeyRaw: "AA", sealed: "x" }))
    expect(inserted).toBe(false)
  })
})

describe("verify endpoints", () => {
  it("answer valid with every check true, by action and by receipt", async () => {
    const minted = await mintFresh()
    const payload = JSON.parse(minted.signed_payload)
    for (const path of [`/api/v1/verify/action/${payload.action_uuid}`, `/api/v1/verify/${minted.receipt_uuid}`]) {
      const reply = await call(harness.url, "GET", path)
      expect(reply.status).toBe(200)
      expect(reply.body.valid).toBe(true)
      expect(reply.body.checks).toEqual({
        payload_hash: true,
        signature: true,
        timestamp_imprint: true,
        timestamp_signature: true,
        chain: true
      })
      expect(reply.body.receipt_uuid).toBe(minted.receipt_uuid)
      expect(reply.body.algorithm).toBe("Ed25519")
      expect(reply.body.public_key.kid).toBe(minted.public_key_id)
      expect(reply.body.signed_payload).toEqual(payload)
      expect(reply.body.request_id).toMatch(/^req_/)
    }
  })

  it("404 for an unknown action or receipt", async () => {
    expect((await call(harness.url, "GET", "/api/v1/verify/action/act_missing")).status).toBe(404)
    expect((await call(harness.url, "GET", "/api/v1/verify/rct_missing")).status).toBe(404)
  })

  it("checks the per-agent hash chain", async () => {
    const agent = `chain-agent-${++agentCounter}`
    const first = await mintIn(content(org.orgUuid, { agent_id: agent }))
    const second = await mintIn(content(org.orgUuid, { agent_id: agent, agent_sequence: 2, previous_payload_hash: first.payload_hash }))
    const good = await call(harness.url, "GET", `/api/v1/verify/${second.receipt_uuid}`)
    expect(good.body.checks.chain).toBe(true)
    expect(good.body.valid).toBe(true)

    const broken = await mintIn(
      content(org.orgUuid, { agent_id: agent, agent_sequence: 3, previous_payload_hash: first.payload_hash })
    )
    const bad = await call(harness.url, "GET", `/api/v1/verify/${broken.receipt_uuid}`)
    expect(bad.body.checks.chain).toBe(false)
    expect(bad.body.checks.signature).toBe(true)
    expect(bad.body.valid).toBe(false)

    const gap = await mintIn(content(org.orgUuid, { agent_id: agent, agent_sequence: 9, previous_payload_hash: broken.payload_hash }))
    expect((await call(harness.url, "GET", `/api/v1/verify/${gap.receipt_uuid}`)).body.checks.chain).toBe(false)
  })
})

describe("offline verification", () => {
  const fetchReceiptAndKey = async () => {
    const minted = await mintFresh()
    const receipt = (await call(harness.url, "GET", `/api/v1/verify/${minted.receipt_uuid}`)).body
    const jwks = (await call(harness.url, "GET", "/api/v1/.well-known/jwks.json")).body
    const key = jwks.keys.find((candidate: { kid: string }) => candidate.kid === receipt.public_key_id) as Ed25519Jwk
    return { receipt, key }
  }

  it("the portable verifier accepts a fetched receipt and rejects a one-byte change", async () => {
    const { receipt, key } = await fetchReceiptAndKey()
    expect(key).toBeDefined()
    const input = {
      signed_payload: receipt.signed_payload,
      payload_hash: receipt.payload_hash,
      signature: receipt.signature,
      public_key: key,
      timestamp_token: receipt.timestamp_token
    }
    const result = verifyReceipt(input)
    expect(result.errors).toEqual([])
    expect(result.valid).toBe(true)
    expect(result.checks.timestamp_imprint).toBe(true)

    const tampered = { ...receipt.signed_payload, action_type: receipt.signed_payload.action_type.replace(/^p/, "q") }
    expect(verifyReceipt({ ...input, signed_payload: tampered }).valid).toBe(false)
    // Same payload, signature with one character changed.
    const signature: string = receipt.signature
    const flipped = signature.slice(0, 20) + (signature[20] === "A" ? "B" : "A") + signature.slice(21)
    expect(verifyReceipt({ ...input, signature: flipped }).checks.signature).toBe(false)
  })

  it("the CLI exits 0 on a real receipt and non-zero on a tampered one", async () => {
    const { receipt } = await fetchReceiptAndKey()
    const jwksUrl = `${harness.url}/api/v1/.well-known/jwks.json`
    // Asynchronous: the server runs in this process and must keep answering the CLI's JWKS fetch.
    const cli = (file: string) =>
      promisify(execFile)("npx", ["tsx", "scripts/verify.ts", file, "--jwks", jwksUrl], { cwd: join(__dirname, "..") }).then(
        (result) => ({ code: 0, output: result.stdout + result.stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout}${error.stderr}` })
      )
    const good = await cli(writeTemp("receipt.json", JSON.stringify(receipt)))
    expect(good.code, good.output).toBe(0)
    const tampered = { ...receipt, signed_payload: { ...receipt.signed_payload, agent_sequence: 2 } }
    const bad = await cli(writeTemp("tampered.json", JSON.stringify(tampered)))
    expect(bad.code).not.toBe(0)
    expect(bad.output).toMatch(/payload_hash/)
  }, 60_000)

  it("OpenSSL verifies the timestamp token against the published TSA certificate", async () => {
    const minted = await mintFresh()
    const pem = await call(harness.url, "GET", "/api/v1/tsa/certificate")
    expect(pem.status).toBe(200)
    expect(pem.text).toMatch(/^-----BEGIN CERTIFICATE-----/)
    const der = await fetch(`${harness.url}/api/v1/tsa/certificate?format=der`)
    expect(der.status).toBe(200)
    const derBytes = Buffer.from(await der.arrayBuffer())
    const pemBody = pem.text.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "")
    expect(derBytes.toString("base64")).toBe(pemBody)

    const digestHex = minted.payload_hash.slice("sha256:".length)
    const verify = (digest: string) =>
      spawnSync(
        "openssl",
        [
          "ts", "-verify", "-digest", digest, "-sha256", "-token_in",
          "-in", writeTemp("token.der", Buffer.from(minted.timestamp_token!, "base64")),
          "-CAfile", writeTemp("tsa.pem", pem.text)
        ],
        { encoding: "utf8" }
      )
    const ok = verify(digestHex)
    expect(ok.stdout + ok.stderr).toContain("Verification: OK")
    const wrong = verify(digestHex.replace(/^./, (c) => (c === "0" ? "1" : "0")))
    expect(wrong.stdout + wrong.stderr).not.toContain("Verification: OK")
  })
})

describe("key rotation", () => {
  it("needs the admin key", async () => {
    const reply = await call(harness.url, "POST", "/api/v1/admin/signing-keys/rotate", { token: org.key })
    expect([401, 403]).toContain(reply.status)
  })

  it("keeps old receipts verifiable, signs new ones with the new key, publishes both", async () => {
    const before = await mintFresh()
    const rotated = await call(harness.url, "POST", "/api/v1/admin/signing-keys/rotate", { headers: ADMIN })
    expect(rotated.status).toBe(200)
    expect(rotated.body.previous_public_key_id).toBe(before.public_key_id)
    expect(rotated.body.public_key_id).not.toBe(before.public_key_id)
    expect(rotated.body.rotated_at).toBeTypeOf("string")

    const after = await mintFresh()
    expect(after.public_key_id).toBe(rotated.body.public_key_id)

    for (const receipt of [before, after]) {
      const reply = await call(harness.url, "GET", `/api/v1/verify/${receipt.receipt_uuid}`)
      expect(reply.body.valid).toBe(true)
      expect(reply.body.public_key.kid).toBe(receipt.public_key_id)
    }

    const jwks = (await call(harness.url, "GET", "/api/v1/.well-known/jwks.json")).body
    const kids = jwks.keys.map((key: { kid: string }) => key.kid)
    expect(kids[0]).toBe(after.public_key_id)
    expect(kids).toContain(before.public_key_id)
    expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", use: "sig", alg: "EdDSA", status: "active" })
    expect(jwks.keys.find((key: { kid: string }) => key.kid === before.public_key_id).status).toBe("retired")

    const did = await call(harness.url, "GET", "/.well-known/did.json")
    expect(did.status).toBe(200)
    const port = new URL(harness.url).port
    expect(did.body.id).toBe(`did:web:127.0.0.1%3A${port}`)
    const methodIds = did.body.verificationMethod.map((method: { id: string }) => method.id)
    expect(methodIds).toContain(`${did.body.id}#${before.public_key_id}`)
    expect(methodIds).toContain(`${did.body.id}#${after.public_key_id}`)
    expect(did.body.assertionMethod).toEqual(methodIds)
    expect(did.body.verificationMethod[0]).toMatchObject({ type: "Ed25519VerificationKey2020", controller: did.body.id })
    // The multibase key is the same raw key the JWKS publishes.
    for (const method of did.body.verificationMethod) {
      const kid = method.id.split("#")[1]
      const jwk = jwks.keys.find((key: { kid: string }) => key.kid === kid)
      const raw = Buffer.from(jwk.x, "base64url")
      expect(method.publicKeyMultibase).toBe(ed25519Multibase(raw))
    }
    expect(did.body.service).toEqual([expect.objectContaining({ serviceEndpoint: harness.url })])

    const audit = await harness.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT org_uuid, target FROM audit_log WHERE event = 'signing_key.rotated'`
      })
    )
    expect(audit).toContainEqual({ org_uuid: null, target: after.public_key_id })
  })
})

describe("rotation seen by another process", () => {
  // A second services stack on the same Postgres and Redis stands in for another gateway process.
  it.skipIf(!process.env.REDIS_URL)("re-reads the active key after the announcement", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const second = await Effect.runPromise(Layer.buildWithScope(servicesLayer(harness.config), scope))
      const mintElsewhere = () =>
        Effect.runPromise(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql.withTransaction(mintAndStore(content(org.orgUuid, { agent_id: `agent-${++agentCounter}` })))
          }).pipe(Effect.provide(second))
        )
      const before = await mintElsewhere()
      const rotated = await call(harness.url, "POST", "/api/v1/admin/signing-keys/rotate", { headers: ADMIN })
      expect(rotated.status).toBe(200)
      expect(rotated.body.previous_public_key_id).toBe(before.public_key_id)
      let after = await mintElsewhere()
      for (let attempt = 0; attempt < 40 && after.public_key_id !== rotated.body.public_key_id; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        after = await mintElsewhere()
      }
      expect(after.public_key_id).toBe(rotated.body.public_key_id)
      expect((await call(harness.url, "GET", `/api/v1/verify/${after.receipt_uuid}`)).body.valid).toBe(true)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})

describe("GET /api/v1/receipts/{receipt_uuid}", () => {
  it("returns the organization's own receipt and 404 to another organization", async () => {
    const minted = await mintFresh()
    const own = await call(harness.url, "GET", `/api/v1/receipts/${minted.receipt_uuid}`, { token: org.key })
    expect(own.status).toBe(200)
    expect(own.body).toMatchObject({
      receipt_uuid: minted.receipt_uuid,
      payload_hash: minted.payload_hash,
      signature: minted.signature,
      public_key_id: minted.public_key_id,
      timestamp_token: minted.timestamp_token,
      verify_url: minted.verify_url,
      org_uuid: org.orgUuid
    })
    expect(own.body.signed_payload).toEqual(JSON.parse(minted.signed_payload))

    const foreign = await call(harness.url, "GET", `/api/v1/receipts/${minted.receipt_uuid}`, { token: other.key })
    expect(foreign.status).toBe(404)
    expect((await call(harness.url, "GET", "/api/v1/receipts/rct_nothing", { token: org.key })).status).toBe(404)
    expect((await call(harness.url, "GET", `/api/v1/receipts/${minted.receipt_uuid}`)).status).toBe(401)

    const narrow = await call(harness.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "actions only", scopes: ["actions:read"] } })
    expect(narrow.status).toBe(201)
    const refused = await call(harness.url, "GET", `/api/v1/receipts/${minted.receipt_uuid}`, { token: narrow.body.key })
    expect(refused.status).toBe(403)
  })
})

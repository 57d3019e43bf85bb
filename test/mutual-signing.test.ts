/**
 * Mutual signing end to end (spec 001): an organization's agent asks a counterparty of another
 * organization to co-sign an action; the counterparty's DID document is served over HTTPS by
 * its own host (a local TLS server here) and it signs with that key using @noble/ed25519. Every
 * error of the spec's list, in its order, and expiry under a shortened lifetime.
 */
import { createHash } from "node:crypto"
import * as ed from "@noble/ed25519"
import bs58 from "bs58"
import canonicalize from "canonicalize"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { startServer, type TestServer } from "./support/server.js"
import { useTlsServer } from "./support/tls.js"

const multibase = (publicKey: Uint8Array) => `z${bs58.encode(Buffer.concat([Buffer.from([0xed, 0x01]), publicKey]))}`
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`
const signature = async (bytes: Uint8Array, secretKey: Uint8Array) => `ed25519:${Buffer.from(await ed.signAsync(bytes, secretKey)).toString("base64url")}`

/** The counterparty's own key and host: its DID documents, served over HTTPS. */
const counterpartyKey = ed.utils.randomSecretKey()
const otherKey = ed.utils.randomSecretKey()
const documents = new Map<string, object>()
const peer = useTlsServer((req, res) => {
  const document = documents.get(req.url ?? "")
  if (document === undefined) res.writeHead(404).end()
  else res.setHeader("content-type", "application/json").end(JSON.stringify(document))
})
const didAt = (path: string) => `did:web:127.0.0.1%3A${peer.port}:${path.split("/").join(":")}`
const publish = (path: string, methods: Array<object>) => {
  const did = didAt(path)
  documents.set(`/${path}/did.json`, { "@context": ["https://www.w3.org/ns/did/v1"], id: did, verificationMethod: methods.map((method) => ({ controller: did, ...method })) })
  return did
}

interface Setup {
  readonly server: TestServer
  readonly initiator: Org
  readonly counterparty: Org
  readonly bankDid: string
  readonly emptyDid: string
  readonly jwkDid: string
}

const setUp = async (env: Record<string, string> = {}): Promise<Setup> => {
  const caFile = `/tmp/mutual-sign-ca-${process.pid}.pem`
  await import("node:fs").then((fs) => fs.writeFileSync(caFile, peer.certPem))
  const server = await startServer({ OUTBOUND_CA_FILE: caFile, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", ...env })
  const bankDid = publish("partners/bank", [
    { id: `${didAt("partners/bank")}#key-1`, type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(await ed.getPublicKeyAsync(counterpartyKey)) }
  ])
  const emptyDid = publish("partners/empty", [])
  const jwkDid = publish("partners/jwk", [{ id: `${didAt("partners/jwk")}#key-1`, type: "JsonWebKey2020", publicKeyJwk: { kty: "OKP", crv: "Ed25519", x: "AAAA" } }])
  return { server, initiator: await registerOrg(server.url, "Initiator"), counterparty: await registerOrg(server.url, "Counterparty Bank"), bankDid, emptyDid, jwkDid }
}

const setup = useFixture(
  () => setUp(),
  (s) => s.server.stop()
)

let counter = 0
/** A registered agent of the initiator and one of its authorized actions. */
const actionOf = async (s: Setup, agentId: string | null = "register") => {
  let agent = agentId
  if (agentId === "register") {
    agent = `signer-${process.pid}-${++counter}`
    expect((await call(s.server.url, "POST", "/api/v1/agents", { token: s.initiator.key, body: { agent_slug: agent, name: "Signer" } })).status).toBe(201)
  }
  const action = await call(s.server.url, "POST", "/api/v1/actions", {
    token: s.initiator.key,
    body: { action_type: "payment.transfer", details: "pay 1,000,000 EUR to the bank", instruction_hash: sha256("instructions"), model_id: "model-x", ...(agent ? { agent_id: agent } : {}) }
  })
  expect(action.status).toBe(201)
  return { actionUuid: action.body.action_uuid as string, agent }
}
const path = (actionUuid: string, step: string) => `/api/v1/actions/${actionUuid}/mutual-sign/${step}`
const request = (s: Setup, actionUuid: string, counterpartyDid: string, token = s.initiator.key) =>
  call(s.server.url, "POST", path(actionUuid, "request"), { token, body: { counterparty_did: counterpartyDid } })
const complete = (s: Setup, actionUuid: string, body: object) => call(s.server.url, "POST", path(actionUuid, "complete"), { body })

describe("a mutual signature between two organizations", () => {
  it("request → pending → counterparty signs with its DID key → one sealed receipt", async () => {
    const s = setup
    const { actionUuid, agent } = await actionOf(s)
    const requested = await request(s, actionUuid, s.bankDid)
    expect(requested.status).toBe(200)
    expect(requested.body).toMatchObject({ action_uuid: actionUuid, status: "pending", counterparty_did: s.bankDid })
    const hours = (Date.parse(requested.body.expires_at) - Date.parse(requested.body.requested_at)) / 3_600_000
    expect(hours).toBeCloseTo(24, 5)

    // What the counterparty sees, without a key: the payload, its hash and the initiator's signature.
    const pending = await call(s.server.url, "GET", path(actionUuid, "pending"))
    expect(pending.status).toBe(200)
    const port = new URL(s.server.url).port
    expect(pending.body).toMatchObject({ status: "pending", initiator_did: `did:web:127.0.0.1%3A${port}:agents:${agent}`, counterparty_did: s.bankDid })
    expect(pending.body.payload).toEqual({
      action_uuid: actionUuid,
      org_uuid: s.initiator.orgUuid,
      agent_id: agent,
      action_type: "payment.transfer",
      action_details_hash: sha256("pay 1,000,000 EUR to the bank"),
      instruction_hash: sha256("instructions"),
      model_id: "model-x",
      created_at: expect.any(String)
    })
    const jcs = canonicalize(pending.body.payload)!
    const bytes = new TextEncoder().encode(jcs)
    expect(pending.body.payload_hash).toBe(sha256(jcs))
    // The initiator's signature verifies with the key of the initiator's own DID document.
    const initiatorDoc = await call(s.server.url, "GET", `/agents/${agent}/did.json`)
    const initiatorKey = bs58.decode(initiatorDoc.body.verificationMethod[0].publicKeyMultibase.slice(1)).slice(2)
    expect(await ed.verifyAsync(Buffer.from(pending.body.initiator_signature.slice(8), "base64url"), bytes, initiatorKey)).toBe(true)

    const counterpartySignature = await signature(bytes, counterpartyKey)
    const completed = await complete(s, actionUuid, { did: s.bankDid, signature: counterpartySignature, signed_payload_hash: pending.body.payload_hash })
    expect(completed.status).toBe(200)
    const combined = `sha256:${createHash("sha256").update(jcs + pending.body.initiator_signature + counterpartySignature).digest("hex")}`
    expect(completed.body).toMatchObject({ action_uuid: actionUuid, status: "completed", combined_receipt_hash: combined })

    const receipt = await call(s.server.url, "GET", path(actionUuid, "receipt"))
    expect(receipt.status).toBe(200)
    expect(receipt.body).toMatchObject({
      status: "completed",
      initiator_did: pending.body.initiator_did,
      counterparty_did: s.bankDid,
      payload: pending.body.payload,
      payload_hash: pending.body.payload_hash,
      initiator_signature: pending.body.initiator_signature,
      counterparty_signature: counterpartySignature,
      combined_receipt_hash: combined,
      sealed_at: completed.body.sealed_at
    })
    expect(Date.parse(receipt.body.counterparty_signed_at)).not.toBeNaN()

    // Sealed: nothing more can happen to it.
    expect((await complete(s, actionUuid, { did: s.bankDid, signature: counterpartySignature, signed_payload_hash: pending.body.payload_hash })).body.code).toBe(
      "MUTUAL_SIGN_NOT_PENDING"
    )
    expect((await call(s.server.url, "POST", path(actionUuid, "reject"), { body: {} })).body.code).toBe("MUTUAL_SIGN_NOT_PENDING")
  })
})

describe("request errors", () => {
  it("404 for unknown and other organizations' actions, NO_AGENT, NO_DID_KEY, ALREADY_REQUESTED, 422 for a DID that is not did:web", async () => {
    const s = setup
    expect((await request(s, "act_nothing", s.bankDid)).status).toBe(404)
    const { actionUuid } = await actionOf(s)
    const foreign = await request(s, actionUuid, s.bankDid, s.counterparty.key)
    expect(foreign.status).toBe(404)
    expect(foreign.body.code).toBe("NOT_FOUND")

    const noAgent = await actionOf(s, null)
    expect((await request(s, noAgent.actionUuid, s.bankDid)).body).toMatchObject({ code: "MUTUAL_SIGN_NO_AGENT" })
    const unregistered = await actionOf(s, `nobody-${process.pid}`)
    expect((await request(s, unregistered.actionUuid, s.bankDid)).status).toBe(400)
    // Another organization's registered agent never signs for this one.
    const theirs = `theirs-${process.pid}`
    expect((await call(s.server.url, "POST", "/api/v1/agents", { token: s.counterparty.key, body: { agent_slug: theirs, name: "Theirs" } })).status).toBe(201)
    const borrowed = await actionOf(s, theirs)
    expect((await request(s, borrowed.actionUuid, s.bankDid)).body).toMatchObject({ code: "MUTUAL_SIGN_NO_AGENT" })

    const keyless = await actionOf(s)
    await s.server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM agent_dids WHERE agent_slug = ${keyless.agent}`
      })
    )
    const noKey = await request(s, keyless.actionUuid, s.bankDid)
    expect(noKey.status).toBe(400)
    expect(noKey.body.code).toBe("MUTUAL_SIGN_NO_DID_KEY")

    expect((await request(s, actionUuid, s.bankDid)).status).toBe(200)
    const again = await request(s, actionUuid, s.bankDid)
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("MUTUAL_SIGN_ALREADY_REQUESTED")

    const fresh = await actionOf(s)
    for (const did of ["did:key:z6Mkabc", "https://bank.example", ""]) {
      const bad = await request(s, fresh.actionUuid, did)
      expect(bad.status, did).toBe(422)
      expect(bad.body.code).toBe("VALIDATION_ERROR")
    }
  })
})

describe("complete errors, in the spec's order", () => {
  const pendingFor = async (s: Setup, counterpartyDid: string) => {
    const { actionUuid } = await actionOf(s)
    expect((await request(s, actionUuid, counterpartyDid)).status).toBe(200)
    const pending = (await call(s.server.url, "GET", path(actionUuid, "pending"))).body
    const bytes = new TextEncoder().encode(canonicalize(pending.payload)!)
    return { actionUuid, pending, bytes }
  }

  it("NOT_FOUND, DID_MISMATCH before the signature, INVALID_SIGNATURE before the hash, PAYLOAD_MISMATCH", async () => {
    const s = setup
    const noRequest = await actionOf(s)
    const signed = await signature(new TextEncoder().encode("x"), counterpartyKey)
    expect((await complete(s, noRequest.actionUuid, { did: s.bankDid, signature: signed, signed_payload_hash: sha256("x") })).status).toBe(404)

    const { actionUuid, pending, bytes } = await pendingFor(s, s.bankDid)
    const good = await signature(bytes, counterpartyKey)
    const byOther = await signature(bytes, otherKey)

    // A wrong DID with a wrong signature and hash: the DID is checked first.
    const mismatch = await complete(s, actionUuid, { did: s.emptyDid, signature: byOther, signed_payload_hash: sha256("other") })
    expect(mismatch.status).toBe(403)
    expect(mismatch.body.code).toBe("MUTUAL_SIGN_DID_MISMATCH")
    // The right DID, a signature by another key and a wrong hash: the signature is checked before the hash.
    const invalid = await complete(s, actionUuid, { did: s.bankDid, signature: byOther, signed_payload_hash: sha256("other") })
    expect(invalid.status).toBe(400)
    expect(invalid.body.code).toBe("MUTUAL_SIGN_INVALID_SIGNATURE")
    const mismatchedHash = await complete(s, actionUuid, { did: s.bankDid, signature: good, signed_payload_hash: sha256("other") })
    expect(mismatchedHash.status).toBe(400)
    expect(mismatchedHash.body.code).toBe("MUTUAL_SIGN_PAYLOAD_MISMATCH")
    // Still pending after every refusal; the receipt is not there yet.
    const early = await call(s.server.url, "GET", path(actionUuid, "receipt"))
    expect(early.status).toBe(400)
    expect(early.body.code).toBe("MUTUAL_SIGN_NOT_COMPLETED")
    expect((await complete(s, actionUuid, { did: s.bankDid, signature: good, signed_payload_hash: pending.payload_hash })).status).toBe(200)
  })

  it("DID_NO_VERIFICATION_METHOD and DID_UNSUPPORTED_KEY_FORMAT from the counterparty's document", async () => {
    const s = setup
    const empty = await pendingFor(s, s.emptyDid)
    const signedEmpty = await signature(empty.bytes, counterpartyKey)
    const noMethod = await complete(s, empty.actionUuid, { did: s.emptyDid, signature: signedEmpty, signed_payload_hash: empty.pending.payload_hash })
    expect(noMethod.status).toBe(400)
    expect(noMethod.body.code).toBe("DID_NO_VERIFICATION_METHOD")

    const jwk = await pendingFor(s, s.jwkDid)
    const unsupported = await complete(s, jwk.actionUuid, { did: s.jwkDid, signature: await signature(jwk.bytes, counterpartyKey), signed_payload_hash: jwk.pending.payload_hash })
    expect(unsupported.status).toBe(400)
    expect(unsupported.body.code).toBe("DID_UNSUPPORTED_KEY_FORMAT")
  })

  it("a counterparty that is one of our agents is checked against its key without a network call", async () => {
    const s = setup
    const local = `bank-agent-${process.pid}`
    expect((await call(s.server.url, "POST", "/api/v1/agents", { token: s.counterparty.key, body: { agent_slug: local, name: "Bank agent" } })).status).toBe(201)
    const localDid = `did:web:127.0.0.1%3A${new URL(s.server.url).port}:agents:${local}`
    const { actionUuid, pending, bytes } = await pendingFor(s, localDid)
    // Only the bank's server holds that key: any other signature is refused, by the key of its document.
    const refused = await complete(s, actionUuid, { did: localDid, signature: await signature(bytes, counterpartyKey), signed_payload_hash: pending.payload_hash })
    expect(refused.status).toBe(400)
    expect(refused.body.code).toBe("MUTUAL_SIGN_INVALID_SIGNATURE")
  })
})

describe("reject", () => {
  it("stores the reason (\"\" without one) and closes the request", async () => {
    const s = setup
    const { actionUuid } = await actionOf(s)
    expect((await request(s, actionUuid, s.bankDid)).status).toBe(200)
    const rejected = await call(s.server.url, "POST", path(actionUuid, "reject"), {})
    expect(rejected.status).toBe(200)
    expect(rejected.body).toMatchObject({ action_uuid: actionUuid, status: "rejected", reason: "" })
    expect((await call(s.server.url, "GET", path(actionUuid, "pending"))).body.status).toBe("rejected")
    const late = await complete(s, actionUuid, { did: s.bankDid, signature: await signature(new Uint8Array(1), counterpartyKey), signed_payload_hash: sha256("x") })
    expect(late.body.code).toBe("MUTUAL_SIGN_NOT_PENDING")

    const other = await actionOf(s)
    await request(s, other.actionUuid, s.bankDid)
    const withReason = await call(s.server.url, "POST", path(other.actionUuid, "reject"), { body: { reason: "amount too high" } })
    expect(withReason.body).toMatchObject({ status: "rejected", reason: "amount too high" })
    expect((await call(s.server.url, "POST", path("act_nothing", "reject"), { body: {} })).status).toBe(404)
    expect((await call(s.server.url, "GET", path("act_nothing", "pending"))).status).toBe(404)
  })
})

describe("expiry", () => {
  const short = useFixture(
    () => setUp({ MUTUAL_SIGN_TTL_MS: "400" }),
    (s) => s.server.stop()
  )

  it("after the lifetime, complete answers 410 (before the DID check), pending shows expired, reject is refused", async () => {
    const s = short
    const { actionUuid } = await actionOf(s)
    const requested = await request(s, actionUuid, s.bankDid)
    expect(requested.status).toBe(200)
    const pending = (await call(s.server.url, "GET", path(actionUuid, "pending"))).body
    const bytes = new TextEncoder().encode(canonicalize(pending.payload)!)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const expired = await complete(s, actionUuid, { did: s.emptyDid, signature: await signature(bytes, counterpartyKey), signed_payload_hash: pending.payload_hash })
    expect(expired.status).toBe(410)
    expect(expired.body.code).toBe("MUTUAL_SIGN_EXPIRED")
    expect((await call(s.server.url, "GET", path(actionUuid, "pending"))).body.status).toBe("expired")
    expect((await call(s.server.url, "POST", path(actionUuid, "reject"), { body: {} })).body.code).toBe("MUTUAL_SIGN_NOT_PENDING")
  })
})

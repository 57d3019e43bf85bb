/**
 * Verifiable credentials (spec 001): our credentials verify with Digital Bazaar's `@digitalbazaar/vc`
 * and `@digitalbazaar/ed25519-signature-2020` (a document loader serving the W3C contexts bundled
 * with those libraries, and our context, DID documents and status lists from the test server);
 * after revocation `@digitalbazaar/vc-status-list` says revoked; tampering fails; reissues on
 * capability and version changes; the verify endpoint's five checks; revocation rules.
 */
import { gunzipSync } from "node:zlib"
import { Ed25519Signature2020 } from "@digitalbazaar/ed25519-signature-2020"
import * as vc from "@digitalbazaar/vc"
import { checkStatus } from "@digitalbazaar/vc-status-list"
import * as statusListContext from "@digitalbazaar/vc-status-list-context"
import * as credentialsContext from "credentials-context"
import * as ed25519Context from "ed25519-signature-2020-context"
import { describe, expect, it } from "vitest"
import { CREDENTIALS_V1, STATUS_LIST_2021_V1 } from "../src/credentials/linked-data.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "VC Org"))
const other = useFixture(() => registerOrg(server.url, "Other VC Org"))

const bundled = new Map<string, unknown>([...credentialsContext.contexts, ...ed25519Context.contexts, ...statusListContext.contexts])

/** What a verifier on the internet would do, with did:web pointed at the test server (plain http here). */
const documentLoader = async (url: string) => {
  const found = (document: unknown) => ({ contextUrl: null, documentUrl: url, document })
  if (bundled.has(url)) return found(bundled.get(url))
  if (url.startsWith(server.url)) {
    const reply = await fetch(url)
    if (!reply.ok) throw new Error(`${url} answered ${reply.status}`)
    return found(await reply.json())
  }
  if (url.startsWith("did:web:")) {
    const [did, fragment] = url.split("#")
    const path = did!.slice("did:web:".length).split(":").slice(1)
    const documentUrl = `${server.url}/${path.length === 0 ? ".well-known" : path.join("/")}/did.json`
    const document = (await (await fetch(documentUrl)).json()) as { verificationMethod: Array<{ id: string }> }
    if (fragment === undefined) return found(document)
    const method = document.verificationMethod.find((candidate) => candidate.id === url)
    return found({ "@context": ed25519Context.CONTEXT_URL, ...method })
  }
  throw new Error(`not loadable in this test: ${url}`)
}

const verifyWithLibrary = (credential: object) =>
  vc.verifyCredential({
    credential,
    suite: new Ed25519Signature2020(),
    documentLoader,
    checkStatus: (options: any) => checkStatus({ ...options, suite: new Ed25519Signature2020(), documentLoader })
  })

let counter = 0
const newAgent = async (extra: Record<string, unknown> = {}) => {
  const slug = `vc-agent-${process.pid}-${++counter}`
  const reply = await call(server.url, "POST", "/api/v1/agents", { token: org.key, body: { agent_slug: slug, name: "Credentialed", capabilities: ["email.send"], ...extra } })
  expect(reply.status).toBe(201)
  return slug
}
const currentCredential = async (slug: string) => {
  const reply = await call(server.url, "GET", `/api/v1/agents/${slug}/credential`)
  expect(reply.status).toBe(200)
  return reply.body
}
const verifyByApi = async (credential: unknown) => {
  const reply = await call(server.url, "POST", "/api/v1/credentials/verify", { body: { credential } })
  expect(reply.status).toBe(200)
  return reply.body
}
const revoke = (slug: string, token: string, body: unknown = { reason: "key compromised" }) =>
  call(server.url, "POST", `/api/v1/agents/${slug}/credentials/revoke`, { token, body })

describe("context URLs", () => {
  it("the URLs credentials name are the bundled libraries' own (they are written out so the libraries load on first use)", () => {
    expect(CREDENTIALS_V1).toBe(credentialsContext.CONTEXT_URL)
    expect(STATUS_LIST_2021_V1).toBe(statusListContext.CONTEXT_URL_V1)
  })
})

describe("issued credentials", () => {
  it("registration issues a credential that @digitalbazaar/vc verifies, status included", async () => {
    const slug = await newAgent({ metadata: { model_id: "claude-sonnet", eu_ai_act_compliant: true, max_action_value: 5000 } })
    const { credential, message } = await currentCredential(slug)
    expect(message).toBeNull()
    const port = new URL(server.url).port
    expect(credential).toMatchObject({
      id: expect.stringMatching(/^urn:uuid:[0-9a-f-]{36}$/),
      type: ["VerifiableCredential", "AgentCapabilityCredential"],
      issuer: `did:web:127.0.0.1%3A${port}`,
      credentialSubject: {
        id: `did:web:127.0.0.1%3A${port}:agents:${slug}`,
        agentSlug: slug,
        displayName: "Credentialed",
        ownerOrganization: org.orgUuid,
        capabilities: ["email.send"],
        modelId: "claude-sonnet",
        euAiActCompliant: true,
        notarizationEnabled: true,
        maxActionValue: 5000
      },
      credentialStatus: { type: "StatusList2021Entry", statusPurpose: "revocation" },
      proof: { type: "Ed25519Signature2020", proofPurpose: "assertionMethod", verificationMethod: expect.stringContaining(`did:web:127.0.0.1%3A${port}#rk_`) }
    })
    expect(Date.parse(credential.expirationDate)).toBeGreaterThan(Date.parse(credential.issuanceDate))

    const result = await verifyWithLibrary(credential)
    expect(result.error?.message ?? result.error).toBeUndefined()
    expect(result.verified).toBe(true)
    expect(await verifyByApi(credential)).toMatchObject({
      valid: true,
      checks: { signature: true, not_expired: true, not_revoked: true, issuer_valid: true, structure_valid: true }
    })
  })

  it("a tampered credential fails, for the library and for our endpoint", async () => {
    const slug = await newAgent()
    const { credential } = await currentCredential(slug)
    const tampered = structuredClone(credential)
    tampered.credentialSubject.capabilities.push("payments.unlimited")
    expect((await verifyWithLibrary(tampered)).verified).toBe(false)
    const answer = await verifyByApi(tampered)
    expect(answer.valid).toBe(false)
    expect(answer.checks).toMatchObject({ signature: false, structure_valid: true, issuer_valid: true, not_revoked: true })
  })

  it("revocation: the status list says revoked, the current credential is null, verify says not_revoked false", async () => {
    const slug = await newAgent()
    const { credential } = await currentCredential(slug)
    const member = await addMember(server.url, org, "member")
    const byMember = await revoke(slug, member.token)
    expect(byMember.status).toBe(403)
    expect((await revoke(slug, org.token, {})).status).toBe(422)
    expect((await revoke(slug, org.token, { reason: "x".repeat(1001) })).status).toBe(422)

    const revoked = await revoke(slug, org.token)
    expect(revoked.status).toBe(200)
    expect(revoked.body).toMatchObject({ vc_id: credential.id, reason: "key compromised" })
    expect(Date.parse(revoked.body.revoked_at)).not.toBeNaN()

    const status = await checkStatus({ credential, documentLoader, suite: new Ed25519Signature2020(), verifyStatusListCredential: true, verifyMatchingIssuers: true })
    expect(status.error?.message ?? status.error).toBeUndefined()
    expect(status.verified).toBe(false)
    expect((await verifyWithLibrary(credential)).verified).toBe(false)

    const list = await call(server.url, "GET", new URL(credential.credentialStatus.statusListCredential).pathname)
    expect(list.status).toBe(200)
    expect(list.body).toMatchObject({ type: ["VerifiableCredential", "StatusList2021Credential"], issuer: credential.issuer, credentialSubject: { type: "StatusList2021", statusPurpose: "revocation" } })
    expect(typeof list.body.issued).toBe("string")
    const bits = gunzipSync(Buffer.from(list.body.credentialSubject.encodedList, "base64url"))
    expect(bits.length).toBeGreaterThanOrEqual(16_384)
    const index = Number(credential.credentialStatus.statusListIndex)
    expect(bits[index >> 3]! & (0x80 >> (index & 7))).not.toBe(0)

    expect(await currentCredential(slug)).toMatchObject({ credential: null, message: expect.stringContaining("revoked") })
    expect((await verifyByApi(credential)).checks).toMatchObject({ not_revoked: false, signature: true })
    // Nothing left to revoke.
    const again = await revoke(slug, org.token)
    expect(again.status).toBe(404)
    expect(again.body.code).toBe("NOT_FOUND")
  })

  it("reissues on capability and version changes (version + 1), revoking the superseded one", async () => {
    const slug = await newAgent()
    const first = (await currentCredential(slug)).credential
    expect((await call(server.url, "PUT", `/api/v1/agents/${slug}`, { token: org.key, body: { description: "no reissue for this" } })).status).toBe(200)
    expect((await currentCredential(slug)).credential.id).toBe(first.id)

    expect((await call(server.url, "PUT", `/api/v1/agents/${slug}`, { token: org.key, body: { capabilities: ["email.send", "files.read"] } })).status).toBe(200)
    const second = (await currentCredential(slug)).credential
    expect(second.id).not.toBe(first.id)
    expect(second.credentialSubject.capabilities).toEqual(["email.send", "files.read"])

    const published = await call(server.url, "POST", `/api/v1/agents/${slug}/versions`, {
      token: org.key,
      body: { version: "2.0.0", instruction_hash: `sha256:${"1".repeat(64)}` }
    })
    expect(published.status).toBe(201)
    const third = (await currentCredential(slug)).credential
    expect(third.credentialSubject.version).toBe("2.0.0")
    expect((await verifyWithLibrary(third)).verified).toBe(true)

    const list = await call(server.url, "GET", `/api/v1/agents/${slug}/credentials`, { token: org.key })
    expect(list.status).toBe(200)
    expect(list.body.credentials.map((record: any) => record.version)).toEqual([3, 2, 1])
    expect(list.body.credentials[0]).toMatchObject({ vc_id: third.id, revoked_at: null, vc_json: third })
    expect(list.body.credentials[1].revoked_at).not.toBeNull()
    expect((await verifyByApi(first)).checks.not_revoked).toBe(false)
  })
})

describe("the verify endpoint", () => {
  it("fails each check on its own and never errors on odd input", async () => {
    const slug = await newAgent()
    const { credential } = await currentCredential(slug)

    const { proof: _proof, ...unsigned } = credential
    expect((await verifyByApi(unsigned)).checks).toMatchObject({ structure_valid: false, signature: false })
    expect((await verifyByApi({ ...credential, issuer: "did:web:evil.example" })).checks).toMatchObject({ issuer_valid: false, signature: false })
    expect((await verifyByApi({ ...credential, expirationDate: "2001-01-01T00:00:00Z" })).checks).toMatchObject({ not_expired: false, signature: false })
    expect(await verifyByApi({})).toMatchObject({
      valid: false,
      checks: { signature: false, not_expired: true, not_revoked: false, issuer_valid: false, structure_valid: false }
    })
    const odd = await verifyByApi({ ...credential, "@context": ["https://evil.example/context"], proof: { type: "Ed25519Signature2020", proofValue: "zzz" } })
    expect(odd.valid).toBe(false)
    expect((await call(server.url, "POST", "/api/v1/credentials/verify", { body: { credential: "not an object" } })).status).toBe(422)
  })
})

describe("reads and isolation", () => {
  it("serves the JSON-LD context, 404s unknown agents and lists, and keeps credentials lists to the owner", async () => {
    const context = await call(server.url, "GET", "/contexts/agent-capability/v1")
    expect(context.status).toBe(200)
    expect(Object.keys(context.body["@context"])).toEqual(expect.arrayContaining(["agentSlug", "displayName", "capabilities", "maxActionValue"]))
    expect((await call(server.url, "GET", "/api/v1/agents/nobody-here/credential")).status).toBe(404)
    expect((await call(server.url, "GET", "/credentials/status/sl_nothing")).status).toBe(404)

    const slug = await newAgent()
    expect((await call(server.url, "GET", `/api/v1/agents/${slug}/credentials`, { token: other.key })).status).toBe(404)
    expect((await revoke(slug, other.token)).status).toBe(404)
    expect((await currentCredential(slug)).credential).not.toBeNull()
  })
})

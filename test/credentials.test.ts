/**
 * Verifiable credentials (spec 001): our credentials verify with Digital Bazaar's `@digitalbazaar/vc`
 * and `@digitalbazaar/ed25519-signature-2020` (a document loader serving the W3C contexts bundled
 * with those libraries, and our context, DID documents and status lists from the test server);
 * after revocation `@digitalbazaar/vc-status-list` says revoked; tampering fails; reissues on
 * capability and version changes; the verify endpoint's five checks; revocation rules. Over the typed
 * client (HttpApiClient over GatewayApi).
 */
import { gunzipSync } from "node:zlib"
import { Ed25519Signature2020 } from "@digitalbazaar/ed25519-signature-2020"
import * as vc from "@digitalbazaar/vc"
import { checkStatus } from "@digitalbazaar/vc-status-list"
import * as statusListContext from "@digitalbazaar/vc-status-list-context"
import { describe, expect, it } from "@effect/vitest"
import * as credentialsContext from "credentials-context"
import * as ed25519Context from "ed25519-signature-2020-context"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { RegisterAgentRequest } from "../protocol/agents.js"
import { CREDENTIALS_V1, STATUS_LIST_2021_V1 } from "../src/credentials/linked-data.js"
import { answer, client, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/credentials/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("VC Org"), other: register("Other VC Org") })).pipe(Layer.provideMerge(Gateway.layer()))

const bundled = new Map<string, unknown>([...credentialsContext.contexts, ...ed25519Context.contexts, ...statusListContext.contexts])

/** What a verifier on the internet would do, with did:web pointed at the test server at `base` (plain http here). */
const loaderFor = (base: string) => async (url: string) => {
  const found = (document: unknown) => ({ contextUrl: null, documentUrl: url, document })
  if (bundled.has(url)) return found(bundled.get(url))
  if (url.startsWith(base)) {
    const reply = await fetch(url)
    if (!reply.ok) throw new Error(`${url} answered ${reply.status}`)
    return found(await reply.json())
  }
  if (url.startsWith("did:web:")) {
    const [did, fragment] = url.split("#")
    const path = did!.slice("did:web:".length).split(":").slice(1)
    const documentUrl = `${base}/${path.length === 0 ? ".well-known" : path.join("/")}/did.json`
    const document = (await (await fetch(documentUrl)).json()) as { verificationMethod: Array<{ id: string }> }
    if (fragment === undefined) return found(document)
    const method = document.verificationMethod.find((candidate) => candidate.id === url)
    return found({ "@context": ed25519Context.CONTEXT_URL, ...method })
  }
  throw new Error(`not loadable in this test: ${url}`)
}
const documentLoader = Effect.map(Gateway, (server) => loaderFor(server.url))

const verifyWithLibrary = (credential: object) =>
  Effect.flatMap(documentLoader, (loader) =>
    Effect.promise(() =>
      vc.verifyCredential({
        credential,
        suite: new Ed25519Signature2020(),
        documentLoader: loader,
        checkStatus: (options: any) => checkStatus({ ...options, suite: new Ed25519Signature2020(), documentLoader: loader })
      })
    )
  )

let counter = 0
const newAgent = (extra: Partial<RegisterAgentRequest> = {}) =>
  Effect.gen(function* () {
    const { org } = yield* Orgs
    const slug = `vc-agent-${process.pid}-${++counter}`
    const [, reply] = yield* (yield* client(org.key)).agents.register({
      payload: { agent_slug: slug, name: "Credentialed", capabilities: ["email.send"], ...extra },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return slug
  })
/** The agent's current credential; the credential is a JSON-LD document, read loosely. */
const currentCredential = (slug: string) =>
  Effect.gen(function* () {
    const [current, reply] = yield* (yield* client()).credentialsPublic.current({ params: { agent_slug: slug }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    return current as { readonly credential: any; readonly message: string | null }
  })
const verifyByApi = (credential: unknown) =>
  Effect.gen(function* () {
    const [verification, reply] = yield* (yield* client()).credentialsPublic.verify({
      payload: { credential: credential as Record<string, unknown> },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(200)
    return verification
  })
/** A revocation as answered (status and JSON body). */
const revoke = (slug: string, token: string, reason = "key compromised") =>
  Effect.flatMap(client(token), (api) => answer(api.credentials.revoke({ params: { agent_slug: slug }, payload: { reason }, responseMode: "response-only" })))
/** Raw call: bodies outside the contract (a reason too long), which the typed client refuses to encode. */
const revokeRaw = (slug: string, token: string, body: unknown) =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => call(server.url, "POST", `/api/v1/agents/${slug}/credentials/revoke`, { token, body })))

describe("context URLs", () => {
  it("the URLs credentials name are the bundled libraries' own (they are written out so the libraries load on first use)", () => {
    expect(CREDENTIALS_V1).toBe(credentialsContext.CONTEXT_URL)
    expect(STATUS_LIST_2021_V1).toBe(statusListContext.CONTEXT_URL_V1)
  })
})

liveLayer(Setup)((it) => {
  it.describe("issued credentials", () => {
    it.effect("registration issues a credential that @digitalbazaar/vc verifies, status included", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const server = yield* Gateway
        const slug = yield* newAgent({ metadata: { model_id: "claude-sonnet", eu_ai_act_compliant: true, max_action_value: 5000 } })
        const { credential, message } = yield* currentCredential(slug)
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

        const result = yield* verifyWithLibrary(credential)
        expect(result.error?.message ?? result.error).toBeUndefined()
        expect(result.verified).toBe(true)
        expect(yield* verifyByApi(credential)).toMatchObject({
          valid: true,
          checks: { signature: true, not_expired: true, not_revoked: true, issuer_valid: true, structure_valid: true }
        })
      })
    )

    it.effect("a tampered credential fails, for the library and for our endpoint", () =>
      Effect.gen(function* () {
        const slug = yield* newAgent()
        const { credential } = yield* currentCredential(slug)
        const tampered = structuredClone(credential)
        tampered.credentialSubject.capabilities.push("payments.unlimited")
        expect((yield* verifyWithLibrary(tampered)).verified).toBe(false)
        const verification = yield* verifyByApi(tampered)
        expect(verification.valid).toBe(false)
        expect(verification.checks).toMatchObject({ signature: false, structure_valid: true, issuer_valid: true, not_revoked: true })
      })
    )

    it.effect("revocation: the status list says revoked, the current credential is null, verify says not_revoked false", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = yield* newAgent()
        const { credential } = yield* currentCredential(slug)
        const teammate = yield* member(org, "member")
        const byMember = yield* revoke(slug, teammate.token)
        expect(byMember.status).toBe(403)
        // Raw: a reason too long is outside the contract (none at all is accepted: test/sdk-tolerance.test.ts).
        expect((yield* revokeRaw(slug, org.token, { reason: "x".repeat(1001) })).status).toBe(422)

        const [revoked, revokedReply] = yield* (yield* client(org.token)).credentials.revoke({
          params: { agent_slug: slug },
          payload: { reason: "key compromised" },
          responseMode: "decoded-and-response"
        })
        expect(revokedReply.status).toBe(200)
        expect(revoked).toMatchObject({ vc_id: credential.id, reason: "key compromised" })
        expect(Date.parse(revoked.revoked_at)).not.toBeNaN()

        const loader = yield* documentLoader
        const status = yield* Effect.promise(() =>
          checkStatus({ credential, documentLoader: loader, suite: new Ed25519Signature2020(), verifyStatusListCredential: true, verifyMatchingIssuers: true })
        )
        expect(status.error?.message ?? status.error).toBeUndefined()
        expect(status.verified).toBe(false)
        expect((yield* verifyWithLibrary(credential)).verified).toBe(false)

        const listPath = new URL(credential.credentialStatus.statusListCredential).pathname
        expect(listPath).toMatch(/^\/credentials\/status\/[^/]+$/)
        const [list, listReply] = yield* (yield* client()).credentialsPublic.statusList({
          params: { list_id: listPath.split("/").pop()! },
          responseMode: "decoded-and-response"
        })
        expect(listReply.status).toBe(200)
        const listed = list as any
        expect(listed).toMatchObject({ type: ["VerifiableCredential", "StatusList2021Credential"], issuer: credential.issuer, credentialSubject: { type: "StatusList2021", statusPurpose: "revocation" } })
        expect(typeof listed.issued).toBe("string")
        const bits = gunzipSync(Buffer.from(listed.credentialSubject.encodedList, "base64url"))
        expect(bits.length).toBeGreaterThanOrEqual(16_384)
        const index = Number(credential.credentialStatus.statusListIndex)
        expect(bits[index >> 3]! & (0x80 >> (index & 7))).not.toBe(0)

        expect(yield* currentCredential(slug)).toMatchObject({ credential: null, message: expect.stringContaining("revoked") })
        expect((yield* verifyByApi(credential)).checks).toMatchObject({ not_revoked: false, signature: true })
        // Nothing left to revoke.
        const again = yield* revoke(slug, org.token)
        expect(again.status).toBe(404)
        expect(again.body.code).toBe("NOT_FOUND")
      })
    )

    it.effect("reissues on capability and version changes (version + 1), revoking the superseded one", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = yield* newAgent()
        const params = { agent_slug: slug }
        const first = (yield* currentCredential(slug)).credential
        expect((yield* api.agents.update({ params, payload: { description: "no reissue for this" }, responseMode: "response-only" })).status).toBe(200)
        expect((yield* currentCredential(slug)).credential.id).toBe(first.id)

        expect((yield* api.agents.update({ params, payload: { capabilities: ["email.send", "files.read"] }, responseMode: "response-only" })).status).toBe(200)
        const second = (yield* currentCredential(slug)).credential
        expect(second.id).not.toBe(first.id)
        expect(second.credentialSubject.capabilities).toEqual(["email.send", "files.read"])

        const [, published] = yield* api.agents.publishVersion({
          params,
          payload: { version: "2.0.0", instruction_hash: `sha256:${"1".repeat(64)}` },
          responseMode: "decoded-and-response"
        })
        expect(published.status).toBe(201)
        const third = (yield* currentCredential(slug)).credential
        expect(third.credentialSubject.version).toBe("2.0.0")
        expect((yield* verifyWithLibrary(third)).verified).toBe(true)

        const [list, listReply] = yield* api.credentials.list({ params, responseMode: "decoded-and-response" })
        expect(listReply.status).toBe(200)
        expect(list.credentials.map((record) => record.version)).toEqual([3, 2, 1])
        expect(list.credentials[0]).toMatchObject({ vc_id: third.id, revoked_at: null, vc_json: third })
        expect(list.credentials[1]!.revoked_at).not.toBeNull()
        expect((yield* verifyByApi(first)).checks.not_revoked).toBe(false)
      })
    )
  })

  it.describe("the verify endpoint", () => {
    it.effect("fails each check on its own and never errors on odd input", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const slug = yield* newAgent()
        const { credential } = yield* currentCredential(slug)

        const { proof: _proof, ...unsigned } = credential
        expect((yield* verifyByApi(unsigned)).checks).toMatchObject({ structure_valid: false, signature: false })
        expect((yield* verifyByApi({ ...credential, issuer: "did:web:evil.example" })).checks).toMatchObject({ issuer_valid: false, signature: false })
        expect((yield* verifyByApi({ ...credential, expirationDate: "2001-01-01T00:00:00Z" })).checks).toMatchObject({ not_expired: false, signature: false })
        expect(yield* verifyByApi({})).toMatchObject({
          valid: false,
          checks: { signature: false, not_expired: true, not_revoked: false, issuer_valid: false, structure_valid: false }
        })
        const odd = yield* verifyByApi({ ...credential, "@context": ["https://evil.example/context"], proof: { type: "Ed25519Signature2020", proofValue: "zzz" } })
        expect(odd.valid).toBe(false)
        // Raw call: a credential that is not an object is outside the contract; the typed client would not send it.
        expect((yield* Effect.promise(() => call(server.url, "POST", "/api/v1/credentials/verify", { body: { credential: "not an object" } }))).status).toBe(422)
      })
    )
  })

  it.describe("reads and isolation", () => {
    it.effect("serves the JSON-LD context, 404s unknown agents and lists, and keeps credentials lists to the owner", () =>
      Effect.gen(function* () {
        const { other } = yield* Orgs
        const anonymous = yield* client()
        const [context, contextReply] = yield* anonymous.credentialsPublic.context({ responseMode: "decoded-and-response" })
        expect(contextReply.status).toBe(200)
        expect(Object.keys(context["@context"] as object)).toEqual(expect.arrayContaining(["agentSlug", "displayName", "capabilities", "maxActionValue"]))
        expect((yield* anonymous.credentialsPublic.current({ params: { agent_slug: "nobody-here" }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* anonymous.credentialsPublic.statusList({ params: { list_id: "sl_nothing" }, responseMode: "response-only" })).status).toBe(404)

        const slug = yield* newAgent()
        expect((yield* (yield* client(other.key)).credentials.list({ params: { agent_slug: slug }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* revoke(slug, other.token)).status).toBe(404)
        expect((yield* currentCredential(slug)).credential).not.toBeNull()
      })
    )
  })
})

/**
 * DIDs and agent cards (spec 001): our did:web documents resolve with the standard resolvers
 * (`did-resolver` + `web-did-resolver`, over HTTPS through a TLS front for the test server),
 * keys rotate (admins only, version + 1, audited, DID unchanged), agent cards, and
 * `POST /dids/resolve` fetching another party's document over HTTPS with a 5-minute cache.
 * Over the typed client (HttpApiClient over GatewayApi), straight to the gateway's own port.
 */
import { writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import https from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "@effect/vitest"
import { Resolver } from "did-resolver"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { getResolver } from "web-did-resolver"
import { ed25519FromMultibase } from "../src/platform/did-web.js"
import { answer, client, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { useFixture } from "./support/fixture.js"
import { Gateway } from "./support/server.js"
import { type TlsServer, useTlsServer } from "./support/tls.js"

/** The gateway behind an https front, so its BASE_URL (and DIDs) are https as did:web requires. */
let gatewayPort = 0
const front = useTlsServer((req, res) => {
  const upstream = httpRequest({ host: "127.0.0.1", port: gatewayPort, path: req.url, method: req.method, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(res)
  })
  upstream.on("error", () => res.writeHead(502).end())
  req.pipe(upstream)
})

/** Another party's DID host: serves one document and counts requests. */
let peerHits = 0
const peerDocument = (port: number) => ({
  "@context": ["https://www.w3.org/ns/did/v1"],
  id: `did:web:127.0.0.1%3A${port}:partners:acme`,
  verificationMethod: [
    {
      id: `did:web:127.0.0.1%3A${port}:partners:acme#key-1`,
      type: "Ed25519VerificationKey2020",
      controller: `did:web:127.0.0.1%3A${port}:partners:acme`,
      publicKeyMultibase: "z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
    }
  ]
})
let peer: TlsServer
peer = useTlsServer((req, res) => {
  peerHits++
  if (req.url === "/partners/acme/did.json") res.setHeader("content-type", "application/json").end(JSON.stringify(peerDocument(peer.port)))
  else res.writeHead(404).end("no")
})

/** Both self-signed certificates, trusted by the gateway's outbound client and by this process. */
const caFile = useFixture(async () => {
  const path = join(tmpdir(), `dids-test-ca-${process.pid}.pem`)
  writeFileSync(path, `${front.certPem}\n${peer.certPem}`)
  return { path }
})

/**
 * The gateway (its BASE_URL, and so its DIDs, on the https front), seen by the tests at its own
 * plain-http port: `client()`, `register()` and `member()` go there directly.
 */
const Direct = Layer.effect(
  Gateway,
  Effect.map(Gateway, (server) => {
    gatewayPort = server.config.port
    return { ...server, url: `http://127.0.0.1:${server.config.port}` }
  })
).pipe(
  Layer.provide(
    // Built after the fixtures above, whose ports and CA file it reads.
    Layer.suspend(() => Gateway.layer({ BASE_URL: `https://127.0.0.1:${front.port}`, OUTBOUND_CA_FILE: caFile.path, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8" }))
  )
)

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/dids/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("DID Org"), other: register("Other DID Org") })).pipe(Layer.provideMerge(Direct))

const host = () => `127.0.0.1%3A${front.port}`
let counter = 0
const newAgent = (label: string, token?: string) =>
  Effect.gen(function* () {
    const { org } = yield* Orgs
    const slug = `${label}-${process.pid}-${++counter}`
    const api = yield* client(token ?? org.key)
    const [, reply] = yield* api.agents.register({
      payload: { agent_slug: slug, name: `Agent ${label}`, capabilities: ["email.send"] },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return slug
  })

const standardResolver = () => {
  // web-did-resolver fetches through node's https agent: trust the front's certificate there.
  https.globalAgent.options.ca = [front.certPem]
  return new Resolver(getResolver())
}

liveLayer(Setup)((it) => {
  it.describe("did:web documents", () => {
    it.effect("an agent's DID resolves with did-resolver + web-did-resolver to an Ed25519VerificationKey2020 document", () =>
      Effect.gen(function* () {
        const slug = yield* newAgent("resolvable")
        const did = `did:web:${host()}:agents:${slug}`
        const result = yield* Effect.promise(() => standardResolver().resolve(did))
        expect(result.didResolutionMetadata.error).toBeUndefined()
        const document = result.didDocument!
        expect(document.id).toBe(did)
        expect(document["@context"]).toContain("https://w3id.org/security/suites/ed25519-2020/v1")
        expect(document.verificationMethod).toEqual([
          { id: `${did}#key-1`, type: "Ed25519VerificationKey2020", controller: did, publicKeyMultibase: expect.stringMatching(/^z6Mk/) }
        ])
        expect(ed25519FromMultibase(document.verificationMethod![0]!.publicKeyMultibase!)).toHaveLength(32)
        expect(document.authentication).toEqual([`${did}#key-1`])
        expect(document.assertionMethod).toEqual([`${did}#key-1`])
        expect(document.service).toEqual([expect.objectContaining({ type: "AgentCard", serviceEndpoint: expect.stringContaining(`/agents/${slug}/.well-known/agent-card.json`) })])
      })
    )

    it.effect("the platform's root DID resolves too, listing the receipt-signing keys", () =>
      Effect.gen(function* () {
        const result = yield* Effect.promise(() => standardResolver().resolve(`did:web:${host()}`))
        expect(result.didResolutionMetadata.error).toBeUndefined()
        expect(result.didDocument!.verificationMethod![0]).toMatchObject({ type: "Ed25519VerificationKey2020", publicKeyMultibase: expect.stringMatching(/^z/) })
        expect(result.didDocument!.service![0]).toMatchObject({ serviceEndpoint: `https://127.0.0.1:${front.port}` })
      })
    )

    it.effect("an unknown agent's DID is 404 and does not resolve", () =>
      Effect.gen(function* () {
        const anonymous = yield* client()
        expect((yield* anonymous.didsPublic.agentDidDocument({ params: { agent_slug: "nobody-here" }, responseMode: "response-only" })).status).toBe(404)
        const result = yield* Effect.promise(() => standardResolver().resolve(`did:web:${host()}:agents:nobody-here`))
        expect(result.didResolutionMetadata.error).toBe("notFound")
      })
    )
  })

  it.describe("the organization's view and key rotation", () => {
    it.effect("answers the DID info record, version 1 at registration", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const slug = yield* newAgent("info")
        const params = { agent_slug: slug }
        const [info, reply] = yield* (yield* client(org.key)).dids.agentDid({ params, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(info).toMatchObject({ did: `did:web:${host()}:agents:${slug}`, version: 1 })
        expect((info.document as { id?: string }).id).toBe(info.did)
        expect(Date.parse(String(info.created_at))).not.toBeNaN()
        expect((yield* (yield* client(other.key)).dids.agentDid({ params, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("rotation by an admin: new key, version + 1, same DID, audited; members get 403", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org, other } = yield* Orgs
        const slug = yield* newAgent("rotating")
        const params = { agent_slug: slug }
        const anonymous = yield* client()
        const before = yield* anonymous.didsPublic.agentDidDocument({ params })
        const teammate = yield* client((yield* member(org, "member")).token)
        const refused = yield* answer(teammate.dids.rotate({ params, responseMode: "response-only" }))
        expect(refused.status).toBe(403)
        expect(refused.body.code).toBe("FORBIDDEN")

        const owner = yield* client(org.token)
        const [rotated, rotatedReply] = yield* owner.dids.rotate({ params, responseMode: "decoded-and-response" })
        expect(rotatedReply.status).toBe(200)
        expect(rotated).toMatchObject({ new_did: `did:web:${host()}:agents:${slug}`, new_version: 2 })
        const after = yield* anonymous.didsPublic.agentDidDocument({ params })
        expect(after.id).toBe(before.id)
        expect(after.verificationMethod[0]!.publicKeyMultibase).not.toBe(before.verificationMethod[0]!.publicKeyMultibase)
        const info = yield* (yield* client(org.key)).dids.agentDid({ params })
        expect(info.version).toBe(2)

        const audited = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              return yield* sql`SELECT actor, details FROM audit_log WHERE event = 'agent.did.rotated' AND target = ${slug}`
            })
          )
        )
        expect(audited).toEqual([{ actor: org.userUuid, details: { version: 2 } }])
        // The old private key is gone: one sealed key per agent, sealed for version 2.
        const keys = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              return yield* sql`SELECT version FROM agent_dids WHERE agent_slug = ${slug}`
            })
          )
        )
        expect(keys).toEqual([{ version: 2 }])
        expect((yield* (yield* client(other.token)).dids.rotate({ params, responseMode: "response-only" })).status).toBe(404)
      })
    )
  })

  it.describe("agent cards", () => {
    it.effect("publishes name, DID, capabilities, authentication and the platform block", () =>
      Effect.gen(function* () {
        const slug = yield* newAgent("carded")
        const anonymous = yield* client()
        const [card, reply] = yield* anonymous.didsPublic.agentCard({ params: { agent_slug: slug }, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        // A fresh agent's reputation (formula 1.0, no history): reliability 20 + compliance 10.
        const block = { notarization: true, mutual_signing: true, reputation_score: 30 }
        expect(card).toMatchObject({
          name: "Agent carded",
          description: null,
          did: `did:web:${host()}:agents:${slug}`,
          capabilities: ["email.send"],
          authentication: { type: "bearer", authorization_url: expect.stringContaining("/api/v1/auth/login") },
          aira: block,
          platform: block
        })
        expect(card.url).toContain(`/api/v1/agents/public/${slug}`)
        expect((yield* anonymous.didsPublic.agentCard({ params: { agent_slug: "nobody-here" }, responseMode: "response-only" })).status).toBe(404)
      })
    )
  })

  it.describe("POST /dids/resolve", () => {
    it.effect("fetches another party's did:web over HTTPS, then answers from the cache", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const did = `did:web:127.0.0.1%3A${peer.port}:partners:acme`
        const hitsBefore = peerHits
        const [first, firstReply] = yield* api.dids.resolve({ payload: { did }, responseMode: "decoded-and-response" })
        expect(firstReply.status).toBe(200)
        expect(first).toMatchObject({ did, cached: false, document: peerDocument(peer.port) })
        const second = yield* api.dids.resolve({ payload: { did } })
        expect(second).toMatchObject({ did, cached: true, document: peerDocument(peer.port) })
        expect(peerHits - hitsBefore).toBe(1)
      })
    )

    it.effect("resolves our own agents without a network round trip", () =>
      Effect.gen(function* () {
        const { other } = yield* Orgs
        const slug = yield* newAgent("local")
        const did = `did:web:${host()}:agents:${slug}`
        const [resolved, reply] = yield* (yield* client(other.key)).dids.resolve({ payload: { did }, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(resolved).toMatchObject({ did, cached: false })
        expect((resolved.document as any).verificationMethod[0].type).toBe("Ed25519VerificationKey2020")
      })
    )

    it.effect("refuses what is not did:web (422) and answers 404 for documents that are not there", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        for (const did of ["did:key:z6Mkabc", "web:example.com", ""]) {
          // Raw: the typed client refuses to encode a did outside the contract's did:web pattern.
          const reply = yield* Effect.promise(() => call(server.url, "POST", "/api/v1/dids/resolve", { token: org.key, body: { did } }))
          expect(reply.status, did).toBe(422)
          expect(reply.body.code).toBe("VALIDATION_ERROR")
        }
        const api = yield* client(org.key)
        const missing = yield* api.dids.resolve({ payload: { did: `did:web:127.0.0.1%3A${peer.port}:nobody` }, responseMode: "response-only" })
        expect(missing.status).toBe(404)
        // The outbound client's address rules apply: a private address outside the allowed ranges is never called.
        const blocked = yield* api.dids.resolve({ payload: { did: "did:web:10.0.0.1" }, responseMode: "response-only" })
        expect(blocked.status).toBe(404)
      })
    )
  })
})

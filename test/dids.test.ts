/**
 * DIDs and agent cards (spec 001): our did:web documents resolve with the standard resolvers
 * (`did-resolver` + `web-did-resolver`, over HTTPS through a TLS front for the test server),
 * keys rotate (admins only, version + 1, audited, DID unchanged), agent cards, and
 * `POST /dids/resolve` fetching another party's document over HTTPS with a 5-minute cache.
 */
import { writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import https from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Resolver } from "did-resolver"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { getResolver } from "web-did-resolver"
import { ed25519FromMultibase } from "../src/platform/did-web.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"
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

const server = useServer(() => ({
  BASE_URL: `https://127.0.0.1:${front.port}`,
  OUTBOUND_CA_FILE: caFile.path,
  OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8"
}))
const direct = useFixture(async () => {
  gatewayPort = server.config.port
  return { url: `http://127.0.0.1:${server.config.port}` }
})
const org = useFixture(() => registerOrg(direct.url, "DID Org"))
const other = useFixture(() => registerOrg(direct.url, "Other DID Org"))

const host = () => `127.0.0.1%3A${front.port}`
let counter = 0
const newAgent = async (label: string, token = org.key) => {
  const slug = `${label}-${process.pid}-${++counter}`
  const reply = await call(direct.url, "POST", "/api/v1/agents", { token, body: { agent_slug: slug, name: `Agent ${label}`, capabilities: ["email.send"] } })
  expect(reply.status).toBe(201)
  return slug
}

const standardResolver = () => {
  // web-did-resolver fetches through node's https agent: trust the front's certificate there.
  https.globalAgent.options.ca = [front.certPem]
  return new Resolver(getResolver())
}

describe("did:web documents", () => {
  it("an agent's DID resolves with did-resolver + web-did-resolver to an Ed25519VerificationKey2020 document", async () => {
    const slug = await newAgent("resolvable")
    const did = `did:web:${host()}:agents:${slug}`
    const result = await standardResolver().resolve(did)
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

  it("the platform's root DID resolves too, listing the receipt-signing keys", async () => {
    const result = await standardResolver().resolve(`did:web:${host()}`)
    expect(result.didResolutionMetadata.error).toBeUndefined()
    expect(result.didDocument!.verificationMethod![0]).toMatchObject({ type: "Ed25519VerificationKey2020", publicKeyMultibase: expect.stringMatching(/^z/) })
    expect(result.didDocument!.service![0]).toMatchObject({ serviceEndpoint: `https://127.0.0.1:${front.port}` })
  })

  it("an unknown agent's DID is 404 and does not resolve", async () => {
    expect((await call(direct.url, "GET", "/agents/nobody-here/did.json")).status).toBe(404)
    const result = await standardResolver().resolve(`did:web:${host()}:agents:nobody-here`)
    expect(result.didResolutionMetadata.error).toBe("notFound")
  })
})

describe("the organization's view and key rotation", () => {
  it("answers the DID info record, version 1 at registration", async () => {
    const slug = await newAgent("info")
    const reply = await call(direct.url, "GET", `/api/v1/agents/${slug}/did`, { token: org.key })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ did: `did:web:${host()}:agents:${slug}`, version: 1 })
    expect(reply.body.document.id).toBe(reply.body.did)
    expect(Date.parse(reply.body.created_at)).not.toBeNaN()
    expect((await call(direct.url, "GET", `/api/v1/agents/${slug}/did`, { token: other.key })).status).toBe(404)
  })

  it("rotation by an admin: new key, version + 1, same DID, audited; members get 403", async () => {
    const slug = await newAgent("rotating")
    const before = await call(direct.url, "GET", `/agents/${slug}/did.json`)
    const member = await addMember(direct.url, org, "member")
    const refused = await call(direct.url, "POST", `/api/v1/agents/${slug}/did/rotate`, { token: member.token })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("FORBIDDEN")

    const rotated = await call(direct.url, "POST", `/api/v1/agents/${slug}/did/rotate`, { token: org.token })
    expect(rotated.status).toBe(200)
    expect(rotated.body).toMatchObject({ new_did: `did:web:${host()}:agents:${slug}`, new_version: 2 })
    const after = await call(direct.url, "GET", `/agents/${slug}/did.json`)
    expect(after.body.id).toBe(before.body.id)
    expect(after.body.verificationMethod[0].publicKeyMultibase).not.toBe(before.body.verificationMethod[0].publicKeyMultibase)
    const info = await call(direct.url, "GET", `/api/v1/agents/${slug}/did`, { token: org.key })
    expect(info.body.version).toBe(2)

    const audited = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT actor, details FROM audit_log WHERE event = 'agent.did.rotated' AND target = ${slug}`
      })
    )
    expect(audited).toEqual([{ actor: org.userUuid, details: { version: 2 } }])
    // The old private key is gone: one sealed key per agent, sealed for version 2.
    const keys = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT version FROM agent_dids WHERE agent_slug = ${slug}`
      })
    )
    expect(keys).toEqual([{ version: 2 }])
    expect((await call(direct.url, "POST", `/api/v1/agents/${slug}/did/rotate`, { token: other.token })).status).toBe(404)
  })
})

describe("agent cards", () => {
  it("publishes name, DID, capabilities, authentication and the platform block", async () => {
    const slug = await newAgent("carded")
    const reply = await call(direct.url, "GET", `/agents/${slug}/.well-known/agent-card.json`)
    expect(reply.status).toBe(200)
    const block = { notarization: true, mutual_signing: true, reputation_score: null }
    expect(reply.body).toMatchObject({
      name: "Agent carded",
      description: null,
      did: `did:web:${host()}:agents:${slug}`,
      capabilities: ["email.send"],
      authentication: { type: "bearer", authorization_url: expect.stringContaining("/api/v1/auth/login") },
      aira: block,
      platform: block
    })
    expect(reply.body.url).toContain(`/api/v1/agents/public/${slug}`)
    expect((await call(direct.url, "GET", "/agents/nobody-here/.well-known/agent-card.json")).status).toBe(404)
  })
})

describe("POST /dids/resolve", () => {
  it("fetches another party's did:web over HTTPS, then answers from the cache", async () => {
    const did = `did:web:127.0.0.1%3A${peer.port}:partners:acme`
    const hitsBefore = peerHits
    const first = await call(direct.url, "POST", "/api/v1/dids/resolve", { token: org.key, body: { did } })
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ did, cached: false, document: peerDocument(peer.port) })
    const second = await call(direct.url, "POST", "/api/v1/dids/resolve", { token: org.key, body: { did } })
    expect(second.body).toMatchObject({ did, cached: true, document: peerDocument(peer.port) })
    expect(peerHits - hitsBefore).toBe(1)
  })

  it("resolves our own agents without a network round trip", async () => {
    const slug = await newAgent("local")
    const did = `did:web:${host()}:agents:${slug}`
    const reply = await call(direct.url, "POST", "/api/v1/dids/resolve", { token: other.key, body: { did } })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ did, cached: false })
    expect(reply.body.document.verificationMethod[0].type).toBe("Ed25519VerificationKey2020")
  })

  it("refuses what is not did:web (422) and answers 404 for documents that are not there", async () => {
    for (const did of ["did:key:z6Mkabc", "web:example.com", ""]) {
      const reply = await call(direct.url, "POST", "/api/v1/dids/resolve", { token: org.key, body: { did } })
      expect(reply.status, did).toBe(422)
      expect(reply.body.code).toBe("VALIDATION_ERROR")
    }
    const missing = await call(direct.url, "POST", "/api/v1/dids/resolve", { token: org.key, body: { did: `did:web:127.0.0.1%3A${peer.port}:nobody` } })
    expect(missing.status).toBe(404)
    // The outbound client's address rules apply: a private address outside the allowed ranges is never called.
    const blocked = await call(direct.url, "POST", "/api/v1/dids/resolve", { token: org.key, body: { did: "did:web:10.0.0.1" } })
    expect(blocked.status).toBe(404)
  })
})

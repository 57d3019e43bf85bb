/**
 * The per-agent receipt chain under load: 200 concurrent authorize+notarize
 * pairs for one agent give agent_sequence 1..200 with no gap and no repeat,
 * each receipt linking to the previous one; other agents keep their own chains.
 */
import { describe, expect, it } from "vitest"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Chain Org"))

const receiptOf = async (actionUuid: string) => {
  const reply = await call(server.url, "GET", `/api/v1/verify/action/${actionUuid}`)
  expect(reply.status).toBe(200)
  const signed = typeof reply.body.signed_payload === "string" ? JSON.parse(reply.body.signed_payload) : reply.body.signed_payload
  const check = verifyReceipt({ signed_payload: signed, payload_hash: reply.body.payload_hash, signature: reply.body.signature, public_key: reply.body.public_key })
  expect(check.errors).toEqual([])
  return { payloadHash: reply.body.payload_hash as string, payload: signed as Record<string, any> }
}

const runOne = async (agentId: string | undefined, index: number) => {
  const created = await call(server.url, "POST", "/api/v1/actions", {
    token: org.key,
    body: { action_type: "tick", details: `step ${index}`, instruction_hash: "sha256:00", ...(agentId ? { agent_id: agentId } : {}) }
  })
  expect(created.status).toBe(201)
  const done = await call(server.url, "POST", `/api/v1/actions/${created.body.action_uuid}/notarize`, {
    token: org.key,
    body: { outcome: index % 7 === 0 ? "failed" : "completed" }
  })
  expect(done.status).toBe(200)
  return created.body.action_uuid as string
}

const expectUnbrokenChain = async (actionUuids: ReadonlyArray<string>) => {
  const receipts = await Promise.all(actionUuids.map(receiptOf))
  receipts.sort((a, b) => a.payload.agent_sequence - b.payload.agent_sequence)
  expect(receipts.map((r) => r.payload.agent_sequence)).toEqual(actionUuids.map((_, i) => i + 1))
  expect(receipts[0]!.payload.previous_payload_hash).toBeNull()
  for (let i = 1; i < receipts.length; i++) {
    expect(receipts[i]!.payload.previous_payload_hash).toBe(receipts[i - 1]!.payloadHash)
  }
}

describe("per-agent hash chain", () => {
  it("keeps 200 concurrent notarizations of one agent gap-free and linked", async () => {
    const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => runOne("busy-agent", i)))
    expect(new Set(ids).size).toBe(200)
    await expectUnbrokenChain(ids)
  }, 120_000)

  it("gives other agents, and actions without an agent, chains of their own", async () => {
    const [a, b, none] = await Promise.all([
      Promise.all(Array.from({ length: 15 }, (_, i) => runOne("agent-a", i))),
      Promise.all(Array.from({ length: 15 }, (_, i) => runOne("agent-b", i))),
      Promise.all(Array.from({ length: 10 }, (_, i) => runOne(undefined, i)))
    ])
    await expectUnbrokenChain(a)
    await expectUnbrokenChain(b)
    await expectUnbrokenChain(none)
  }, 120_000)
})

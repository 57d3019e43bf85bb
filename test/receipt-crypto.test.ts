import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ed from "@noble/ed25519"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import {
  base64UrlDecode,
  base64UrlEncode,
  canonicalBytes,
  DerError,
  EncodingError,
  payloadHash,
  publicKeyId,
  readTimestampGenTime,
  readTimestampImprint,
  verifyEd25519,
  verifyReceipt
} from "../protocol/verifier/index.js"
import {
  canonicalJsonBytes,
  generateSigningKey,
  importSigningKey,
  mintTransferReceipt,
  publicJwk,
  publicKeyIdOf,
  sha256Hex,
  sha256Tagged,
  signPayload,
  verifySignature,
  verifySignedPayload
} from "../src/receipts/signing.js"

const generated = generateSigningKey()
const signer = importSigningKey(generated.privateKeyPkcs8Der)
// PKCS#8 for Ed25519 ends with the 32-byte seed: the noble secret key.
const seed = generated.privateKeyPkcs8Der.slice(-32)
const jwk = publicJwk(signer.publicKeyRaw, signer.publicKeyId)

const receiptPayload = fc.record({
  receipt_version: fc.constant("1.1"),
  receipt_uuid: fc.uuid(),
  receipt_status: fc.constantFrom("notarized", "failed", "denied", "denied_by_human"),
  agent_id: fc.option(fc.string({ unit: "grapheme", maxLength: 20 })),
  action_type: fc.string({ unit: "grapheme", maxLength: 30 }),
  outcome: fc.option(fc.string({ unit: "binary", maxLength: 60 })),
  output_scan_flags: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  approval: fc.option(fc.record({ approver_email: fc.emailAddress(), approved_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) })),
  agent_sequence: fc.integer({ min: 1, max: 1_000_000 }),
  amount: fc.double({ noNaN: true, noDefaultInfinity: true }),
  extra: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
})

const mutateByte = (bytes: Uint8Array, position: number, mask: number): Uint8Array => {
  const copy = new Uint8Array(bytes)
  copy[position % copy.length] ^= mask
  return copy
}

describe("receipt signatures: node:crypto and @noble agree", () => {
  it("signs identically and each verifies the other's signature", () => {
    fc.assert(
      fc.property(receiptPayload, (payload) => {
        const minted = signPayload(signer, payload)
        const bytes = canonicalBytes(payload)
        expect(Buffer.from(minted.bytes).equals(Buffer.from(bytes))).toBe(true)
        expect(minted.payload_hash).toBe(payloadHash(payload))

        const nobleSignature = "ed25519:" + base64UrlEncode(ed.sign(bytes, seed))
        expect(minted.signature).toBe(nobleSignature)
        expect(verifySignature(signer.publicKeyRaw, bytes, nobleSignature)).toBe(true)

        const result = verifyReceipt({ signed_payload: payload, payload_hash: minted.payload_hash, signature: minted.signature, public_key: jwk })
        expect(result).toEqual({ valid: true, checks: { payload_hash: true, signature: true }, errors: [] })
        expect(verifyReceipt({ signed_payload: payload, payload_hash: minted.payload_hash, signature: minted.signature, public_key: signer.publicKeyRaw }).valid).toBe(true)
        expect(verifySignedPayload(signer.publicKey, payload, minted.payload_hash, minted.signature)).toBe(true)
      }),
      { numRuns: 60 }
    )
  })

  it("a one-byte change anywhere in the signed bytes fails both verifiers", () => {
    fc.assert(
      fc.property(receiptPayload, fc.nat(), fc.integer({ min: 1, max: 255 }), (payload, position, mask) => {
        const { bytes, signature } = signPayload(signer, payload)
        const changed = mutateByte(bytes, position, mask)
        expect(signer.verify(changed, signature)).toBe(false)
        const rawSignature = base64UrlDecode(signature.slice("ed25519:".length))
        expect(verifyEd25519(rawSignature, changed, signer.publicKeyRaw)).toBe(false)
      }),
      { numRuns: 40 }
    )
  })

  it("a one-byte change anywhere in the signature fails both verifiers", () => {
    fc.assert(
      fc.property(receiptPayload, fc.nat(), fc.integer({ min: 1, max: 255 }), (payload, position, mask) => {
        const minted = signPayload(signer, payload)
        const rawSignature = base64UrlDecode(minted.signature.slice("ed25519:".length))
        const changed = mutateByte(rawSignature, position, mask)
        const changedText = "ed25519:" + base64UrlEncode(changed)
        expect(signer.verify(minted.bytes, changedText)).toBe(false)
        expect(verifyEd25519(changed, minted.bytes, signer.publicKeyRaw)).toBe(false)
        const result = verifyReceipt({ signed_payload: payload, payload_hash: minted.payload_hash, signature: changedText, public_key: jwk })
        expect(result.valid).toBe(false)
        expect(result.checks).toEqual({ payload_hash: true, signature: false })
      }),
      { numRuns: 40 }
    )
  })

  it("a changed character in the signature text fails, including non-canonical base64url", () => {
    const payload = { a: 1 }
    const minted = signPayload(signer, payload)
    const text = minted.signature
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for (let i = "ed25519:".length; i < text.length; i++) {
      const replacement = alphabet[(alphabet.indexOf(text[i]) + 1) % 64]
      const changed = text.slice(0, i) + replacement + text.slice(i + 1)
      expect(signer.verify(minted.bytes, changed)).toBe(false)
      expect(verifyReceipt({ signed_payload: payload, payload_hash: minted.payload_hash, signature: changed, public_key: jwk }).checks.signature).toBe(false)
    }
    expect(verifyReceipt({ signed_payload: payload, payload_hash: minted.payload_hash, signature: text + "=", public_key: jwk }).valid).toBe(false)
    expect(verifyReceipt({ signed_payload: payload, payload_hash: minted.payload_hash, signature: text.slice("ed25519:".length), public_key: jwk }).valid).toBe(false)
  })

  it("a changed payload value fails the hash and the signature", () => {
    const payload = { agent_id: "agent_lending_001", agent_sequence: 3, outcome: "approved" }
    const minted = signPayload(signer, payload)
    const result = verifyReceipt({
      signed_payload: { ...payload, outcome: "denied" },
      payload_hash: minted.payload_hash,
      signature: minted.signature,
      public_key: jwk
    })
    expect(result.valid).toBe(false)
    expect(result.checks).toEqual({ payload_hash: false, signature: false })
    expect(result.errors.map((e) => e.split(":")[0])).toEqual(["payload_hash", "signature"])
  })

  it("another key does not verify", () => {
    const other = importSigningKey(generateSigningKey().privateKeyPkcs8Der)
    const minted = signPayload(signer, { x: 1 })
    expect(verifySignature(other.publicKeyRaw, minted.bytes, minted.signature)).toBe(false)
    expect(verifyReceipt({ signed_payload: { x: 1 }, payload_hash: minted.payload_hash, signature: minted.signature, public_key: other.publicKeyRaw }).checks.signature).toBe(false)
  })

  it("rejects malformed keys and JWKs without throwing", () => {
    const minted = signPayload(signer, { x: 1 })
    const base = { signed_payload: { x: 1 }, payload_hash: minted.payload_hash, signature: minted.signature }
    expect(verifyReceipt({ ...base, public_key: new Uint8Array(31) }).checks.signature).toBe(false)
    expect(verifyReceipt({ ...base, public_key: { ...jwk, crv: "X25519" as "Ed25519" } }).checks.signature).toBe(false)
    expect(verifyReceipt({ ...base, public_key: { kty: "OKP", crv: "Ed25519", x: "abc" } }).checks.signature).toBe(false)
    expect(verifySignature(new Uint8Array(32), minted.bytes, minted.signature)).toBe(false)
  })
})

describe("key ids and hashes", () => {
  it("publicKeyId is rk_ + 16 hex of sha256(raw key), the same on both sides", () => {
    for (let i = 0; i < 20; i++) {
      const key = generateSigningKey()
      const expected = "rk_" + createHash("sha256").update(key.publicKeyRaw).digest("hex").slice(0, 16)
      expect(key.publicKeyId).toMatch(/^rk_[0-9a-f]{16}$/)
      expect(key.publicKeyId).toBe(expected)
      expect(publicKeyId(key.publicKeyRaw)).toBe(expected)
      expect(publicKeyIdOf(key.publicKeyRaw)).toBe(expected)
      expect(importSigningKey(key.privateKeyPkcs8Der).publicKeyId).toBe(expected)
      expect(key.publicKeyRaw.length).toBe(32)
    }
  })

  it("publicJwk is an OKP/Ed25519 JWK of the raw key", () => {
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", kid: signer.publicKeyId })
    expect(Buffer.from(jwk.x, "base64url").equals(Buffer.from(signer.publicKeyRaw))).toBe(true)
  })

  it("sha256 helpers match the textbook digest", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(sha256Tagged(new Uint8Array(0))).toBe("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })
})

const shuffleKeys = (value: unknown, random: () => number): unknown => {
  if (Array.isArray(value)) return value.map((item) => shuffleKeys(item, random))
  if (value === null || typeof value !== "object") return value
  const entries = Object.entries(value)
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[entries[i], entries[j]] = [entries[j], entries[i]]
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, random)]))
}

describe("canonicalization (RFC 8785)", () => {
  it("key order does not change the bytes, and server and verifier bytes are identical", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (value, seedValue) => {
        let state = seedValue >>> 0
        const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32)
        const shuffled = shuffleKeys(value, random)
        const bytes = canonicalBytes(value)
        expect(Buffer.from(canonicalBytes(shuffled)).equals(Buffer.from(bytes))).toBe(true)
        expect(canonicalJsonBytes(shuffled).equals(Buffer.from(bytes))).toBe(true)
      })
    )
  })

  it("matches known JCS output", () => {
    const text = (value: unknown) => Buffer.from(canonicalBytes(value)).toString("utf8")
    expect(text({ b: 2, a: 1, c: { z: null, y: [3, "é"] } })).toBe('{"a":1,"b":2,"c":{"y":[3,"é"],"z":null}}')
    expect(text({ n: [1e21, 1e-7, -0, 0.1, 100] })).toBe('{"n":[1e+21,1e-7,0,0.1,100]}')
    // Keys sort by UTF-16 code units (RFC 8785 §3.2.3): U+1F600 is stored as 0xD83D 0xDE00, before U+FFFF.
    expect(text({ "\uffff": 1, "😀": 2, a: 3 })).toBe('{"a":3,"😀":2,"\uffff":1}')
    expect(() => canonicalBytes({ x: Number.NaN })).toThrow()
  })
})

describe("transfer receipts (agents' transfers, estate's successions)", () => {
  const baseUrl = "https://gateway.example.test:8443"
  const at = "2026-01-02T03:04:05.678Z"
  // The wire format stored in agent_transfers since the first receipt: a change here breaks
  // every receipt already handed out, so the JCS text is pinned byte for byte.
  const cases = [
    {
      terms: { kind: "agent_transfer", agent_slug: "mailer", previous_owner: "org_a", new_owner: "org_b" },
      id: "atr_1",
      text: '{"agent_did":"did:web:gateway.example.test%3A8443:agents:mailer","agent_slug":"mailer","new_owner":"org_b","previous_owner":"org_a","receipt_type":"agent_transfer","receipt_version":"1.0","transfer_receipt_id":"atr_1","transferred_at":"2026-01-02T03:04:05.678Z"}'
    },
    {
      terms: { kind: "agent_succession", agent_slug: "mailer", previous_owner: "org_a", new_owner: "org_a", successor_slug: "heir", certificate_id: "dc_1" },
      id: "atr_2",
      text: '{"agent_did":"did:web:gateway.example.test%3A8443:agents:mailer","agent_slug":"mailer","certificate_id":"dc_1","new_owner":"org_a","previous_owner":"org_a","receipt_type":"agent_succession","receipt_version":"1.0","successor_did":"did:web:gateway.example.test%3A8443:agents:heir","successor_slug":"heir","transfer_receipt_id":"atr_2","transferred_at":"2026-01-02T03:04:05.678Z"}'
    }
  ] as const

  it.each(cases)("$terms.kind: pinned JCS payload, verifies offline with the portable verifier", ({ terms, id, text }) => {
    const receipt = mintTransferReceipt(signer, baseUrl, terms, id, at)
    expect(receipt.signed_payload).toBe(text)
    expect(receipt.payload_hash).toBe(`sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`)
    expect(receipt).toMatchObject({
      transfer_receipt_id: id,
      agent_slug: terms.agent_slug,
      previous_owner: terms.previous_owner,
      new_owner: terms.new_owner,
      public_key_id: signer.publicKeyId,
      transferred_at: at
    })
    const offline = verifyReceipt({ signed_payload: JSON.parse(receipt.signed_payload), payload_hash: receipt.payload_hash, signature: receipt.signature, public_key: jwk })
    expect(offline).toEqual({ valid: true, checks: { payload_hash: true, signature: true }, errors: [] })
    // Any change to the stored text fails it.
    const altered = JSON.parse(receipt.signed_payload.replace('"org_a"', '"org_x"'))
    expect(verifyReceipt({ signed_payload: altered, payload_hash: receipt.payload_hash, signature: receipt.signature, public_key: jwk }).valid).toBe(false)
  })
})

describe("receipt hash chain", () => {
  const first = { org_uuid: "org_1", agent_id: "agent_1", agent_sequence: 1, previous_payload_hash: null, outcome: "a" }
  const firstHash = payloadHash(first)
  const second = { org_uuid: "org_1", agent_id: "agent_1", agent_sequence: 2, previous_payload_hash: firstHash, outcome: "b" }
  const minted = signPayload(signer, second)
  const base = { signed_payload: second, payload_hash: minted.payload_hash, signature: minted.signature, public_key: jwk }

  it("links to the previous receipt", () => {
    const result = verifyReceipt({ ...base, previous: { payload_hash: firstHash, signed_payload: first } })
    expect(result).toEqual({ valid: true, checks: { payload_hash: true, signature: true, chain: true }, errors: [] })
    expect(verifyReceipt({ ...base, previous: { payload_hash: firstHash } }).checks.chain).toBe(true)
  })

  it("detects a wrong link, a gap, a changed previous receipt and a cross-agent link", () => {
    const wrongHash = verifyReceipt({ ...base, previous: { payload_hash: payloadHash({ other: true }) } })
    expect(wrongHash.valid).toBe(false)
    expect(wrongHash.checks.chain).toBe(false)

    const gap = { ...first, agent_sequence: 0 }
    const gapResult = verifyReceipt({ ...base, previous: { payload_hash: firstHash, signed_payload: gap } })
    expect(gapResult.checks.chain).toBe(false)

    const edited = { ...first, outcome: "edited" }
    expect(verifyReceipt({ ...base, previous: { payload_hash: firstHash, signed_payload: edited } }).checks.chain).toBe(false)

    const otherAgent = { ...first, agent_id: "agent_2" }
    const otherResult = verifyReceipt({ ...base, previous: { payload_hash: payloadHash(otherAgent), signed_payload: otherAgent } })
    expect(otherResult.checks.chain).toBe(false)
    expect(otherResult.errors.every((e) => e.startsWith("chain:"))).toBe(true)
  })
})

// --- RFC 3161 tokens -------------------------------------------------------

const tempDirs: string[] = []
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
})

const hasOpenssl = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** A throwaway OpenSSL TSA: the tokens the verifier reads come from an independent implementation. */
const makeOpensslTsa = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tsa-test-"))
  tempDirs.push(dir)
  const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
  run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "tsa.key", "-out", "tsa.crt", "-subj", "/CN=Test TSA", "-days", "1", "-addext", "extendedKeyUsage=critical,timeStamping"])
  fs.writeFileSync(path.join(dir, "serial"), "01\n")
  fs.writeFileSync(
    path.join(dir, "tsa.cnf"),
    [
      "[ tsa ]",
      "default_tsa = tsa_config",
      "[ tsa_config ]",
      `serial = ${path.join(dir, "serial")}`,
      `signer_cert = ${path.join(dir, "tsa.crt")}`,
      `signer_key = ${path.join(dir, "tsa.key")}`,
      "signer_digest = sha256",
      "default_policy = 1.2.3.4.1",
      "digests = sha256, sha1",
      "accuracy = secs:1",
      "ess_cert_id_alg = sha256",
      ""
    ].join("\n")
  )
  return (digestHex: string, algorithm: "sha256" | "sha1" = "sha256"): string => {
    run(["ts", "-query", "-digest", digestHex, `-${algorithm}`, "-cert", "-out", "q.tsq"])
    run(["ts", "-reply", "-config", "tsa.cnf", "-queryfile", "q.tsq", "-token_out", "-out", "token.der"])
    return fs.readFileSync(path.join(dir, "token.der")).toString("base64")
  }
}

describe.skipIf(!hasOpenssl)("timestamp imprint (tokens from an OpenSSL TSA)", () => {
  const stamp = hasOpenssl ? makeOpensslTsa() : () => ""

  it("reads the imprint and genTime and checks them against the receipt", () => {
    const payload = { receipt_uuid: "r1", agent_sequence: 1, details: "Approved €200,000" }
    const minted = signPayload(signer, payload)
    const before = Date.now()
    const token = stamp(minted.payload_hash.slice("sha256:".length))
    const imprint = readTimestampImprint(token)
    expect(imprint.hashAlgorithm).toBe("2.16.840.1.101.3.4.2.1")
    expect("sha256:" + Buffer.from(imprint.hashedMessage).toString("hex")).toBe(minted.payload_hash)
    const genTime = readTimestampGenTime(Buffer.from(token, "base64"))
    expect(Math.abs(genTime.getTime() - before)).toBeLessThan(60_000)

    const base = { signed_payload: payload, payload_hash: minted.payload_hash, signature: minted.signature, public_key: jwk }
    expect(verifyReceipt({ ...base, timestamp_token: token })).toEqual({
      valid: true,
      checks: { payload_hash: true, signature: true, timestamp_imprint: true },
      errors: []
    })

    const otherToken = stamp(sha256Hex("something else"))
    const mismatch = verifyReceipt({ ...base, timestamp_token: otherToken })
    expect(mismatch.valid).toBe(false)
    expect(mismatch.checks.timestamp_imprint).toBe(false)

    const sha1Token = stamp(createHash("sha1").update(minted.bytes).digest("hex"), "sha1")
    expect(readTimestampImprint(sha1Token).hashAlgorithm).toBe("1.3.14.3.2.26")
    expect(verifyReceipt({ ...base, timestamp_token: sha1Token }).checks.timestamp_imprint).toBe(false)
  })

  it("a damaged token is reported, never thrown", () => {
    const payload = { x: 1 }
    const minted = signPayload(signer, payload)
    const der = Buffer.from(stamp(minted.payload_hash.slice(7)), "base64")
    const base = { signed_payload: payload, payload_hash: minted.payload_hash, signature: minted.signature, public_key: jwk }
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 255 }), fc.nat(), (position, mask, cut) => {
        const damaged = new Uint8Array(der)
        damaged[position % der.length] ^= mask
        const truncated = der.subarray(0, cut % der.length)
        for (const token of [damaged, truncated]) {
          const result = verifyReceipt({ ...base, timestamp_token: token })
          // A flip inside the CMS signature or certificate leaves the imprint intact: that is for openssl ts -verify.
          if (result.checks.timestamp_imprint === false) expect(result.errors.some((e) => e.startsWith("timestamp_imprint:"))).toBe(true)
        }
        expect(verifyReceipt({ ...base, timestamp_token: truncated }).checks.timestamp_imprint).toBe(false)
      })
    )
  })
})

// A tiny DER writer, independent of the reader, for tokens with arbitrary imprints.
const derElement = (tag: number, content: Uint8Array): Uint8Array => {
  const length = content.length
  const header =
    length < 0x80 ? [tag, length] : length < 0x100 ? [tag, 0x81, length] : [tag, 0x82, length >> 8, length & 0xff]
  return new Uint8Array([...header, ...content])
}
const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(parts.flatMap((p) => [...p]))
const oidBytes = (dotted: string): Uint8Array => {
  const [a, b, ...rest] = dotted.split(".").map(Number)
  const out = [40 * a + b]
  for (const arc of rest) {
    const digits = [arc & 0x7f]
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) digits.unshift((v & 0x7f) | 0x80)
    out.push(...digits)
  }
  return derElement(0x06, new Uint8Array(out))
}
const handMadeToken = (digest: Uint8Array, genTime: string): Uint8Array => {
  const ascii = (s: string) => new Uint8Array([...s].map((c) => c.charCodeAt(0)))
  const tstInfo = derElement(
    0x30,
    concat(
      derElement(0x02, Uint8Array.of(1)),
      oidBytes("1.2.3.4.1"),
      derElement(0x30, concat(derElement(0x30, concat(oidBytes("2.16.840.1.101.3.4.2.1"), derElement(0x05, new Uint8Array(0)))), derElement(0x04, digest))),
      derElement(0x02, Uint8Array.of(0x01, 0x00)),
      derElement(0x18, ascii(genTime))
    )
  )
  const encap = derElement(0x30, concat(oidBytes("1.2.840.113549.1.9.16.1.4"), derElement(0xa0, derElement(0x04, tstInfo))))
  const signedData = derElement(0x30, concat(derElement(0x02, Uint8Array.of(3)), derElement(0x31, new Uint8Array(0)), encap, derElement(0x31, new Uint8Array(0))))
  return derElement(0x30, concat(oidBytes("1.2.840.113549.1.7.2"), derElement(0xa0, signedData)))
}

describe("DER reader", () => {
  it("reads the imprint and time of hand-built tokens", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.date({ min: new Date("2000-01-01"), max: new Date("2099-12-31"), noInvalidDate: true }), (digest, date) => {
        const iso = date.toISOString()
        const millis = iso.slice(20, 23).replace(/0+$/, "")
        const genTime = iso.slice(0, 19).replace(/[-:T]/g, "") + (millis ? "." + millis : "") + "Z"
        const token = handMadeToken(digest, genTime)
        expect(Buffer.from(readTimestampImprint(token).hashedMessage).equals(Buffer.from(digest))).toBe(true)
        expect(readTimestampGenTime(token).toISOString()).toBe(iso)
      })
    )
  })

  it("rejects invalid times and wrong structures with DerError", () => {
    const digest = new Uint8Array(32)
    expect(() => readTimestampGenTime(handMadeToken(digest, "20260230120000Z"))).toThrow(DerError)
    expect(() => readTimestampGenTime(handMadeToken(digest, "20260101246000Z"))).toThrow(DerError)
    expect(() => readTimestampImprint(derElement(0x30, oidBytes("1.2.3")))).toThrow(DerError)
    expect(() => readTimestampImprint(concat(handMadeToken(digest, "20260101000000Z"), Uint8Array.of(0)))).toThrow(DerError)
  })

  it("random bytes only ever raise DerError or EncodingError", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        try {
          readTimestampImprint(bytes)
        } catch (error) {
          expect(error instanceof DerError || error instanceof EncodingError).toBe(true)
        }
      })
    )
  })
})

describe("base64url", () => {
  it("round-trips and matches Buffer's encoding", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = base64UrlEncode(bytes)
        expect(text).toBe(Buffer.from(bytes).toString("base64url"))
        expect(Buffer.from(base64UrlDecode(text)).equals(Buffer.from(bytes))).toBe(true)
      })
    )
  })

  it("rejects padding, foreign characters and non-canonical trailing bits", () => {
    expect(() => base64UrlDecode("QQ==")).toThrow(EncodingError)
    expect(() => base64UrlDecode("Q+")).toThrow(EncodingError)
    expect(() => base64UrlDecode("QR")).toThrow(EncodingError) // "QQ" is the canonical form of 0x41
    expect(() => base64UrlDecode("Q")).toThrow(EncodingError)
    expect(Buffer.from(base64UrlDecode("QQ")).toString()).toBe("A")
  })
})

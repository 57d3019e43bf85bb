/**
 * RFC 3161: the internal timestamp authority, its tokens as OpenSSL sees them,
 * the client against it, and the token parser/verifier.
 */
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as asn1js from "asn1js"
import fc from "fast-check"
import * as pkijs from "pkijs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readGeneralizedTime, readOid, readSingle } from "../protocol/verifier/der.js"
import {
  createTimestampAuthority,
  DEFAULT_POLICY_OID,
  generateTsaMaterial,
  loadTimestampAuthority,
  type TimestampAuthority,
  type TsaMaterial,
} from "../src/receipts/tsa/authority.js"
import {
  buildTimestampRequest,
  requestTimestamp,
  type TimestampPost,
  TimestampRequestError,
} from "../src/receipts/tsa/client.js"
import { derGeneralizedTime, derInteger } from "../src/receipts/tsa/der-writer.js"
import { parseTimestampToken, TimestampTokenError } from "../src/receipts/tsa/parse.js"
import { verifyTimestampToken } from "../src/receipts/tsa/verify.js"

const sha256 = (text: string): Uint8Array => new Uint8Array(crypto.createHash("sha256").update(text).digest())
const hexOf = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")

let workDir: string
let rsaMaterial: TsaMaterial
let rsa: TimestampAuthority
let ecdsa: TimestampAuthority

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "tsa-test-"))
  rsaMaterial = await generateTsaMaterial()
  rsa = loadTimestampAuthority(rsaMaterial)
  ecdsa = loadTimestampAuthority(await generateTsaMaterial({ algorithm: "ECDSA-P256" }))
})

afterAll(() => rmSync(workDir, { recursive: true, force: true }))

let fileCounter = 0
const writeTemp = (name: string, contents: Uint8Array | string): string => {
  const path = join(workDir, `${fileCounter++}-${name}`)
  writeFileSync(path, contents)
  return path
}

const openssl = (args: ReadonlyArray<string>): { ok: boolean; stdout: string; stderr: string } => {
  const result = spawnSync("openssl", args, { encoding: "utf8" })
  return { ok: result.status === 0, stdout: result.stdout, stderr: result.stderr }
}

// The invocation auditors use; no -partial_chain is needed (see authority.ts).
const opensslVerifyToken = (token: Uint8Array, digest: Uint8Array, certificatePem: string) =>
  openssl([
    "ts",
    "-verify",
    "-digest",
    hexOf(digest),
    "-sha256",
    "-token_in",
    "-in",
    writeTemp("token.der", token),
    "-CAfile",
    writeTemp("tsa.pem", certificatePem),
  ])

describe("timestamp authority tokens", () => {
  it("parse back to the stamped imprint, a current genTime and the nonce", async () => {
    const digest = sha256("receipt payload")
    const before = Date.now()
    const token = await rsa.stamp(digest, { nonce: 987654321987654321n })
    const info = parseTimestampToken(token)
    expect(hexOf(info.imprint)).toBe(hexOf(digest))
    expect(info.imprintAlgorithm).toBe("2.16.840.1.101.3.4.2.1")
    expect(info.genTime.getTime()).toBeGreaterThanOrEqual(before - 1)
    expect(Math.abs(info.genTime.getTime() - Date.now())).toBeLessThan(5_000)
    expect(info.policy).toBe(DEFAULT_POLICY_OID)
    expect(info.serial).toMatch(/^[1-9][0-9]*$/)
    expect(BigInt(info.serial)).toBeLessThan(2n ** 63n)
    expect(info.nonce).toBe(987654321987654321n)
  })

  it("get a fresh serial per token", () => {
    const digest = sha256("same")
    const serials = new Set(Array.from({ length: 50 }, () => parseTimestampToken(rsa.stampSync(digest)).serial))
    expect(serials.size).toBe(50)
  })

  it("round-trip any digest, nonce and time (property)", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.option(fc.bigInt({ min: -(2n ** 100n), max: 2n ** 160n }), { nil: undefined }),
        fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2200-12-31T23:59:59Z"), noInvalidDate: true }),
        (digest, nonce, now) => {
          const token = ecdsa.stampSync(digest, { now, ...(nonce === undefined ? {} : { nonce }) })
          const info = parseTimestampToken(token)
          expect(hexOf(info.imprint)).toBe(hexOf(digest))
          expect(info.genTime.getTime()).toBe(now.getTime())
          expect(info.nonce).toBe(nonce)
          const verification = verifyTimestampToken(token, { digest, certificateDer: ecdsa.certificateDer })
          // Outside the certificate's validity the signature still holds but the token is refused.
          const inValidity =
            now.getTime() >= Date.parse(new crypto.X509Certificate(ecdsa.certificateDer).validFrom) &&
            now.getTime() <= Date.parse(new crypto.X509Certificate(ecdsa.certificateDer).validTo)
          expect(verification.valid).toBe(inValidity)
        },
      ),
      { numRuns: 150 },
    )
  })

  it("carry the four signed attributes in DER SET OF order", () => {
    for (const authority of [rsa, ecdsa]) {
      const token = authority.stampSync(sha256("order"), { nonce: 1n })
      const contentInfo = pkijs.ContentInfo.fromBER(token)
      const signerInfo = new pkijs.SignedData({ schema: contentInfo.content }).signerInfos[0]
      const attributes = signerInfo.signedAttrs!.attributes
      expect(attributes.map((attribute) => attribute.type).sort()).toEqual([
        "1.2.840.113549.1.9.16.2.47",
        "1.2.840.113549.1.9.3",
        "1.2.840.113549.1.9.4",
        "1.2.840.113549.1.9.5",
      ])
      const encodings = attributes.map((attribute) => Buffer.from(attribute.toSchema().toBER(false)))
      const sorted = [...encodings].sort(Buffer.compare)
      expect(encodings.map((item) => item.toString("hex"))).toEqual(sorted.map((item) => item.toString("hex")))
    }
  })

  it("refuse an imprint that is not 32 bytes", async () => {
    await expect(rsa.stamp(new Uint8Array(20))).rejects.toThrow(/32-byte/)
  })
})

describe("OpenSSL accepts the tokens", () => {
  it("verifies an RSA token with the TSA certificate and refuses a different digest", () => {
    const digest = sha256("audited action")
    const token = rsa.stampSync(digest)
    const good = opensslVerifyToken(token, digest, rsa.certificatePem)
    expect(good.stdout + good.stderr).toContain("Verification: OK")
    expect(good.ok).toBe(true)

    const other = opensslVerifyToken(token, sha256("another action"), rsa.certificatePem)
    expect(other.stdout).not.toContain("Verification: OK")
    expect(other.stderr).toContain("message imprint mismatch")
    expect(other.ok).toBe(false)
  })

  it("verifies an ECDSA P-256 token too", () => {
    const digest = sha256("ecdsa")
    const result = opensslVerifyToken(ecdsa.stampSync(digest, { nonce: 42n }), digest, ecdsa.certificatePem)
    expect(result.stdout).toContain("Verification: OK")
  })

  it("refuses a token checked against another TSA certificate", () => {
    const digest = sha256("wrong anchor")
    const result = opensslVerifyToken(rsa.stampSync(digest), digest, ecdsa.certificatePem)
    expect(result.stdout).not.toContain("Verification: OK")
    expect(result.ok).toBe(false)
  })

  it("answers an OpenSSL-built TimeStampReq with a response OpenSSL verifies against the query", async () => {
    const digest = sha256("query from openssl")
    const queryPath = writeTemp("req.tsq", "")
    const query = openssl(["ts", "-query", "-digest", hexOf(digest), "-sha256", "-cert", "-out", queryPath])
    expect(query.ok).toBe(true)
    const response = await rsa.stampResponse(new Uint8Array(readFileSync(queryPath)))
    const responsePath = writeTemp("resp.tsr", response)
    const caPath = writeTemp("tsa.pem", rsa.certificatePem)

    const byQuery = openssl(["ts", "-verify", "-in", responsePath, "-queryfile", queryPath, "-CAfile", caPath])
    expect(byQuery.stdout).toContain("Verification: OK")
    const byDigest = openssl(["ts", "-verify", "-digest", hexOf(digest), "-in", responsePath, "-CAfile", caPath])
    expect(byDigest.stdout).toContain("Verification: OK")
  })

  it("needs -untrusted with the TSA certificate when the token carries no certificate", () => {
    const digest = sha256("no certificate")
    const token = rsa.stampSync(digest, { includeCertificate: false })
    const tokenPath = writeTemp("token.der", token)
    const caPath = writeTemp("tsa.pem", rsa.certificatePem)
    const base = ["ts", "-verify", "-digest", hexOf(digest), "-token_in", "-in", tokenPath, "-CAfile", caPath]
    expect(openssl(base).ok).toBe(false)
    expect(openssl([...base, "-untrusted", caPath]).stdout).toContain("Verification: OK")
  })

  it("issues a certificate OpenSSL reads as a critical timeStamping-only TSA certificate", () => {
    const text = openssl(["x509", "-noout", "-text", "-in", writeTemp("tsa.pem", rsa.certificatePem)]).stdout
    expect(text).toContain("Subject: CN = Agent Gateway Timestamp Authority")
    expect(text).toMatch(/X509v3 Extended Key Usage: critical\s+Time Stamping/)
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Non Repudiation/)
    const x509 = new crypto.X509Certificate(rsa.certificateDer)
    const years = (Date.parse(x509.validTo) - Date.parse(x509.validFrom)) / (365.25 * 24 * 3600 * 1000)
    expect(years).toBeGreaterThan(9.9)
    expect(years).toBeLessThan(10.1)
    // Self-signed (X509_check_issued says no, because keyUsage rightly lacks keyCertSign).
    expect(x509.issuer).toBe(x509.subject)
    expect(x509.verify(x509.publicKey)).toBe(true)
  })
})

describe("stampResponse", () => {
  const statusOf = (responseDer: Uint8Array) => {
    const response = pkijs.TimeStampResp.fromBER(responseDer)
    return { status: response.status.status, failBits: response.status.failInfo, token: response.timeStampToken }
  }

  it("grants a well-formed request and honours certReq", async () => {
    const digest = sha256("certReq")
    const withCert = statusOf(await rsa.stampResponse(buildTimestampRequest(digest, 7n)))
    expect(withCert.status).toBe(0)
    const signedData = new pkijs.SignedData({ schema: withCert.token!.content })
    expect(signedData.certificates?.length).toBe(1)

    // Same request with certReq omitted (DEFAULT FALSE): no certificate in the token.
    const imprint = new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: "2.16.840.1.101.3.4.2.1" }),
      hashedMessage: new asn1js.OctetString({ valueHex: digest }),
    })
    const bare = new pkijs.TimeStampReq({ version: 1, messageImprint: imprint, nonce: asn1js.Integer.fromBigInt(9n) })
    const withoutCert = statusOf(await rsa.stampResponse(new Uint8Array(bare.toSchema().toBER(false))))
    expect(withoutCert.status).toBe(0)
    expect(new pkijs.SignedData({ schema: withoutCert.token!.content }).certificates).toBeUndefined()
  })

  it("rejects malformed requests and foreign hash algorithms with the right failure bit", async () => {
    const malformed = statusOf(await rsa.stampResponse(new Uint8Array([0x30, 0x03, 0x02, 0x01])))
    expect(malformed.status).toBe(2)
    expect(malformed.token).toBeUndefined()
    // badDataFormat is bit 5: 0000_0100 with two unused bits.
    expect(hexOf(malformed.failBits!.valueBlock.valueHexView)).toBe("04")
    expect(malformed.failBits!.valueBlock.unusedBits).toBe(2)

    const sha1Request = new pkijs.TimeStampReq({
      version: 1,
      messageImprint: new pkijs.MessageImprint({
        hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: "1.3.14.3.2.26" }),
        hashedMessage: new asn1js.OctetString({ valueHex: new Uint8Array(20) }),
      }),
    })
    const badAlg = statusOf(await rsa.stampResponse(new Uint8Array(sha1Request.toSchema().toBER(false))))
    expect(badAlg.status).toBe(2)
    expect(hexOf(badAlg.failBits!.valueBlock.valueHexView)).toBe("80")
    expect(badAlg.failBits!.valueBlock.unusedBits).toBe(7)

    const otherPolicy = new pkijs.TimeStampReq({
      version: 1,
      messageImprint: new pkijs.MessageImprint({
        hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: "2.16.840.1.101.3.4.2.1" }),
        hashedMessage: new asn1js.OctetString({ valueHex: new Uint8Array(32) }),
      }),
      reqPolicy: "1.2.3.4",
    })
    const unacceptedPolicy = statusOf(await rsa.stampResponse(new Uint8Array(otherPolicy.toSchema().toBER(false))))
    expect(unacceptedPolicy.status).toBe(2)
    expect(hexOf(unacceptedPolicy.failBits!.valueBlock.valueHexView)).toBe("0001")
  })
})

describe("RFC 3161 client", () => {
  const inProcess =
    (authority: TimestampAuthority, seen: Array<{ url: string; headers: Record<string, string> }> = []): TimestampPost =>
    async (url, body, headers) => {
      seen.push({ url, headers: { ...headers } })
      return { status: 200, body: await authority.stampResponse(body) }
    }

  it("gets a token from stampResponse that OpenSSL verifies", async () => {
    const digest = sha256("client round trip")
    const seen: Array<{ url: string; headers: Record<string, string> }> = []
    const token = await requestTimestamp("https://tsa.example/tsr", digest, inProcess(rsa, seen), {
      trustedCertificateDer: rsa.certificateDer,
    })
    expect(seen).toEqual([
      {
        url: "https://tsa.example/tsr",
        headers: { "content-type": "application/timestamp-query", accept: "application/timestamp-reply" },
      },
    ])
    expect(hexOf(parseTimestampToken(token).imprint)).toBe(hexOf(digest))
    expect(parseTimestampToken(token).nonce).toBeTypeOf("bigint")
    expect(opensslVerifyToken(token, digest, rsa.certificatePem).stdout).toContain("Verification: OK")
  })

  const failureOf = async (promise: Promise<unknown>): Promise<string> => {
    try {
      await promise
    } catch (error) {
      if (error instanceof TimestampRequestError) return error.reason
      throw error
    }
    return "succeeded"
  }

  it("refuses a replayed response whose nonce belongs to another request", async () => {
    const digest = sha256("replay")
    const stale = await rsa.stampResponse(buildTimestampRequest(digest, 1n))
    const replay: TimestampPost = async () => ({ status: 200, body: stale })
    expect(await failureOf(requestTimestamp("https://tsa.example", digest, replay))).toBe("nonce_mismatch")
  })

  it("refuses a token for another digest, a foreign TSA, rejections, HTTP errors and garbage", async () => {
    const digest = sha256("checked")
    const otherDigest: TimestampPost = async (_url, body) => {
      const request = pkijs.TimeStampReq.fromBER(body)
      const swapped = buildTimestampRequest(sha256("something else"), request.nonce!.toBigInt())
      return { status: 200, body: await rsa.stampResponse(swapped) }
    }
    expect(await failureOf(requestTimestamp("u", digest, otherDigest))).toBe("invalid_token")
    expect(
      await failureOf(requestTimestamp("u", digest, inProcess(ecdsa), { trustedCertificateDer: rsa.certificateDer })),
    ).toBe("invalid_token")
    const rejecting: TimestampPost = async () => ({ status: 200, body: await rsa.stampResponse(new Uint8Array([1])) })
    expect(await failureOf(requestTimestamp("u", digest, rejecting))).toBe("rejected")
    const httpError: TimestampPost = async () => ({ status: 503, body: new Uint8Array() })
    expect(await failureOf(requestTimestamp("u", digest, httpError))).toBe("http_status")
    const garbage: TimestampPost = async () => ({ status: 200, body: new Uint8Array([0x30, 0x80, 0x00]) })
    expect(await failureOf(requestTimestamp("u", digest, garbage))).toBe("malformed_response")
    expect(await failureOf(requestTimestamp("u", new Uint8Array(31), inProcess(rsa)))).toBe("invalid_digest")
  })
})

describe("persisted TSA identity", () => {
  it("reloads from material and issues tokens that verify with the same certificate", async () => {
    const material = await generateTsaMaterial()
    const first = loadTimestampAuthority(material)
    // Simulate storage: the caller gets plain bytes back.
    const stored = {
      privateKeyPkcs8Der: new Uint8Array(Buffer.from(material.privateKeyPkcs8Der)),
      certificateDer: new Uint8Array(Buffer.from(material.certificateDer)),
    }
    const reloaded = await createTimestampAuthority(stored)
    expect(reloaded.certificatePem).toBe(first.certificatePem)

    const digest = sha256("after restart")
    const token = await reloaded.stamp(digest)
    expect(opensslVerifyToken(token, digest, first.certificatePem).stdout).toContain("Verification: OK")
    expect(verifyTimestampToken(token, { digest, certificateDer: first.certificateDer }).valid).toBe(true)
  })

  it("refuses a private key that does not belong to the certificate", () => {
    expect(() =>
      loadTimestampAuthority({ privateKeyPkcs8Der: rsaMaterial.privateKeyPkcs8Der, certificateDer: ecdsa.certificateDer }),
    ).toThrow(/does not match/)
  })

  it("generates a fresh identity when no material is given", async () => {
    const authority = await createTimestampAuthority()
    expect(authority.certificateDer).not.toEqual(rsa.certificateDer)
    const digest = sha256("fresh")
    expect(verifyTimestampToken(await authority.stamp(digest), { digest }).valid).toBe(true)
  })
})

describe("verifyTimestampToken", () => {
  it("accepts an intact token and reports why a damaged one fails", () => {
    const digest = sha256("verify me")
    const token = rsa.stampSync(digest)
    const ok = verifyTimestampToken(token, { digest, certificateDer: rsa.certificateDer })
    expect(ok.valid).toBe(true)
    if (ok.valid) expect(hexOf(ok.signerCertificateDer)).toBe(hexOf(rsa.certificateDer))

    const wrongDigest = verifyTimestampToken(token, { digest: sha256("other") })
    expect(wrongDigest).toEqual({ valid: false, reason: "message imprint does not match the digest" })

    const foreign = verifyTimestampToken(token, { certificateDer: ecdsa.certificateDer })
    expect(foreign).toEqual({ valid: false, reason: "signer certificate not found" })

    // Flip a byte of the imprint inside the TSTInfo: the messageDigest attribute no longer matches.
    const at = Buffer.from(token).indexOf(Buffer.from(digest))
    const tampered = new Uint8Array(token)
    tampered[at] ^= 0x01
    const result = verifyTimestampToken(tampered)
    expect(result.valid).toBe(false)
    if (!result.valid) expect(result.reason).toBe("messageDigest attribute does not match the TSTInfo")

    // Flip the last byte (inside the signature value).
    const badSignature = new Uint8Array(token)
    badSignature[badSignature.length - 1] ^= 0x01
    expect(verifyTimestampToken(badSignature)).toEqual({ valid: false, reason: "signature does not verify" })

    expect(verifyTimestampToken(new Uint8Array([0x30, 0x00])).valid).toBe(false)
    expect(() => parseTimestampToken(new Uint8Array([0x05, 0x00]))).toThrow(/timestamp token/)
  })

  it("verifies tokens from OpenSSL's own TSA (external interop)", () => {
    // A throwaway OpenSSL TSA: CA-less self-signed cert with critical timeStamping EKU.
    const config = writeTemp(
      "tsa.cnf",
      [
        "[ req ]",
        "distinguished_name = dn",
        "x509_extensions = ext",
        "prompt = no",
        "[ dn ]",
        "CN = OpenSSL Test TSA",
        "[ ext ]",
        "basicConstraints = critical, CA:FALSE",
        "keyUsage = critical, digitalSignature, nonRepudiation",
        "extendedKeyUsage = critical, timeStamping",
        "[ tsa ]",
        "default_tsa = tsa_config",
        "[ tsa_config ]",
        `serial = ${join(workDir, "openssl-tsa-serial")}`,
        "default_policy = 1.2.3.4.1",
        "digests = sha256",
        "signer_digest = sha256",
        "ess_cert_id_alg = sha256",
        "accuracy = secs:1",
        "",
      ].join("\n"),
    )
    writeFileSync(join(workDir, "openssl-tsa-serial"), "01\n")
    const keyPath = join(workDir, "openssl-tsa.key")
    const certPath = join(workDir, "openssl-tsa.pem")
    expect(
      openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", keyPath,
        "-out", certPath, "-days", "2", "-config", config]).ok,
    ).toBe(true)
    const digest = sha256("stamped by openssl")
    const queryPath = writeTemp("q.tsq", "")
    expect(openssl(["ts", "-query", "-digest", hexOf(digest), "-sha256", "-cert", "-out", queryPath]).ok).toBe(true)
    const tokenPath = join(workDir, "openssl-token.der")
    const reply = openssl(["ts", "-reply", "-config", config, "-queryfile", queryPath, "-signer", certPath,
      "-inkey", keyPath, "-token_out", "-out", tokenPath])
    expect(reply.ok).toBe(true)
    const token = new Uint8Array(readFileSync(tokenPath))
    const certificateDer = new Uint8Array(new crypto.X509Certificate(readFileSync(certPath)).raw)
    const result = verifyTimestampToken(token, { digest, certificateDer })
    expect(result).toMatchObject({ valid: true })
    expect(parseTimestampToken(token).policy).toBe("1.2.3.4.1")
  })
})

describe("DER writer (property)", () => {
  it("encodes integers exactly as asn1js does", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }), (value) => {
        expect(hexOf(derInteger(value))).toBe(hexOf(new Uint8Array(asn1js.Integer.fromBigInt(value).toBER(false))))
      }),
      { numRuns: 500 },
    )
  })

  it("writes GeneralizedTime that parses back to the same instant", () => {
    fc.assert(
      fc.property(
        // From 1000: asn1js maps two-digit years through Date.UTC (year 99 → 1999).
        fc.date({ min: new Date("1000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (date) => {
          const encoded = derGeneralizedTime(date)
          const text = Buffer.from(encoded.subarray(2)).toString("latin1")
          expect(text).toMatch(/^\d{14}(\.\d*[1-9])?Z$/)
          const parsed = asn1js.fromBER(encoded).result as asn1js.GeneralizedTime
          expect(parsed.toDate().getTime()).toBe(date.getTime())
        },
      ),
      { numRuns: 500 },
    )
  })

  it("reads back integers, OIDs and GeneralizedTime it or asn1js wrote", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }), (value) => {
        expect((asn1js.fromBER(derInteger(value)).result as asn1js.Integer).toBigInt()).toBe(value)
      }),
      { numRuns: 300 },
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 39 }),
        fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { maxLength: 8 }),
        (first, second, rest) => {
          const dotted = [first, second, ...rest].join(".")
          const encoded = new Uint8Array(new asn1js.ObjectIdentifier({ value: dotted }).toBER(false))
          expect(readOid(readSingle(encoded))).toBe(dotted)
        },
      ),
      { numRuns: 300 },
    )
    fc.assert(
      fc.property(
        fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (date) => {
          expect(readGeneralizedTime(readSingle(derGeneralizedTime(date))).getTime()).toBe(date.getTime())
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe("damaged tokens (property)", () => {
  it("never crash the parser or the verifier; a token still found valid still says the same", () => {
    const digest = sha256("fuzz")
    const token = ecdsa.stampSync(digest, { nonce: 5n })
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: token.length - 1 }), fc.integer({ min: 1, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.nat({ max: token.length }),
        (flips, cut) => {
          const damaged = new Uint8Array(token.subarray(0, Math.max(cut, token.length - 8)))
          for (const [at, mask] of flips) if (at < damaged.length) damaged[at] ^= mask
          if (damaged.length === token.length && Buffer.from(damaged).equals(Buffer.from(token))) return
          try {
            parseTimestampToken(damaged)
          } catch (error) {
            expect(error).toBeInstanceOf(TimestampTokenError)
          }
          const result = verifyTimestampToken(damaged, { digest, certificateDer: ecdsa.certificateDer })
          // A flip in an unsigned, unchecked spot (e.g. inside the embedded certificate copy,
          // which is not used when the certificate is supplied) may leave the token valid.
          if (result.valid) {
            expect(hexOf(result.info.imprint)).toBe(hexOf(digest))
            expect(result.info.nonce).toBe(5n)
          }
        },
      ),
      { numRuns: 400 },
    )
  })
})

/**
 * The RFC 3161 token assembled from precomputed DER parts (src/receipts/tsa/token.ts)
 * against a token built the straightforward way: every TLV encoded per token and the
 * signed attributes sorted, as the writer did before it used a template. The
 * reference lives here, not in token.ts, so production code carries no second
 * builder and the reference shares none of the template's code paths beyond the
 * general DER writer (der-writer.ts), which has its own tests in tsa.test.ts.
 */
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as asn1js from "asn1js"
import fc from "fast-check"
import * as pkijs from "pkijs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_POLICY_OID } from "../src/receipts/tsa/authority.js"
import { certificatePem, generateTsaMaterial, loadTsaKey, type TsaMaterial } from "../src/receipts/tsa/certificate.js"
import { decodeSingle, encodingOf } from "../src/receipts/tsa/decode.js"
import { compareBytes, derGeneralizedTime, derInteger, derUtcTime, TAG, tlv } from "../src/receipts/tsa/der-writer.js"
import { OID } from "../src/receipts/tsa/oids.js"
import { parseTimestampToken } from "../src/receipts/tsa/parse.js"
import { type SigningScheme, signingSchemeFor } from "../src/receipts/tsa/signing.js"
import { type TokenFields, tokenTemplate } from "../src/receipts/tsa/token.js"
import { verifyTimestampToken } from "../src/receipts/tsa/verify.js"

const der = (value: { toBER(sizeOnly?: boolean): ArrayBuffer }) => new Uint8Array(value.toBER(false))
const oid = (value: string) => der(new asn1js.ObjectIdentifier({ value }))
const hexOf = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")
const bigintOf = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt("0x" + hexOf(bytes)))

/** Every TLV of the token encoded per call, attributes sorted per call. */
const referenceToken = (certificateDer: Uint8Array, scheme: SigningScheme, policyOid: string) => {
  const certificate = new pkijs.Certificate({ schema: decodeSingle(certificateDer) })
  const issuerDer = new Uint8Array(certificate.issuer.valueBeforeDecode)
  const serialDer = encodingOf(certificate.serialNumber)
  const sha256Algorithm = der(new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }).toSchema())
  const certificateHash = crypto.createHash("sha256").update(certificateDer).digest()
  const essCertIdV2 = tlv(
    TAG.sequence,
    tlv(TAG.octetString, certificateHash),
    tlv(TAG.sequence, tlv(TAG.sequence, tlv(0xa4, issuerDer)), serialDer),
  )

  return (fields: TokenFields): Uint8Array => {
    const { genTime } = fields
    const tstInfo = tlv(
      TAG.sequence,
      derInteger(1n),
      oid(policyOid),
      tlv(TAG.sequence, sha256Algorithm, tlv(TAG.octetString, fields.digest)),
      derInteger(bigintOf(fields.serial)),
      derGeneralizedTime(genTime),
      der(new pkijs.Accuracy({ seconds: 1 }).toSchema()),
      ...(fields.nonce === undefined ? [] : [derInteger(fields.nonce)]),
    )
    const signingTime =
      genTime.getUTCFullYear() < 2050
        ? derUtcTime(genTime)
        : derGeneralizedTime(new Date(Math.floor(genTime.getTime() / 1000) * 1000))
    const attributes = [
      der(
        new pkijs.Attribute({
          type: OID.contentTypeAttr,
          values: [new asn1js.ObjectIdentifier({ value: OID.tstInfo })],
        }).toSchema(),
      ),
      tlv(
        TAG.sequence,
        oid(OID.messageDigestAttr),
        tlv(TAG.set, tlv(TAG.octetString, crypto.createHash("sha256").update(tstInfo).digest())),
      ),
      tlv(TAG.sequence, oid(OID.signingTimeAttr), tlv(TAG.set, signingTime)),
      tlv(
        TAG.sequence,
        oid(OID.signingCertificateV2Attr),
        tlv(TAG.set, tlv(TAG.sequence, tlv(TAG.sequence, essCertIdV2))),
      ),
    ].sort(compareBytes)
    const signature = scheme.sign(tlv(TAG.set, ...attributes))
    const signerInfo = tlv(
      TAG.sequence,
      derInteger(1n),
      tlv(TAG.sequence, issuerDer, serialDer),
      sha256Algorithm,
      tlv(TAG.contextConstructed0, ...attributes),
      der(scheme.algorithm.toSchema()),
      tlv(TAG.octetString, signature),
    )
    const signedData = tlv(
      TAG.sequence,
      derInteger(3n),
      tlv(TAG.set, sha256Algorithm),
      tlv(TAG.sequence, oid(OID.tstInfo), tlv(TAG.contextConstructed0, tlv(TAG.octetString, tstInfo))),
      ...(fields.includeCertificate ? [tlv(TAG.contextConstructed0, certificateDer)] : []),
      tlv(TAG.set, signerInfo),
    )
    return tlv(TAG.sequence, oid(OID.signedData), tlv(TAG.contextConstructed0, signedData))
  }
}

/**
 * ECDSA signatures are randomized; this scheme signs each distinct input once and
 * replays the signature, so two builders that sign the same bytes produce the same token.
 */
const replaying = (scheme: SigningScheme): SigningScheme => {
  const seen = new Map<string, Uint8Array>()
  return {
    algorithm: scheme.algorithm,
    sign: (data) => {
      const key = hexOf(data)
      let signature = seen.get(key)
      if (signature === undefined) seen.set(key, (signature = scheme.sign(data)))
      return signature
    },
  }
}

/** A deterministic stand-in whose length (1–600 bytes) follows the input, to move every enclosing length across 128 and 256. */
const variableLengthScheme = (algorithm: pkijs.AlgorithmIdentifier): SigningScheme => ({
  algorithm,
  sign: (data) => {
    const seed = crypto.createHash("sha512").update(data).digest()
    const length = 1 + (seed.readUInt16BE(0) % 600)
    return new Uint8Array(Buffer.concat(Array.from({ length: Math.ceil(length / 64) }, () => seed)).subarray(0, length))
  },
})

// genTime from the whole Date range (years outside 0–9999 take the general encoders),
// densely around 2050 where signingTime switches from UTCTime to GeneralizedTime, and
// cut to whole seconds, tenths and hundredths as often as left with milliseconds.
const instant = fc
  .tuple(
    fc.oneof(
      fc.date({ min: new Date("1950-01-01T00:00:00Z"), max: new Date("2150-12-31T23:59:59.999Z"), noInvalidDate: true }),
      fc.date({ min: new Date("2049-12-31T23:59:58Z"), max: new Date("2050-01-01T00:00:02Z"), noInvalidDate: true }),
      fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }),
      fc.date({ noInvalidDate: true }),
    ),
    fc.constantFrom(1, 10, 100, 1000),
  )
  .map(([date, unit]) => new Date(Math.floor(date.getTime() / unit) * unit))

const tokenFields = fc.record({
  digest: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  // Leading zero bytes and a set top bit both change the INTEGER's minimal form.
  serial: fc.oneof(
    fc.uint8Array({ minLength: 8, maxLength: 8 }).map((bytes) => {
      bytes[0] &= 0x7f
      return bytes
    }),
    fc.uint8Array({ minLength: 0, maxLength: 20 }),
  ),
  genTime: instant,
  nonce: fc.option(fc.bigInt({ min: -(2n ** 1100n), max: 2n ** 1100n }), { nil: undefined }),
  includeCertificate: fc.boolean(),
})

let workDir: string
let ecdsaMaterial: TsaMaterial
let rsaMaterial: TsaMaterial

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "tsa-template-"))
  ecdsaMaterial = await generateTsaMaterial({ algorithm: "ECDSA-P256" })
  rsaMaterial = await generateTsaMaterial()
})

afterAll(() => rmSync(workDir, { recursive: true, force: true }))

const buildersFor = (material: TsaMaterial, wrap: (scheme: SigningScheme) => SigningScheme) => {
  const certificateDer = new Uint8Array(material.certificateDer)
  const scheme = wrap(signingSchemeFor(loadTsaKey(material)))
  return {
    certificateDer,
    template: tokenTemplate(certificateDer, scheme, DEFAULT_POLICY_OID),
    reference: referenceToken(certificateDer, scheme, DEFAULT_POLICY_OID),
  }
}

const sameBytes = (builders: ReturnType<typeof buildersFor>, fields: TokenFields): Uint8Array => {
  const token = builders.template(fields)
  expect(hexOf(token)).toBe(hexOf(builders.reference(fields)))
  return token
}

describe("template-built timestamp tokens", () => {
  it("are byte-identical to straightforwardly built ones (ECDSA P-256, property)", () => {
    const builders = buildersFor(ecdsaMaterial, replaying)
    const validity = new crypto.X509Certificate(builders.certificateDer)
    fc.assert(
      fc.property(tokenFields, (fields) => {
        const token = sameBytes(builders, fields)
        // Years outside 0–9999 are written as before, but no GeneralizedTime reader takes them.
        const year = fields.genTime.getUTCFullYear()
        if (year < 0 || year > 9999) return
        const info = parseTimestampToken(token)
        expect(hexOf(info.imprint)).toBe(hexOf(fields.digest))
        expect(info.genTime.getTime()).toBe(fields.genTime.getTime())
        expect(info.serial).toBe(bigintOf(fields.serial).toString())
        expect(info.nonce).toBe(fields.nonce)
        const verified = verifyTimestampToken(token, { digest: fields.digest, certificateDer: builders.certificateDer })
        const genTime = fields.genTime.getTime()
        const inValidity = genTime >= Date.parse(validity.validFrom) && genTime <= Date.parse(validity.validTo)
        // Outside the certificate's validity the signature holds but the token is refused.
        expect(verified.valid ? "valid" : verified.reason).toBe(
          inValidity ? "valid" : "genTime is outside the signer certificate's validity",
        )
      }),
      { numRuns: 400 },
    )
  })

  it("are byte-identical for RSA-2048 and for signatures of any length (property)", () => {
    const rsa = buildersFor(rsaMaterial, (scheme) => scheme)
    const anyLength = buildersFor(ecdsaMaterial, (scheme) => variableLengthScheme(scheme.algorithm))
    fc.assert(
      fc.property(tokenFields, (fields) => {
        sameBytes(rsa, fields)
        sameBytes(anyLength, fields)
      }),
      { numRuns: 200 },
    )
  })

  it("verify with OpenSSL, with and without the certificate, on both sides of 2050", () => {
    const builders = buildersFor(ecdsaMaterial, replaying)
    const caPath = join(workDir, "tsa.pem")
    writeFileSync(caPath, certificatePem(builders.certificateDer))
    const times = [
      "1999-12-31T23:59:59Z",
      "2026-04-10T11:24:00.120Z",
      "2049-12-31T23:59:59.999Z",
      "2050-01-01T00:00:00Z",
      "2126-06-01T12:00:00.5Z",
      "9999-12-31T23:59:59.99Z",
    ]
    const samples = fc
      .sample(tokenFields, { numRuns: times.length, seed: 3161 })
      .map((fields, index) => ({ ...fields, genTime: new Date(times[index]), includeCertificate: index % 2 === 0 }))
    samples.forEach((fields, index) => {
      const token = sameBytes(builders, fields)
      const tokenPath = join(workDir, `token-${index}.der`)
      writeFileSync(tokenPath, token)
      const args = ["ts", "-verify", "-digest", hexOf(fields.digest), "-sha256", "-token_in", "-in", tokenPath, "-CAfile", caPath]
      if (!fields.includeCertificate) args.push("-untrusted", caPath)
      const result = spawnSync("openssl", args, { encoding: "utf8" })
      expect(result.stdout + result.stderr).toContain("Verification: OK")
    })
  })
})

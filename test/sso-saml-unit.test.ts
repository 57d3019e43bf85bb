/**
 * The SP certificate made per organization (and by sso-saml.test.ts for its test IdP) is strict DER
 * whatever its random serial: 16 random bytes starting 0x00 0x00..0x7f once gave a padded INTEGER that
 * OpenSSL refuses, which samlify reported as "PEM routines::no start line" while signing (about one
 * certificate in 256). Each case makes a real key pair; the checks are OpenSSL's, through node:crypto.
 */
import { createPrivateKey, X509Certificate } from "node:crypto"
import { createRequire } from "node:module"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeSpKeyPair } from "../src/sso/saml.js"

/** samlify's signing entry, typed by hand (see sso-saml.test.ts for why). */
const samlify = createRequire(import.meta.url)("samlify") as {
  SamlLib: { constructSAMLSignature(options: { rawSamlMessage: string; isMessageSigned: boolean; privateKey: string; signingCert: string }): string }
}

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5)
const HOUR = 3600_000
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex").toUpperCase()
const derBody = (certPem: string) => certPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "")
/** 16 bytes whose first byte is one that once made a padded serial, or any byte. */
const serialRandom = fc
  .tuple(fc.oneof(fc.constantFrom(0x00, 0x80), fc.integer({ min: 0, max: 255 })), fc.uint8Array({ minLength: 15, maxLength: 15 }))
  .map(([first, rest]) => Uint8Array.of(first, ...rest))

/** What every SP certificate must be, whatever the random serial; throws (OpenSSL's error) if the DER is refused. */
const checkCertificate = async (random?: Uint8Array) => {
  const pair = await makeSpKeyPair("acme SSO service provider", NOW, random)
  // The DER bytes, as samlify hands them to OpenSSL when it signs with this certificate.
  const certificate = new X509Certificate(Buffer.from(derBody(pair.certPem), "base64"))
  // Positive, 16 octets, no padding byte; the random input's low 15 bytes are kept.
  expect(certificate.serialNumber).toMatch(/^[0-7][0-9A-F]{31}$/)
  if (random !== undefined) expect(certificate.serialNumber.slice(2)).toBe(hex(random.subarray(1)))
  expect(certificate.subject).toBe("CN=acme SSO service provider")
  expect(certificate.verify(certificate.publicKey)).toBe(true)
  expect(certificate.checkPrivateKey(createPrivateKey(pair.keyPem))).toBe(true)
  expect(certificate.validFromDate.getTime()).toBe(NOW - HOUR)
  expect(certificate.validToDate.getTime()).toBe(NOW + 10 * 365 * 24 * HOUR)
  return pair
}

describe("SP certificate", () => {
  it.each([
    // Serials drawn by the old code that OpenSSL refused ("illegal padding").
    ["0049247aed33103ee837b007f06c435c"],
    ["0013fb4c8b7fc83a01a45687be8ab96d"],
    ["0024693005b65d68ef184093cd851187"],
    ["00000000000000000000000000000000"],
    ["80000000000000000000000000000001"],
    ["ffffffffffffffffffffffffffffffff"]
  ])("is strict DER for the random serial bytes %s, and samlify signs with it", async (serial) => {
    const pair = await checkCertificate(Buffer.from(serial, "hex"))
    const signed = samlify.SamlLib.constructSAMLSignature({
      rawSamlMessage: `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r"/>`,
      isMessageSigned: true,
      privateKey: pair.keyPem,
      signingCert: derBody(pair.certPem)
    })
    expect(Buffer.from(signed, "base64").toString()).toContain(`<X509Certificate>${derBody(pair.certPem)}</X509Certificate>`)
  })

  it("is strict DER for any random serial bytes (property)", async () => {
    await fc.assert(fc.asyncProperty(serialRandom, async (random) => void (await checkCertificate(random))), { numRuns: 20 })
  })

  it("is strict DER with its own random serial", async () => {
    await checkCertificate()
  })
})

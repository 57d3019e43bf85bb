// Builds the TimeStampToken: a CMS SignedData over a TSTInfo. Everything that is the same
// for every token of one TSA identity (policy, algorithm identifiers, accuracy, the ESS
// attribute, signerId, certificate, OIDs) is encoded once with pkijs/asn1js; a token then
// only writes the serial, genTime, signing time, imprint, TSTInfo digest, nonce and
// signature between those bytes, with the enclosing lengths computed from the parts.
import * as crypto from "node:crypto"
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { randomView } from "../../platform/ids.js"
import { decodeSingle, encodingOf } from "./decode.js"
import {
  compareBytes,
  derGeneralizedTime,
  derInteger,
  derUtcTime,
  headerLength,
  TAG,
  tlv,
  writeHeader,
} from "./der-writer.js"
import { OID } from "./oids.js"
import type { SigningScheme } from "./signing.js"

export interface StampOptions {
  /** Echoed in TSTInfo when the requester sent one. */
  readonly nonce?: bigint
  /** The genTime; defaults to the current clock. */
  readonly now?: Date
  /** Put the TSA certificate into SignedData.certificates (RFC 3161 certReq). Default true. */
  readonly includeCertificate?: boolean
}

/** What changes from one token to the next. */
export interface TokenFields {
  /** The 32-byte SHA-256 message imprint. */
  readonly digest: Uint8Array
  /** serialNumber as unsigned big-endian bytes (leading zeros allowed). */
  readonly serial: Uint8Array
  /** genTime; the signing-time attribute is the same instant. */
  readonly genTime: Date
  readonly nonce: bigint | undefined
  readonly includeCertificate: boolean
}

const der = (value: { toBER(sizeOnly?: boolean): ArrayBuffer }) => new Uint8Array(value.toBER(false))
const oid = (value: string) => der(new asn1js.ObjectIdentifier({ value }))

// ESS signingCertificateV2 (RFC 5035): binds the signature to this exact certificate.
// SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2 }
// ESSCertIDv2 ::= SEQUENCE { certHash OCTET STRING, issuerSerial SEQUENCE { GeneralNames, serial } }
// hashAlgorithm is left out because sha256 is its DEFAULT and DER omits defaults.
const signingCertificateV2 = (certificateDer: Uint8Array, issuerDer: Uint8Array, serialDer: Uint8Array): Uint8Array => {
  const certificateHash = crypto.createHash("sha256").update(certificateDer).digest()
  // GeneralNames with one directoryName: [4] EXPLICIT Name.
  const generalNames = tlv(TAG.sequence, tlv(0xa4, issuerDer))
  const essCertIdV2 = tlv(TAG.sequence, tlv(TAG.octetString, certificateHash), tlv(TAG.sequence, generalNames, serialDer))
  return tlv(TAG.sequence, tlv(TAG.sequence, essCertIdV2))
}

// --- times -------------------------------------------------------------------
// Years 0–9999 are written digit by digit; any other year goes through der-writer's
// general encoders, which the digit writers match byte for byte.

const digits = (out: Uint8Array, offset: number, value: number, count: number): number => {
  for (let index = offset + count - 1; index >= offset; index--) {
    out[index] = 0x30 + (value % 10)
    value = Math.floor(value / 10)
  }
  return offset + count
}

/** MMDDHHMMSS of `date`, after its year digits. */
const monthToSecond = (out: Uint8Array, offset: number, date: Date): number => {
  offset = digits(out, offset, date.getUTCMonth() + 1, 2)
  offset = digits(out, offset, date.getUTCDate(), 2)
  offset = digits(out, offset, date.getUTCHours(), 2)
  offset = digits(out, offset, date.getUTCMinutes(), 2)
  return digits(out, offset, date.getUTCSeconds(), 2)
}

/** GeneralizedTime TLV, with milliseconds when non-zero and trailing zeros dropped (RFC 3161 §2.4.2). */
const generalizedTime = (date: Date, withMillis: boolean): Uint8Array => {
  const year = date.getUTCFullYear()
  if (year < 0 || year > 9999) {
    return derGeneralizedTime(withMillis ? date : new Date(Math.floor(date.getTime() / 1000) * 1000))
  }
  let millis = withMillis ? date.getUTCMilliseconds() : 0
  let fraction = 0
  if (millis !== 0) {
    fraction = 3
    while (millis % 10 === 0) {
      millis /= 10
      fraction--
    }
  }
  const length = 15 + (fraction === 0 ? 0 : fraction + 1)
  const out = new Uint8Array(2 + length)
  out[0] = TAG.generalizedTime
  out[1] = length
  let offset = monthToSecond(out, digits(out, 2, year, 4), date)
  if (fraction !== 0) {
    out[offset++] = 0x2e // "."
    offset = digits(out, offset, millis, fraction)
  }
  out[offset] = 0x5a // "Z"
  return out
}

/** CMS signingTime (RFC 5652 §11.3): UTCTime through 2049, GeneralizedTime without fractions after. */
const signingTime = (date: Date): Uint8Array => {
  const year = date.getUTCFullYear()
  if (year >= 2050) return generalizedTime(date, false)
  if (year < 0) return derUtcTime(date)
  const out = new Uint8Array(15)
  out[0] = TAG.utcTime
  out[1] = 13
  out[14] = 0x5a // "Z"
  monthToSecond(out, digits(out, 2, year % 100, 2), date)
  return out
}

// --- integers ----------------------------------------------------------------

/** Offset of the first byte of the minimal DER content of an unsigned big-endian integer. */
const firstSignificant = (magnitude: Uint8Array): number => {
  let start = 0
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++
  return start
}

/** Content length of the DER INTEGER of an unsigned big-endian magnitude (a 0x00 keeps it positive). */
const unsignedContentLength = (magnitude: Uint8Array, start: number): number =>
  magnitude.length === 0 ? 1 : magnitude.length - start + (magnitude[start] >= 0x80 ? 1 : 0)

const writeUnsignedInteger = (out: Uint8Array, offset: number, magnitude: Uint8Array, start: number): number => {
  offset = writeHeader(out, offset, TAG.integer, unsignedContentLength(magnitude, start))
  if (magnitude.length === 0 || magnitude[start] >= 0x80) out[offset++] = 0
  for (let index = start; index < magnitude.length; index++) out[offset++] = magnitude[index]
  return offset
}

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => new Uint8Array(Buffer.concat(parts))

const put = (out: Uint8Array, offset: number, bytes: Uint8Array): number => {
  out.set(bytes, offset)
  return offset + bytes.length
}

/** The token assembler of one TSA identity: fields in, DER TimeStampToken out. */
export const tokenTemplate = (certificateDer: Uint8Array, scheme: SigningScheme, policyOid: string) => {
  // The issuer Name and serialNumber, copied byte for byte from the certificate.
  const certificate = new pkijs.Certificate({ schema: decodeSingle(certificateDer) })
  const issuerDer = new Uint8Array(certificate.issuer.valueBeforeDecode)
  const serialDer = encodingOf(certificate.serialNumber)

  const versionOne = derInteger(1n)
  const sha256Algorithm = der(new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }).toSchema())
  const accuracy = der(new pkijs.Accuracy({ seconds: 1 }).toSchema())

  // TSTInfo ::= SEQUENCE { version, policy, messageImprint, serialNumber, genTime, accuracy, nonce? }
  // Everything before the imprint's 32 bytes is constant: version, policy and the head of
  // MessageImprint ::= SEQUENCE { sha256 AlgorithmIdentifier, OCTET STRING (32) }.
  const imprint = tlv(TAG.sequence, sha256Algorithm, tlv(TAG.octetString, new Uint8Array(32)))
  const beforeImprint = concat(versionOne, oid(policyOid), imprint.subarray(0, imprint.length - 32))

  // Signed attributes. contentType and ESS are constant; messageDigest is constant
  // except for its last 32 bytes.
  const contentTypeAttribute = der(
    new pkijs.Attribute({ type: OID.contentTypeAttr, values: [new asn1js.ObjectIdentifier({ value: OID.tstInfo })] }).toSchema(),
  )
  const essAttribute = tlv(
    TAG.sequence,
    oid(OID.signingCertificateV2Attr),
    tlv(TAG.set, signingCertificateV2(certificateDer, issuerDer, serialDer)),
  )
  const messageDigestAttribute = tlv(
    TAG.sequence,
    oid(OID.messageDigestAttr),
    tlv(TAG.set, tlv(TAG.octetString, new Uint8Array(32))),
  )
  const signingTimeType = oid(OID.signingTimeAttr)

  // SignedData ::= SEQUENCE { version 3, digestAlgorithms, encapContentInfo, certificates?, signerInfos }
  const signedDataType = oid(OID.signedData)
  const signedDataHead = concat(derInteger(3n), tlv(TAG.set, sha256Algorithm))
  const tstInfoType = oid(OID.tstInfo)
  const certificates = tlv(TAG.contextConstructed0, certificateDer)
  // SignerInfo ::= SEQUENCE { version 1, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature }
  const signerInfoHead = concat(versionOne, tlv(TAG.sequence, issuerDer, serialDer), sha256Algorithm)
  const signatureAlgorithm = der(scheme.algorithm.toSchema())

  // TSTInfo and the signed attributes are written here first: both are needed (hashed,
  // signed) before the token's own lengths are known. Reused: stamping is synchronous.
  let scratch = Buffer.alloc(1024)

  return (fields: TokenFields): Uint8Array => {
    const { digest, serial } = fields
    const serialStart = firstSignificant(serial)
    const serialLength = unsignedContentLength(serial, serialStart)
    const genTime = generalizedTime(fields.genTime, true)
    const nonce = fields.nonce === undefined ? undefined : derInteger(fields.nonce)
    const signingTimeValue = signingTime(fields.genTime)

    const tstInfoContent =
      beforeImprint.length +
      32 +
      headerLength(serialLength) +
      serialLength +
      genTime.length +
      accuracy.length +
      (nonce === undefined ? 0 : nonce.length)
    const tstInfoLength = headerLength(tstInfoContent) + tstInfoContent
    const signingTimeContent = signingTimeType.length + headerLength(signingTimeValue.length) + signingTimeValue.length
    const signingTimeLength = headerLength(signingTimeContent) + signingTimeContent
    const attributesContent =
      contentTypeAttribute.length + messageDigestAttribute.length + signingTimeLength + essAttribute.length
    const attributesLength = headerLength(attributesContent) + attributesContent
    const scratchNeeded = tstInfoLength + messageDigestAttribute.length + signingTimeLength + attributesLength
    if (scratch.length < scratchNeeded) scratch = Buffer.alloc(2 * scratchNeeded)

    let at = writeHeader(scratch, 0, TAG.sequence, tstInfoContent)
    at = put(scratch, at, beforeImprint)
    at = put(scratch, at, digest)
    at = writeUnsignedInteger(scratch, at, serial, serialStart)
    at = put(scratch, at, genTime)
    at = put(scratch, at, accuracy)
    if (nonce !== undefined) at = put(scratch, at, nonce)

    // messageDigest = SHA-256 of the TSTInfo DER, written into its attribute's last 32 bytes.
    const messageDigestAt = at
    at = put(scratch, at, messageDigestAttribute)
    scratch.write(crypto.hash("sha256", scratch.subarray(0, tstInfoLength), "binary"), at - 32, "latin1")
    const signingTimeAt = at
    at = writeHeader(scratch, at, TAG.sequence, signingTimeContent)
    at = put(scratch, at, signingTimeType)
    at = writeHeader(scratch, at, TAG.set, signingTimeValue.length)
    at = put(scratch, at, signingTimeValue)

    // DER sorts SET OF members by their encodings; the signing-time attribute's length
    // differs between UTCTime and GeneralizedTime, so the order is settled per token.
    const attributes = [
      contentTypeAttribute,
      scratch.subarray(messageDigestAt, signingTimeAt),
      scratch.subarray(signingTimeAt, at),
      essAttribute,
    ].sort(compareBytes)
    const attributesAt = at
    at = writeHeader(scratch, at, TAG.set, attributesContent)
    for (const attribute of attributes) at = put(scratch, at, attribute)
    // The signature covers the attributes as a universal SET; they travel as [0] IMPLICIT.
    const signature = scheme.sign(scratch.subarray(attributesAt, at))

    const signerInfoContent =
      signerInfoHead.length +
      attributesLength +
      signatureAlgorithm.length +
      headerLength(signature.length) +
      signature.length
    const signerInfosContent = headerLength(signerInfoContent) + signerInfoContent
    const tstInfoOctetsLength = headerLength(tstInfoLength) + tstInfoLength
    const encapContent = tstInfoType.length + headerLength(tstInfoOctetsLength) + tstInfoOctetsLength
    const signedDataContent =
      signedDataHead.length +
      headerLength(encapContent) +
      encapContent +
      (fields.includeCertificate ? certificates.length : 0) +
      headerLength(signerInfosContent) +
      signerInfosContent
    const explicitContent = headerLength(signedDataContent) + signedDataContent
    const contentInfoContent = signedDataType.length + headerLength(explicitContent) + explicitContent

    // From node's Buffer pool: a fresh ~600-byte ArrayBuffer per token cost ~1.5 µs.
    const out = Buffer.allocUnsafe(headerLength(contentInfoContent) + contentInfoContent)
    let offset = writeHeader(out, 0, TAG.sequence, contentInfoContent)
    offset = put(out, offset, signedDataType)
    offset = writeHeader(out, offset, TAG.contextConstructed0, explicitContent)
    offset = writeHeader(out, offset, TAG.sequence, signedDataContent)
    offset = put(out, offset, signedDataHead)
    offset = writeHeader(out, offset, TAG.sequence, encapContent)
    offset = put(out, offset, tstInfoType)
    offset = writeHeader(out, offset, TAG.contextConstructed0, tstInfoOctetsLength)
    offset = writeHeader(out, offset, TAG.octetString, tstInfoLength)
    offset = put(out, offset, scratch.subarray(0, tstInfoLength))
    if (fields.includeCertificate) offset = put(out, offset, certificates)
    offset = writeHeader(out, offset, TAG.set, signerInfosContent)
    offset = writeHeader(out, offset, TAG.sequence, signerInfoContent)
    offset = put(out, offset, signerInfoHead)
    out[offset] = TAG.contextConstructed0
    offset = put(out, offset + 1, scratch.subarray(attributesAt + 1, attributesAt + attributesLength))
    offset = put(out, offset, signatureAlgorithm)
    offset = writeHeader(out, offset, TAG.octetString, signature.length)
    // The pool's memory is not zeroed: every byte must have been written.
    if (put(out, offset, signature) !== out.length) throw new Error("timestamp token length mismatch")
    return out
  }
}

/** The stamping function of one TSA identity: SHA-256 digest in, DER TimeStampToken out. */
export const tokenWriter = (certificateDer: Uint8Array, scheme: SigningScheme, policyOid: string) => {
  const assemble = tokenTemplate(certificateDer, scheme, policyOid)
  return (digestSha256: Uint8Array, options: StampOptions = {}): Uint8Array => {
    if (digestSha256.length !== 32) throw new Error("timestamp imprint must be a 32-byte SHA-256 digest")
    const now = options.now ?? new Date()
    if (Number.isNaN(now.getTime())) throw new Error("timestamp time is not a valid date")
    // A random serial below 2^63: eight random bytes with the top bit cleared (the view is
    // ours until the next randomView call, and assembling makes none).
    const serial = randomView(8)
    serial[0] &= 0x7f
    return assemble({
      digest: digestSha256,
      serial,
      genTime: now,
      nonce: options.nonce,
      includeCertificate: options.includeCertificate !== false,
    })
  }
}

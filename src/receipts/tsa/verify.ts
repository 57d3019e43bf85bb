// Checking RFC 3161 TimeStampTokens: the CMS and ESS rules a TSA's signature must meet.
import * as crypto from "node:crypto"
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { bytesEqual } from "../../../protocol/verifier/encoding.js"
import { decodeSingle, isContextTag, itemsOf } from "./decode.js"
import { hashNameByOid, OID } from "./oids.js"
import { decodeTimestampToken, type TimestampTokenInfo } from "./parse.js"
import { verifySignerSignature } from "./signature.js"

export type TimestampVerification =
  | { readonly valid: true; readonly info: TimestampTokenInfo; readonly signerCertificateDer: Uint8Array }
  | { readonly valid: false; readonly reason: string }

export interface VerifyTimestampOptions {
  /**
   * The TSA certificate to trust. When given, the token must be signed by exactly this
   * certificate (it may be absent from the token). When omitted, the signer certificate
   * embedded in the token is used: that proves integrity, not who the TSA is.
   */
  readonly certificateDer?: Uint8Array
  /** The digest the token must vouch for. */
  readonly digest?: Uint8Array
}

interface Signer {
  readonly der: Uint8Array
  readonly certificate: pkijs.Certificate
}

/** The one value of a signed attribute that CMS allows once; undefined when absent or repeated. */
const singleAttributeValue = (signerInfo: pkijs.SignerInfo, type: string): asn1js.AsnType | undefined => {
  const found = (signerInfo.signedAttrs?.attributes ?? []).filter((attribute) => attribute.type === type)
  if (found.length !== 1 || found[0].values.length !== 1) return undefined
  return found[0].values[0]
}

const serialBytes = (certificate: pkijs.Certificate): Uint8Array => certificate.serialNumber.valueBlock.valueHexView

const subjectKeyIdentifierOf = (certificate: pkijs.Certificate): Uint8Array | undefined => {
  const extension = certificate.extensions?.find((item) => item.extnID === OID.subjectKeyIdentifier)
  if (extension === undefined) return undefined
  const keyId = decodeSingle(extension.extnValue.valueBlock.valueHexView)
  if (!(keyId instanceof asn1js.OctetString)) throw new Error("subjectKeyIdentifier is not an OCTET STRING")
  return keyId.valueBlock.valueHexView
}

const matchesSignerId = (sid: pkijs.SignerInfo["sid"], certificate: pkijs.Certificate): boolean => {
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    // Byte for byte against the certificate's own issuer and serial.
    return (
      bytesEqual(new Uint8Array(sid.issuer.valueBeforeDecode), new Uint8Array(certificate.issuer.valueBeforeDecode)) &&
      bytesEqual(sid.serialNumber.valueBlock.valueHexView, serialBytes(certificate))
    )
  }
  // subjectKeyIdentifier [0] IMPLICIT OCTET STRING
  if (sid instanceof asn1js.Primitive && isContextTag(sid, 0)) {
    const keyId = subjectKeyIdentifierOf(certificate)
    return keyId !== undefined && bytesEqual(keyId, sid.valueBlock.valueHexView)
  }
  return false
}

const findSigner = (signerInfo: pkijs.SignerInfo, candidates: ReadonlyArray<Uint8Array>): Signer | undefined => {
  for (const der of candidates) {
    const certificate = new pkijs.Certificate({ schema: decodeSingle(der) })
    if (matchesSignerId(signerInfo.sid, certificate)) return { der, certificate }
  }
  return undefined
}

// ESS signingCertificate(V2): the signed attributes must name the signer certificate by hash
// (and by serial number when issuerSerial is present).
const essCertificateMatches = (signerInfo: pkijs.SignerInfo, signer: Signer): boolean => {
  const v2 = singleAttributeValue(signerInfo, OID.signingCertificateV2Attr)
  const value = v2 ?? singleAttributeValue(signerInfo, OID.signingCertificateAttr)
  if (value === undefined) return false
  // SigningCertificate(V2) ::= SEQUENCE { certs SEQUENCE OF ESSCertID(v2), policies OPTIONAL }
  const fields = itemsOf(itemsOf(itemsOf(value)[0])[0])
  let hashName = v2 === undefined ? "sha1" : "sha256"
  let index = 0
  // ESSCertIDv2.hashAlgorithm is optional with DEFAULT sha256.
  if (v2 !== undefined && fields[0] instanceof asn1js.Sequence) {
    const named = hashNameByOid[new pkijs.AlgorithmIdentifier({ schema: fields[0] }).algorithmId]
    if (named === undefined) return false
    hashName = named
    index = 1
  }
  const certHash = fields[index]
  if (!(certHash instanceof asn1js.OctetString)) return false
  if (!bytesEqual(certHash.valueBlock.valueHexView, crypto.createHash(hashName).update(signer.der).digest())) return false
  const issuerSerial = fields[index + 1]
  if (issuerSerial === undefined) return true
  const { serialNumber } = new pkijs.IssuerSerial({ schema: issuerSerial })
  return bytesEqual(serialNumber.valueBlock.valueHexView, serialBytes(signer.certificate))
}

const check = (der: Uint8Array, options: VerifyTimestampOptions): TimestampVerification => {
  const { info, tstInfoDer, signerInfos, certificatesDer } = decodeTimestampToken(der)
  const fail = (reason: string): TimestampVerification => ({ valid: false, reason })

  if (options.digest !== undefined && !bytesEqual(info.imprint, options.digest)) {
    return fail("message imprint does not match the digest")
  }
  if (signerInfos.length !== 1) return fail("a timestamp token has exactly one signer")
  const signerInfo = signerInfos[0]
  const signer = findSigner(signerInfo, options.certificateDer === undefined ? certificatesDer : [options.certificateDer])
  if (signer === undefined) return fail("signer certificate not found")

  // RFC 3161 §2.2 / RFC 5652 §5.3: with a non-data content type the signed attributes are
  // mandatory and carry the content type and the digest of the TSTInfo.
  if (signerInfo.signedAttrs === undefined) return fail("token has no signed attributes")
  const contentType = singleAttributeValue(signerInfo, OID.contentTypeAttr)
  if (!(contentType instanceof asn1js.ObjectIdentifier) || contentType.valueBlock.toString() !== OID.tstInfo) {
    return fail("contentType attribute is not id-ct-TSTInfo")
  }
  const digestName = hashNameByOid[signerInfo.digestAlgorithm.algorithmId]
  if (digestName === undefined) return fail("unsupported digest algorithm")
  const messageDigest = singleAttributeValue(signerInfo, OID.messageDigestAttr)
  const expectedDigest = crypto.createHash(digestName).update(tstInfoDer).digest()
  if (
    !(messageDigest instanceof asn1js.OctetString) ||
    messageDigest.idBlock.isConstructed ||
    !bytesEqual(messageDigest.valueBlock.valueHexView, expectedDigest)
  ) {
    return fail("messageDigest attribute does not match the TSTInfo")
  }
  if (!essCertificateMatches(signerInfo, signer)) {
    return fail("ESS signing certificate does not name the signer certificate")
  }
  const certificate = new crypto.X509Certificate(signer.der)
  // pkijs keeps the signed attributes' original bytes, re-tagged as the SET the signature covers.
  const signedBytes = new Uint8Array(signerInfo.signedAttrs.encodedValue)
  if (!verifySignerSignature(signerInfo, signedBytes, certificate.publicKey)) {
    return fail("signature does not verify")
  }
  // X509Certificate.keyUsage lists the extended key usages.
  if (!(certificate.keyUsage ?? []).includes(OID.timeStamping)) {
    return fail("signer certificate lacks the timeStamping extended key usage")
  }
  const genTime = info.genTime.getTime()
  if (genTime < Date.parse(certificate.validFrom) || genTime > Date.parse(certificate.validTo)) {
    return fail("genTime is outside the signer certificate's validity")
  }
  return { valid: true, info, signerCertificateDer: new Uint8Array(signer.der) }
}

/**
 * Checks a DER TimeStampToken: structure, imprint, content type and message digest
 * attributes, ESS certificate binding, signature, the signer's timeStamping usage and
 * validity at genTime. Building a chain to a root is left to the caller.
 */
export const verifyTimestampToken = (der: Uint8Array, options: VerifyTimestampOptions = {}): TimestampVerification => {
  try {
    return check(der, options)
  } catch (cause) {
    return { valid: false, reason: cause instanceof Error ? cause.message : String(cause) }
  }
}

// Reading and checking RFC 3161 TimeStampTokens (ours or an external TSA's).
// Parsed with the small DER reader in asn.ts: the same work through asn1js + pkijs
// measured ~15 ms per token, too slow for the public verify endpoint.
import * as crypto from "node:crypto"
import {
  algorithmOid,
  bytesEqual,
  childrenOf,
  type DerNode,
  expectTag,
  hashNameByOid,
  issuerAndSerialOf,
  OID,
  readDer,
  readGeneralizedTime,
  readInteger,
  readOid,
  subjectKeyIdentifierOf,
  TAG,
} from "./asn.js"

export interface TimestampTokenInfo {
  readonly genTime: Date
  /** The hashed message the token vouches for. */
  readonly imprint: Uint8Array
  /** OID of the imprint's hash algorithm (sha256 for ours). */
  readonly imprintAlgorithm: string
  /** TSTInfo serialNumber in decimal. */
  readonly serial: string
  readonly policy: string
  readonly nonce: bigint | undefined
}

export class TimestampTokenError extends Error {
  override readonly name = "TimestampTokenError"
}

interface Attribute {
  readonly type: string
  readonly values: ReadonlyArray<DerNode>
}

interface SignerInfo {
  readonly sid: DerNode
  readonly digestAlgorithm: string
  /** The signed attributes re-tagged as a universal SET: the bytes the signature covers. */
  readonly signedAttributesDer: Uint8Array | undefined
  readonly attributes: ReadonlyArray<Attribute>
  readonly signatureAlgorithm: DerNode
  readonly signature: Uint8Array
}

interface DecodedToken {
  readonly info: TimestampTokenInfo
  readonly tstInfoDer: Uint8Array
  readonly signerInfos: ReadonlyArray<SignerInfo>
  readonly certificatesDer: ReadonlyArray<Uint8Array>
}

// A BER OCTET STRING may arrive constructed (0x24, in pieces); DER tokens never do, but accept both.
const octetStringBytes = (node: DerNode): Uint8Array => {
  if (node.tag === TAG.octetString) return node.content
  if (node.tag === 0x24) return new Uint8Array(Buffer.concat(childrenOf(node).map(octetStringBytes)))
  throw new TimestampTokenError("expected an OCTET STRING")
}

const readTstInfo = (tstInfoDer: Uint8Array): TimestampTokenInfo => {
  const fields = childrenOf(expectTag(readDer(tstInfoDer), TAG.sequence, "TSTInfo"))
  const version = readInteger(fields[0])
  if (version !== 1n) throw new TimestampTokenError(`unsupported TSTInfo version ${version}`)
  const [hashAlgorithm, hashedMessage] = childrenOf(expectTag(fields[2], TAG.sequence, "messageImprint"))
  // After genTime come the optional accuracy, ordering, nonce, [0] tsa and [1] extensions;
  // the nonce is the only INTEGER among them.
  const nonceNode = fields.slice(5).find((field) => field.tag === TAG.integer)
  return {
    policy: readOid(fields[1]),
    imprintAlgorithm: algorithmOid(hashAlgorithm),
    imprint: new Uint8Array(expectTag(hashedMessage, TAG.octetString, "hashedMessage").content),
    serial: readInteger(fields[3]).toString(),
    genTime: readGeneralizedTime(fields[4]),
    nonce: nonceNode === undefined ? undefined : readInteger(nonceNode),
  }
}

const readSignerInfo = (node: DerNode): SignerInfo => {
  const fields = childrenOf(expectTag(node, TAG.sequence, "SignerInfo"))
  let index = 1
  const sid = fields[index++]
  const digestAlgorithm = algorithmOid(fields[index++])
  let signedAttributes: DerNode | undefined
  if (fields[index]?.tag === TAG.contextConstructed0) signedAttributes = fields[index++]
  const signatureAlgorithm = expectTag(fields[index++], TAG.sequence, "signatureAlgorithm")
  const signature = expectTag(fields[index++], TAG.octetString, "signature").content
  let signedAttributesDer: Uint8Array | undefined
  if (signedAttributes !== undefined) {
    signedAttributesDer = new Uint8Array(signedAttributes.der)
    signedAttributesDer[0] = TAG.set
  }
  const attributes = (signedAttributes === undefined ? [] : childrenOf(signedAttributes)).map((attribute) => {
    const [type, values] = childrenOf(expectTag(attribute, TAG.sequence, "Attribute"))
    return { type: readOid(type), values: childrenOf(expectTag(values, TAG.set, "Attribute values")) }
  })
  return { sid, digestAlgorithm, signedAttributesDer, attributes, signatureAlgorithm, signature }
}

const decode = (der: Uint8Array): DecodedToken => {
  try {
    const [contentType, wrapped] = childrenOf(expectTag(readDer(der), TAG.sequence, "ContentInfo"))
    if (readOid(contentType) !== OID.signedData) throw new TimestampTokenError("token is not CMS SignedData")
    const signedData = expectTag(childrenOf(expectTag(wrapped, TAG.contextConstructed0, "content"))[0], TAG.sequence, "SignedData")
    const fields = childrenOf(signedData)
    const [eContentType, eContentWrapper] = childrenOf(expectTag(fields[2], TAG.sequence, "encapContentInfo"))
    if (readOid(eContentType) !== OID.tstInfo || eContentWrapper === undefined) {
      throw new TimestampTokenError("token does not encapsulate a TSTInfo")
    }
    const tstInfoDer = octetStringBytes(childrenOf(expectTag(eContentWrapper, TAG.contextConstructed0, "eContent"))[0])
    // Certificates stay as their original bytes: ESS hashes and signatures are over those.
    const certificateSet = fields.slice(3).find((field) => field.tag === TAG.contextConstructed0)
    const certificatesDer = (certificateSet === undefined ? [] : childrenOf(certificateSet))
      .filter((item) => item.tag === TAG.sequence)
      .map((item) => item.der)
    const signerInfos = childrenOf(expectTag(fields[fields.length - 1], TAG.set, "signerInfos")).map(readSignerInfo)
    return { info: readTstInfo(tstInfoDer), tstInfoDer, signerInfos, certificatesDer }
  } catch (cause) {
    if (cause instanceof TimestampTokenError) throw cause
    throw new TimestampTokenError(`malformed timestamp token: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

/** Reads the TSTInfo of a DER TimeStampToken. Checks structure only, not the signature. */
export const parseTimestampToken = (der: Uint8Array): TimestampTokenInfo => decode(der).info

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

/** The one value of a signed attribute that CMS allows once; undefined when absent or repeated. */
const singleAttributeValue = (signerInfo: SignerInfo, type: string): DerNode | undefined => {
  const found = signerInfo.attributes.filter((attribute) => attribute.type === type)
  if (found.length !== 1 || found[0].values.length !== 1) return undefined
  return found[0].values[0]
}

const matchesSignerId = (sid: DerNode, certificateDer: Uint8Array): boolean => {
  if (sid.tag === TAG.sequence) {
    // IssuerAndSerialNumber, compared byte for byte with the certificate's own fields.
    const [issuer, serial] = childrenOf(sid)
    const fromCertificate = issuerAndSerialOf(certificateDer)
    return bytesEqual(issuer.der, fromCertificate.issuerDer) && bytesEqual(serial.der, fromCertificate.serialDer)
  }
  if (sid.tag === 0x80) {
    // subjectKeyIdentifier [0] IMPLICIT OCTET STRING
    const keyId = subjectKeyIdentifierOf(certificateDer)
    return keyId !== undefined && bytesEqual(keyId, sid.content)
  }
  return false
}

// ESS signingCertificate(V2): the signed attributes must name the signer certificate by hash
// (and by serial number when issuerSerial is present).
const essCertificateMatches = (signerInfo: SignerInfo, certificateDer: Uint8Array): boolean => {
  const v2 = singleAttributeValue(signerInfo, OID.signingCertificateV2Attr)
  const value = v2 ?? singleAttributeValue(signerInfo, OID.signingCertificateAttr)
  if (value === undefined) return false
  const certs = childrenOf(expectTag(childrenOf(expectTag(value, TAG.sequence, "SigningCertificate"))[0], TAG.sequence, "certs"))
  const fields = childrenOf(expectTag(certs[0], TAG.sequence, "ESSCertID"))
  let hashName = v2 === undefined ? "sha1" : "sha256"
  let index = 0
  // ESSCertIDv2.hashAlgorithm is optional with DEFAULT sha256.
  if (v2 !== undefined && fields[0]?.tag === TAG.sequence) {
    const named = hashNameByOid[algorithmOid(fields[0])]
    if (named === undefined) return false
    hashName = named
    index = 1
  }
  const certHash = expectTag(fields[index], TAG.octetString, "certHash").content
  if (!bytesEqual(certHash, crypto.createHash(hashName).update(certificateDer).digest())) return false
  const issuerSerial = fields[index + 1]
  if (issuerSerial === undefined) return true
  const serial = childrenOf(expectTag(issuerSerial, TAG.sequence, "issuerSerial"))[1]
  return serial !== undefined && bytesEqual(serial.der, issuerAndSerialOf(certificateDer).serialDer)
}

const hashBySignatureOid: Readonly<Record<string, string>> = {
  [OID.sha1WithRsa]: "sha1",
  [OID.sha256WithRsa]: "sha256",
  [OID.sha384WithRsa]: "sha384",
  [OID.sha512WithRsa]: "sha512",
  [OID.ecdsaWithSha256]: "sha256",
  [OID.ecdsaWithSha384]: "sha384",
  [OID.ecdsaWithSha512]: "sha512",
}

// RSASSA-PSS-params ::= SEQUENCE { [0] hashAlgorithm DEFAULT sha1, [1] maskGen, [2] saltLength DEFAULT 20, [3] trailer }
const pssParameters = (algorithm: DerNode): { hashName: string | undefined; saltLength: number } => {
  const parameters = childrenOf(algorithm)[1]
  let hashName: string | undefined = "sha1"
  let saltLength = 20
  for (const field of parameters === undefined ? [] : childrenOf(parameters)) {
    if (field.tag === 0xa0) hashName = hashNameByOid[algorithmOid(childrenOf(field)[0])]
    if (field.tag === 0xa2) saltLength = Number(readInteger(childrenOf(field)[0]))
  }
  return { hashName, saltLength }
}

const verifySignature = (signerInfo: SignerInfo, signedBytes: Uint8Array, key: crypto.KeyObject): boolean => {
  const algorithm = algorithmOid(signerInfo.signatureAlgorithm)
  if (algorithm === OID.ed25519) return crypto.verify(null, signedBytes, key, signerInfo.signature)
  if (algorithm === OID.rsaPss) {
    const { hashName, saltLength } = pssParameters(signerInfo.signatureAlgorithm)
    if (hashName === undefined) return false
    const options = { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength }
    return crypto.verify(hashName, signedBytes, options, signerInfo.signature)
  }
  // Bare key algorithm OIDs take the hash from the SignerInfo digestAlgorithm.
  const hashName =
    algorithm === OID.rsaEncryption || algorithm === OID.ecPublicKey
      ? hashNameByOid[signerInfo.digestAlgorithm]
      : hashBySignatureOid[algorithm]
  if (hashName === undefined) return false
  return crypto.verify(hashName, signedBytes, { key, dsaEncoding: "der" }, signerInfo.signature)
}

const check = (der: Uint8Array, options: VerifyTimestampOptions): TimestampVerification => {
  const { info, tstInfoDer, signerInfos, certificatesDer } = decode(der)
  const fail = (reason: string): TimestampVerification => ({ valid: false, reason })

  if (options.digest !== undefined && !bytesEqual(info.imprint, options.digest)) {
    return fail("message imprint does not match the digest")
  }
  if (signerInfos.length !== 1) return fail("a timestamp token has exactly one signer")
  const signerInfo = signerInfos[0]

  const candidates = options.certificateDer === undefined ? certificatesDer : [options.certificateDer]
  const signerCertificateDer = candidates.find((candidate) => matchesSignerId(signerInfo.sid, candidate))
  if (signerCertificateDer === undefined) return fail("signer certificate not found")

  // RFC 3161 §2.2 / RFC 5652 §5.3: with a non-data content type the signed attributes are
  // mandatory and carry the content type and the digest of the TSTInfo.
  if (signerInfo.signedAttributesDer === undefined) return fail("token has no signed attributes")
  const contentType = singleAttributeValue(signerInfo, OID.contentTypeAttr)
  if (contentType === undefined || contentType.tag !== TAG.oid || readOid(contentType) !== OID.tstInfo) {
    return fail("contentType attribute is not id-ct-TSTInfo")
  }
  const digestName = hashNameByOid[signerInfo.digestAlgorithm]
  if (digestName === undefined) return fail("unsupported digest algorithm")
  const messageDigest = singleAttributeValue(signerInfo, OID.messageDigestAttr)
  const expectedDigest = crypto.createHash(digestName).update(tstInfoDer).digest()
  if (messageDigest?.tag !== TAG.octetString || !bytesEqual(messageDigest.content, expectedDigest)) {
    return fail("messageDigest attribute does not match the TSTInfo")
  }
  if (!essCertificateMatches(signerInfo, signerCertificateDer)) {
    return fail("ESS signing certificate does not name the signer certificate")
  }
  const certificate = new crypto.X509Certificate(signerCertificateDer)
  if (!verifySignature(signerInfo, signerInfo.signedAttributesDer, certificate.publicKey)) {
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
  return { valid: true, info, signerCertificateDer: new Uint8Array(signerCertificateDer) }
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

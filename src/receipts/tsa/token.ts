// Builds the TimeStampToken: a CMS SignedData over a TSTInfo. Constant parts are encoded
// once with pkijs/asn1js; each token is then assembled with the DER writer and signed
// synchronously (asn1js alone took ~3 ms per token; this takes ~0.1 ms plus the signature),
// so every receipt can carry one.
import * as crypto from "node:crypto"
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { decodeSingle, encodingOf } from "./decode.js"
import {
  compareBytes,
  derGeneralizedTime,
  derInteger,
  derUtcTime,
  randomPositiveInteger,
  TAG,
  tlv,
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

// CMS (RFC 5652 §11.3): UTCTime through 2049, GeneralizedTime without fractions after.
const derSigningTime = (date: Date): Uint8Array =>
  date.getUTCFullYear() < 2050 ? derUtcTime(date) : derGeneralizedTime(new Date(Math.floor(date.getTime() / 1000) * 1000))

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

/** The stamping function of one TSA identity: SHA-256 digest in, DER TimeStampToken out. */
export const tokenWriter = (certificateDer: Uint8Array, scheme: SigningScheme, policyOid: string) => {
  // The issuer Name and serialNumber, copied byte for byte from the certificate.
  const certificate = new pkijs.Certificate({ schema: decodeSingle(certificateDer) })
  const issuerDer = new Uint8Array(certificate.issuer.valueBeforeDecode)
  const serialDer = encodingOf(certificate.serialNumber)

  const versionOne = derInteger(1n)
  const versionThree = derInteger(3n)
  const policy = oid(policyOid)
  const sha256Algorithm = der(new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }).toSchema())
  const accuracy = der(new pkijs.Accuracy({ seconds: 1 }).toSchema())
  const contentTypeAttribute = der(
    new pkijs.Attribute({ type: OID.contentTypeAttr, values: [new asn1js.ObjectIdentifier({ value: OID.tstInfo })] }).toSchema(),
  )
  const essAttribute = tlv(
    TAG.sequence,
    oid(OID.signingCertificateV2Attr),
    tlv(TAG.set, signingCertificateV2(certificateDer, issuerDer, serialDer)),
  )
  const signerId = tlv(TAG.sequence, issuerDer, serialDer)
  const signatureAlgorithm = der(scheme.algorithm.toSchema())
  const digestAlgorithms = tlv(TAG.set, sha256Algorithm)
  const certificates = tlv(TAG.contextConstructed0, certificateDer)
  const tstInfoType = oid(OID.tstInfo)
  const signedDataType = oid(OID.signedData)
  const messageDigestType = oid(OID.messageDigestAttr)
  const signingTimeType = oid(OID.signingTimeAttr)

  return (digestSha256: Uint8Array, options: StampOptions = {}): Uint8Array => {
    if (digestSha256.length !== 32) throw new Error("timestamp imprint must be a 32-byte SHA-256 digest")
    const now = options.now ?? new Date()
    if (Number.isNaN(now.getTime())) throw new Error("timestamp time is not a valid date")

    // TSTInfo ::= SEQUENCE { version, policy, messageImprint, serialNumber, genTime, accuracy, nonce? }
    const tstInfo = tlv(
      TAG.sequence,
      versionOne,
      policy,
      tlv(TAG.sequence, sha256Algorithm, tlv(TAG.octetString, digestSha256)),
      derInteger(randomPositiveInteger(8)),
      derGeneralizedTime(now),
      accuracy,
      ...(options.nonce === undefined ? [] : [derInteger(options.nonce)]),
    )
    const tstInfoDigest = crypto.createHash("sha256").update(tstInfo).digest()
    const attributes = [
      contentTypeAttribute,
      tlv(TAG.sequence, messageDigestType, tlv(TAG.set, tlv(TAG.octetString, tstInfoDigest))),
      tlv(TAG.sequence, signingTimeType, tlv(TAG.set, derSigningTime(now))),
      essAttribute,
    ].sort(compareBytes)
    // The signature covers the attributes as a universal SET; they travel as [0] IMPLICIT.
    const signature = scheme.sign(tlv(TAG.set, ...attributes))

    const signerInfo = tlv(
      TAG.sequence,
      versionOne,
      signerId,
      sha256Algorithm,
      tlv(TAG.contextConstructed0, ...attributes),
      signatureAlgorithm,
      tlv(TAG.octetString, signature),
    )
    const signedData = tlv(
      TAG.sequence,
      versionThree,
      digestAlgorithms,
      tlv(TAG.sequence, tstInfoType, tlv(TAG.contextConstructed0, tlv(TAG.octetString, tstInfo))),
      ...(options.includeCertificate === false ? [] : [certificates]),
      tlv(TAG.set, signerInfo),
    )
    return tlv(TAG.sequence, signedDataType, tlv(TAG.contextConstructed0, signedData))
  }
}

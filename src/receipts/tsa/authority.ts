// The gateway's own RFC 3161 timestamp authority. Constant parts of a token are
// prepared once with pkijs/asn1js; each token is then assembled with a small DER
// writer and signed synchronously with node:crypto (asn1js alone took ~3 ms per
// token; this takes ~0.1 ms plus the signature), so every receipt can carry one.
//
// How an auditor checks a token with OpenSSL 3.0 (exercised in test/tsa.test.ts):
//   openssl ts -verify -digest <sha256 hex> -token_in -in token.der -CAfile tsa.pem
// or, for a full TimeStampResp:
//   openssl ts -verify -digest <sha256 hex> -in resp.tsr -CAfile tsa.pem
// The self-signed TSA certificate is its own trust anchor; no -partial_chain or
// -untrusted is needed because the token carries the certificate (unless the request
// said certReq false, then add `-untrusted tsa.pem`).
import * as crypto from "node:crypto"
import { promisify } from "node:util"
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import {
  algorithmOid,
  bytesEqual,
  bytesOf,
  childrenOf,
  compareBytes,
  derGeneralizedTime,
  derInteger,
  derUtcTime,
  expectTag,
  issuerAndSerialOf,
  OID,
  readDer,
  readInteger,
  readOid,
  TAG,
  tlv,
} from "./asn.js"

/** The TSA identity as bytes; the caller stores the private key encrypted. */
export interface TsaMaterial {
  readonly privateKeyPkcs8Der: Uint8Array
  readonly certificateDer: Uint8Array
}

export type TsaKeyAlgorithm = "RSA-2048" | "ECDSA-P256"

export interface StampOptions {
  /** Echoed in TSTInfo when the requester sent one. */
  readonly nonce?: bigint
  /** The genTime; defaults to the current clock. */
  readonly now?: Date
  /** Put the TSA certificate into SignedData.certificates (RFC 3161 certReq). Default true. */
  readonly includeCertificate?: boolean
}

export interface TimestampAuthority {
  readonly certificatePem: string
  readonly certificateDer: Uint8Array
  readonly policyOid: string
  /** DER TimeStampToken (CMS ContentInfo with SignedData over a TSTInfo). */
  readonly stampSync: (digestSha256: Uint8Array, options?: StampOptions) => Uint8Array
  readonly stamp: (digestSha256: Uint8Array, options?: StampOptions) => Promise<Uint8Array>
  /** Answers a DER TimeStampReq with a DER TimeStampResp; malformed or unsupported requests get a rejection. */
  readonly stampResponse: (requestDer: Uint8Array) => Promise<Uint8Array>
  readonly stampResponseSync: (requestDer: Uint8Array) => Uint8Array
}

export interface AuthorityOptions {
  /**
   * TSA policy OID written into every TSTInfo. The default sits under Sigstore's
   * private enterprise arc (as the project brief suggested); a deployment that owns
   * an IANA PEN should pass its own.
   */
  readonly policyOid?: string
}

export const DEFAULT_POLICY_OID = "1.3.6.1.4.1.57264.1.1"
export const TSA_SUBJECT_COMMON_NAME = "Agent Gateway Timestamp Authority"

const TEN_YEARS_MS = 10 * 365.25 * 24 * 60 * 60 * 1000
// Backdating notBefore tolerates verifiers whose clock runs a little behind ours.
const CLOCK_SKEW_MS = 60 * 60 * 1000

const generateKeyPair = promisify(crypto.generateKeyPair)

// Clearing the sign bit keeps it positive; the encoders pick the minimal DER form.
const randomPositiveBigInt = (byteLength: number): bigint => {
  const bytes = crypto.randomBytes(byteLength)
  bytes[0] &= 0x7f
  return BigInt("0x" + bytes.toString("hex"))
}

const randomSerial = (): Uint8Array => derInteger(randomPositiveBigInt(8))

// CMS (RFC 5652 §11.3): UTCTime through 2049, GeneralizedTime without fractions after.
const derSigningTime = (date: Date): Uint8Array =>
  date.getUTCFullYear() < 2050 ? derUtcTime(date) : derGeneralizedTime(new Date(Math.floor(date.getTime() / 1000) * 1000))

const grantedStatus = tlv(TAG.sequence, derInteger(0n))

interface SigningScheme {
  readonly algorithm: pkijs.AlgorithmIdentifier
  readonly sign: (data: Uint8Array) => Uint8Array
}

const signingSchemeFor = (privateKey: crypto.KeyObject): SigningScheme => {
  const keyType = privateKey.asymmetricKeyType
  if (keyType === "rsa") {
    return {
      // PKCS#1 v1.5 signature algorithms carry an explicit NULL parameter.
      algorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256WithRsa, algorithmParams: new asn1js.Null() }),
      sign: (data) => crypto.sign("sha256", data, privateKey),
    }
  }
  if (keyType === "ec" && privateKey.asymmetricKeyDetails?.namedCurve === "prime256v1") {
    return {
      algorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaWithSha256 }),
      // node emits the DER ECDSA-Sig-Value that X.509 and CMS expect.
      sign: (data) => crypto.sign("sha256", data, { key: privateKey, dsaEncoding: "der" }),
    }
  }
  throw new Error(`TSA key must be RSA or ECDSA P-256, got ${keyType ?? "unknown"}`)
}

const commonNameOnly = (commonName: string): pkijs.RelativeDistinguishedNames =>
  new pkijs.RelativeDistinguishedNames({
    typesAndValues: [
      new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value: commonName }) }),
    ],
  })

const validityTime = (date: Date): pkijs.Time =>
  new pkijs.Time({
    type: date.getUTCFullYear() < 2050 ? pkijs.TimeType.UTCTime : pkijs.TimeType.GeneralizedTime,
    value: date,
  })

const buildCertificate = (privateKey: crypto.KeyObject, publicKey: crypto.KeyObject, now: Date): Uint8Array => {
  const scheme = signingSchemeFor(privateKey)
  const spkiDer = bytesOf(publicKey.export({ format: "der", type: "spki" }))
  const subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(spkiDer)
  const keyIdentifier = crypto
    .createHash("sha1")
    .update(subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView)
    .digest()

  // digitalSignature (bit 0) and nonRepudiation (bit 1): one byte 1100_0000, six unused bits.
  const keyUsage = new asn1js.BitString({ valueHex: new Uint8Array([0xc0]), unusedBits: 6 })
  const extensions = [
    new pkijs.Extension({
      extnID: OID.basicConstraints,
      critical: true,
      extnValue: new pkijs.BasicConstraints({ cA: false }).toSchema().toBER(false),
    }),
    new pkijs.Extension({ extnID: OID.keyUsage, critical: true, extnValue: keyUsage.toBER(false) }),
    // RFC 3161 §2.3: the only extended key usage, and critical.
    new pkijs.Extension({
      extnID: OID.extKeyUsage,
      critical: true,
      extnValue: new pkijs.ExtKeyUsage({ keyPurposes: [OID.timeStamping] }).toSchema().toBER(false),
    }),
    new pkijs.Extension({
      extnID: OID.subjectKeyIdentifier,
      critical: false,
      extnValue: new asn1js.OctetString({ valueHex: keyIdentifier }).toBER(false),
    }),
  ]

  const name = commonNameOnly(TSA_SUBJECT_COMMON_NAME)
  const certificate = new pkijs.Certificate({
    version: 2,
    serialNumber: asn1js.Integer.fromBigInt(randomPositiveBigInt(16)),
    signature: scheme.algorithm,
    issuer: name,
    subject: name,
    notBefore: validityTime(new Date(now.getTime() - CLOCK_SKEW_MS)),
    notAfter: validityTime(new Date(now.getTime() + TEN_YEARS_MS)),
    subjectPublicKeyInfo,
    extensions,
    signatureAlgorithm: scheme.algorithm,
  })
  certificate.tbsView = new Uint8Array(certificate.encodeTBS().toBER(false))
  certificate.signatureValue = new asn1js.BitString({ valueHex: scheme.sign(certificate.tbsView) })
  return new Uint8Array(certificate.toSchema().toBER(false))
}

/** A fresh TSA key pair and its self-signed certificate (valid ten years). */
export const generateTsaMaterial = async (
  options: { readonly algorithm?: TsaKeyAlgorithm; readonly now?: Date } = {},
): Promise<TsaMaterial> => {
  const { privateKey, publicKey } =
    options.algorithm === "ECDSA-P256"
      ? await generateKeyPair("ec", { namedCurve: "prime256v1" })
      : await generateKeyPair("rsa", { modulusLength: 2048 })
  return {
    privateKeyPkcs8Der: bytesOf(privateKey.export({ format: "der", type: "pkcs8" })),
    certificateDer: buildCertificate(privateKey, publicKey, options.now ?? new Date()),
  }
}

const toPem = (der: Uint8Array): string => {
  const base64 = Buffer.from(der).toString("base64")
  const lines = base64.match(/.{1,64}/g) ?? []
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`
}

const attribute = (type: string, value: asn1js.AsnType): pkijs.Attribute =>
  new pkijs.Attribute({ type, values: [value] })

// ESS signingCertificateV2 (RFC 5035): binds the signature to this exact certificate.
// SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2 }
// ESSCertIDv2 ::= SEQUENCE { certHash OCTET STRING, issuerSerial SEQUENCE { GeneralNames, serial } }
// hashAlgorithm is left out because sha256 is its DEFAULT and DER omits defaults.
const signingCertificateV2 = (certificateDer: Uint8Array, issuerDer: Uint8Array, serialDer: Uint8Array): Uint8Array => {
  const certificateHash = crypto.createHash("sha256").update(certificateDer).digest()
  // GeneralNames with one directoryName: [4] EXPLICIT Name.
  const generalNames = tlv(TAG.sequence, tlv(0xa4, issuerDer))
  const essCertIdV2 = tlv(
    TAG.sequence,
    tlv(TAG.octetString, certificateHash),
    tlv(TAG.sequence, generalNames, serialDer),
  )
  return tlv(TAG.sequence, tlv(TAG.sequence, essCertIdV2))
}

interface TimestampRequest {
  readonly version: bigint
  readonly hashAlgorithm: string
  readonly imprint: Uint8Array
  readonly policy: string | undefined
  readonly nonce: bigint | undefined
  readonly certReq: boolean
  readonly hasExtensions: boolean
}

// TimeStampReq ::= SEQUENCE { version, messageImprint, reqPolicy OID OPTIONAL,
//   nonce INTEGER OPTIONAL, certReq BOOLEAN DEFAULT FALSE, extensions [0] OPTIONAL }
const readTimestampRequest = (requestDer: Uint8Array): TimestampRequest => {
  const [version, messageImprint, ...optional] = childrenOf(expectTag(readDer(requestDer), TAG.sequence, "TimeStampReq"))
  const [hashAlgorithm, hashedMessage] = childrenOf(expectTag(messageImprint, TAG.sequence, "messageImprint"))
  const byTag = (tag: number) => optional.find((node) => node.tag === tag)
  const policy = byTag(TAG.oid)
  const nonce = byTag(TAG.integer)
  const certReq = byTag(TAG.boolean)
  return {
    version: readInteger(version),
    hashAlgorithm: algorithmOid(hashAlgorithm),
    imprint: new Uint8Array(expectTag(hashedMessage, TAG.octetString, "hashedMessage").content),
    policy: policy === undefined ? undefined : readOid(policy),
    nonce: nonce === undefined ? undefined : readInteger(nonce),
    certReq: certReq !== undefined && certReq.content.length === 1 && certReq.content[0] !== 0,
    hasExtensions: byTag(TAG.contextConstructed0) !== undefined,
  }
}

type FailureBit = "badAlg" | "badRequest" | "badDataFormat" | "unacceptedPolicy" | "unacceptedExtension"

// PKIFailureInfo bit positions (RFC 3161 §2.4.2).
const failureBitNumber: Record<FailureBit, number> = {
  badAlg: 0,
  badRequest: 2,
  badDataFormat: 5,
  unacceptedPolicy: 15,
  unacceptedExtension: 16,
}

// A named BIT STRING in DER keeps no trailing zero bits, so one set bit fixes the length.
const failureInfo = (bit: FailureBit): asn1js.BitString => {
  const position = failureBitNumber[bit]
  const bytes = new Uint8Array((position >> 3) + 1)
  bytes[position >> 3] = 0x80 >> (position & 7)
  return new asn1js.BitString({ valueHex: bytes, unusedBits: 7 - (position & 7) })
}

const rejection = (bit: FailureBit, text: string): Uint8Array =>
  new Uint8Array(
    new pkijs.TimeStampResp({
      status: new pkijs.PKIStatusInfo({
        status: pkijs.PKIStatus.rejection,
        statusStrings: [new asn1js.Utf8String({ value: text })],
        failInfo: failureInfo(bit),
      }),
    })
      .toSchema()
      .toBER(false),
  )

/** Loads a persisted TSA identity; the key must match the certificate. */
export const loadTimestampAuthority = (material: TsaMaterial, options: AuthorityOptions = {}): TimestampAuthority => {
  const policyOid = options.policyOid ?? DEFAULT_POLICY_OID
  const certificateDer = new Uint8Array(material.certificateDer)
  const privateKey = crypto.createPrivateKey({
    key: Buffer.from(material.privateKeyPkcs8Der),
    format: "der",
    type: "pkcs8",
  })
  const scheme = signingSchemeFor(privateKey)

  const { issuerDer, serialDer } = issuerAndSerialOf(certificateDer)
  const certificatePublicKey = new crypto.X509Certificate(certificateDer).publicKey
  const derivedPublicKey = crypto.createPublicKey(privateKey)
  const spki = (key: crypto.KeyObject) => bytesOf(key.export({ format: "der", type: "spki" }))
  if (!bytesEqual(spki(certificatePublicKey), spki(derivedPublicKey))) {
    throw new Error("TSA private key does not match the TSA certificate")
  }

  // Every fragment that does not change between tokens is encoded once here.
  const der = (value: { toBER(sizeOnly?: boolean): ArrayBuffer }) => new Uint8Array(value.toBER(false))
  const fragments = {
    versionOne: derInteger(1n),
    versionThree: derInteger(3n),
    policy: der(new asn1js.ObjectIdentifier({ value: policyOid })),
    sha256Algorithm: der(new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }).toSchema()),
    accuracy: der(new pkijs.Accuracy({ seconds: 1 }).toSchema()),
    tstInfoType: der(new asn1js.ObjectIdentifier({ value: OID.tstInfo })),
    signedDataType: der(new asn1js.ObjectIdentifier({ value: OID.signedData })),
    messageDigestType: der(new asn1js.ObjectIdentifier({ value: OID.messageDigestAttr })),
    signingTimeType: der(new asn1js.ObjectIdentifier({ value: OID.signingTimeAttr })),
    contentTypeAttribute: der(
      attribute(OID.contentTypeAttr, new asn1js.ObjectIdentifier({ value: OID.tstInfo })).toSchema(),
    ),
    essAttribute: tlv(
      TAG.sequence,
      der(new asn1js.ObjectIdentifier({ value: OID.signingCertificateV2Attr })),
      tlv(TAG.set, signingCertificateV2(certificateDer, issuerDer, serialDer)),
    ),
    // IssuerAndSerialNumber, copied byte for byte from the certificate.
    signerId: tlv(TAG.sequence, issuerDer, serialDer),
    signatureAlgorithm: der(scheme.algorithm.toSchema()),
  }
  const digestAlgorithms = tlv(TAG.set, fragments.sha256Algorithm)
  const certificates = tlv(TAG.contextConstructed0, certificateDer)

  const stampSync = (digestSha256: Uint8Array, stampOptions: StampOptions = {}): Uint8Array => {
    if (digestSha256.length !== 32) throw new Error("timestamp imprint must be a 32-byte SHA-256 digest")
    const now = stampOptions.now ?? new Date()
    if (Number.isNaN(now.getTime())) throw new Error("timestamp time is not a valid date")

    // TSTInfo ::= SEQUENCE { version, policy, messageImprint, serialNumber, genTime, accuracy, nonce? }
    const tstInfo = tlv(
      TAG.sequence,
      fragments.versionOne,
      fragments.policy,
      tlv(TAG.sequence, fragments.sha256Algorithm, tlv(TAG.octetString, digestSha256)),
      randomSerial(),
      derGeneralizedTime(now),
      fragments.accuracy,
      ...(stampOptions.nonce === undefined ? [] : [derInteger(stampOptions.nonce)]),
    )

    const attributes = [
      fragments.contentTypeAttribute,
      tlv(
        TAG.sequence,
        fragments.messageDigestType,
        tlv(TAG.set, tlv(TAG.octetString, crypto.createHash("sha256").update(tstInfo).digest())),
      ),
      tlv(TAG.sequence, fragments.signingTimeType, tlv(TAG.set, derSigningTime(now))),
      fragments.essAttribute,
    ].sort(compareBytes)
    // The signature covers the attributes as a universal SET; they travel as [0] IMPLICIT.
    const signature = scheme.sign(tlv(TAG.set, ...attributes))

    const signerInfo = tlv(
      TAG.sequence,
      fragments.versionOne,
      fragments.signerId,
      fragments.sha256Algorithm,
      tlv(TAG.contextConstructed0, ...attributes),
      fragments.signatureAlgorithm,
      tlv(TAG.octetString, signature),
    )
    const signedData = tlv(
      TAG.sequence,
      fragments.versionThree,
      digestAlgorithms,
      tlv(TAG.sequence, fragments.tstInfoType, tlv(TAG.contextConstructed0, tlv(TAG.octetString, tstInfo))),
      ...(stampOptions.includeCertificate === false ? [] : [certificates]),
      tlv(TAG.set, signerInfo),
    )
    return tlv(TAG.sequence, fragments.signedDataType, tlv(TAG.contextConstructed0, signedData))
  }

  const stampResponseSync = (requestDer: Uint8Array): Uint8Array => {
    let request: TimestampRequest
    try {
      request = readTimestampRequest(requestDer)
    } catch {
      return rejection("badDataFormat", "malformed TimeStampReq")
    }
    if (request.version !== 1n) return rejection("badRequest", "unsupported TimeStampReq version")
    if (request.hashAlgorithm !== OID.sha256) return rejection("badAlg", "only sha256 message imprints are accepted")
    if (request.imprint.length !== 32) return rejection("badDataFormat", "sha256 imprint must be 32 bytes")
    if (request.policy !== undefined && request.policy !== policyOid) {
      return rejection("unacceptedPolicy", "unsupported TSA policy")
    }
    if (request.hasExtensions) return rejection("unacceptedExtension", "request extensions are not supported")
    const token = stampSync(request.imprint, {
      ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
      includeCertificate: request.certReq,
    })
    // TimeStampResp ::= SEQUENCE { status PKIStatusInfo { granted(0) }, timeStampToken ContentInfo }
    return tlv(TAG.sequence, grantedStatus, token)
  }

  return {
    certificateDer,
    certificatePem: toPem(certificateDer),
    policyOid,
    stampSync,
    stamp: async (digestSha256, stampOptions) => stampSync(digestSha256, stampOptions),
    stampResponseSync,
    stampResponse: async (requestDer) => stampResponseSync(requestDer),
  }
}

/** Loads the given identity, or generates a fresh RSA-2048 one when none is given. */
export const createTimestampAuthority = async (
  material?: TsaMaterial,
  options: AuthorityOptions = {},
): Promise<TimestampAuthority> => loadTimestampAuthority(material ?? (await generateTsaMaterial()), options)

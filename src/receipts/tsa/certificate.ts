// The TSA's key pair and self-signed certificate, built with pkijs.
import * as crypto from "node:crypto"
import { promisify } from "node:util"
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { bytesOf, randomPositiveInteger } from "./der-writer.js"
import { OID } from "./oids.js"
import { signingSchemeFor } from "./signing.js"

/** The TSA identity as bytes; the caller stores the private key encrypted. */
export interface TsaMaterial {
  readonly privateKeyPkcs8Der: Uint8Array
  readonly certificateDer: Uint8Array
}

export type TsaKeyAlgorithm = "RSA-2048" | "ECDSA-P256"

export const TSA_SUBJECT_COMMON_NAME = "Agent Gateway Timestamp Authority"

const TEN_YEARS_MS = 10 * 365.25 * 24 * 60 * 60 * 1000
// Backdating notBefore tolerates verifiers whose clock runs a little behind ours.
const CLOCK_SKEW_MS = 60 * 60 * 1000

const generateKeyPair = promisify(crypto.generateKeyPair)

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

const extensionsFor = (subjectPublicKeyInfo: pkijs.PublicKeyInfo): pkijs.Extension[] => {
  const keyIdentifier = crypto
    .createHash("sha1")
    .update(subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView)
    .digest()
  // digitalSignature (bit 0) and nonRepudiation (bit 1): one byte 1100_0000, six unused bits.
  const keyUsage = new asn1js.BitString({ valueHex: new Uint8Array([0xc0]), unusedBits: 6 })
  return [
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
}

const buildCertificate = (privateKey: crypto.KeyObject, publicKey: crypto.KeyObject, now: Date): Uint8Array => {
  const scheme = signingSchemeFor(privateKey)
  const subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(bytesOf(publicKey.export({ format: "der", type: "spki" })))
  const name = commonNameOnly(TSA_SUBJECT_COMMON_NAME)
  const certificate = new pkijs.Certificate({
    version: 2,
    serialNumber: asn1js.Integer.fromBigInt(randomPositiveInteger(16)),
    signature: scheme.algorithm,
    issuer: name,
    subject: name,
    notBefore: validityTime(new Date(now.getTime() - CLOCK_SKEW_MS)),
    notAfter: validityTime(new Date(now.getTime() + TEN_YEARS_MS)),
    subjectPublicKeyInfo,
    extensions: extensionsFor(subjectPublicKeyInfo),
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

/** The private key of a persisted identity, refused unless it belongs to the certificate. */
export const loadTsaKey = (material: TsaMaterial): crypto.KeyObject => {
  const privateKey = crypto.createPrivateKey({
    key: Buffer.from(material.privateKeyPkcs8Der),
    format: "der",
    type: "pkcs8",
  })
  const spki = (key: crypto.KeyObject) => Buffer.from(key.export({ format: "der", type: "spki" }))
  const certificatePublicKey = new crypto.X509Certificate(material.certificateDer).publicKey
  if (!spki(certificatePublicKey).equals(spki(crypto.createPublicKey(privateKey)))) {
    throw new Error("TSA private key does not match the TSA certificate")
  }
  return privateKey
}

export const certificatePem = (der: Uint8Array): string => {
  const lines = Buffer.from(der).toString("base64").match(/.{1,64}/g) ?? []
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`
}

// Reading RFC 3161 TimeStampTokens (ours or an external TSA's) with pkijs.
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { readGeneralizedTime, readSingle } from "../../../protocol/verifier/der.js"
import { decodeSingle, encodingOf, isContextTag, itemsOf } from "./decode.js"
import { OID } from "./oids.js"

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

export interface DecodedToken {
  readonly info: TimestampTokenInfo
  readonly tstInfoDer: Uint8Array
  readonly signerInfos: ReadonlyArray<pkijs.SignerInfo>
  /** Embedded certificates as their original bytes: ESS hashes and signatures are over those. */
  readonly certificatesDer: ReadonlyArray<Uint8Array>
}

const readTstInfo = (tstInfoDer: Uint8Array): TimestampTokenInfo => {
  const schema = decodeSingle(tstInfoDer)
  const tstInfo = new pkijs.TSTInfo({ schema })
  if (tstInfo.version !== 1) throw new TimestampTokenError(`unsupported TSTInfo version ${tstInfo.version}`)
  // genTime from its own bytes: asn1js' Date rounds fractions through floats and reads
  // years below 100 as 19xx, so the portable verifier's strict reader is used instead.
  const genTime = readGeneralizedTime(readSingle(encodingOf(itemsOf(schema)[4])), "genTime")
  const { hashAlgorithm, hashedMessage } = tstInfo.messageImprint
  return {
    policy: tstInfo.policy,
    imprintAlgorithm: hashAlgorithm.algorithmId,
    imprint: new Uint8Array(hashedMessage.getValue()),
    serial: tstInfo.serialNumber.toBigInt().toString(),
    genTime,
    nonce: tstInfo.nonce?.toBigInt(),
  }
}

// SignedData ::= SEQUENCE { version, digestAlgorithms, encapContentInfo, [0] certificates OPTIONAL, ... }
const embeddedCertificates = (signedDataSchema: asn1js.AsnType): Uint8Array[] => {
  const certificateSet = itemsOf(signedDataSchema)
    .slice(3)
    .find((item) => isContextTag(item, 0))
  return itemsOf(certificateSet)
    .filter((item) => item instanceof asn1js.Sequence)
    .map(encodingOf)
}

const decode = (der: Uint8Array): DecodedToken => {
  const contentInfo = new pkijs.ContentInfo({ schema: decodeSingle(der) })
  if (contentInfo.contentType !== OID.signedData) throw new TimestampTokenError("token is not CMS SignedData")
  const signedData = new pkijs.SignedData({ schema: contentInfo.content })
  const { eContentType, eContent } = signedData.encapContentInfo
  if (eContentType !== OID.tstInfo || eContent === undefined) {
    throw new TimestampTokenError("token does not encapsulate a TSTInfo")
  }
  // A BER OCTET STRING may arrive constructed (in pieces); getValue joins them.
  if (!(eContent instanceof asn1js.OctetString)) throw new TimestampTokenError("expected an OCTET STRING")
  const tstInfoDer = new Uint8Array(eContent.getValue())
  return {
    info: readTstInfo(tstInfoDer),
    tstInfoDer,
    signerInfos: signedData.signerInfos,
    certificatesDer: embeddedCertificates(contentInfo.content),
  }
}

/** Decodes a DER TimeStampToken; every failure is a TimestampTokenError. */
export const decodeTimestampToken = (der: Uint8Array): DecodedToken => {
  try {
    return decode(der)
  } catch (cause) {
    if (cause instanceof TimestampTokenError) throw cause
    throw new TimestampTokenError(`malformed timestamp token: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

/** Reads the TSTInfo of a DER TimeStampToken. Checks structure only, not the signature. */
export const parseTimestampToken = (der: Uint8Array): TimestampTokenInfo => decodeTimestampToken(der).info

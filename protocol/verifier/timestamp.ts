/**
 * Reads the TSTInfo of an RFC 3161 TimeStampToken:
 *
 *   ContentInfo { contentType id-signedData, [0] EXPLICIT SignedData {
 *     version, digestAlgorithms, encapContentInfo { eContentType id-ct-TSTInfo,
 *     [0] EXPLICIT OCTET STRING (DER of TSTInfo) }, ... } }
 *   TSTInfo { version, policy, messageImprint { hashAlgorithm, hashedMessage },
 *     serialNumber, genTime, ... }
 *
 * Only the content is read; the TSA's CMS signature over it is checked with
 * `openssl ts -verify` or any CMS library, which needs X.509 parsing we keep out
 * of this portable module.
 */
import {
  childrenOf,
  DerError,
  expectUniversal,
  explicitContent,
  readGeneralizedTime,
  readIntegerBytes,
  readOctetString,
  readOid,
  readSingle,
  UniversalTag
} from "./der.js"
import { base64Decode, bytesToHex } from "./encoding.js"

export const OID_SIGNED_DATA = "1.2.840.113549.1.7.2"
export const OID_TST_INFO = "1.2.840.113549.1.9.16.1.4"
export const OID_SHA256 = "2.16.840.1.101.3.4.2.1"

export interface TimestampImprint {
  /** Dotted OID of the hash algorithm; sha256 is 2.16.840.1.101.3.4.2.1. */
  readonly hashAlgorithm: string
  readonly hashedMessage: Uint8Array
}

export interface TimestampInfo extends TimestampImprint {
  readonly policy: string
  /** Serial number as lowercase hex of its DER content bytes. */
  readonly serialNumber: string
  readonly genTime: Date
}

/** Token bytes from DER bytes or a base64 string. */
export const timestampTokenBytes = (token: Uint8Array | string): Uint8Array =>
  typeof token === "string" ? base64Decode(token) : token

/** The DER bytes of the TSTInfo inside a TimeStampToken. */
export const readTstInfoBytes = (token: Uint8Array | string): Uint8Array => {
  const contentInfo = childrenOf(expectUniversal(readSingle(timestampTokenBytes(token)), UniversalTag.sequence, "ContentInfo"))
  if (readOid(contentInfo[0], "contentType") !== OID_SIGNED_DATA) throw new DerError("token is not CMS SignedData")
  const signedData = childrenOf(
    expectUniversal(explicitContent(contentInfo[1], 0, "SignedData"), UniversalTag.sequence, "SignedData")
  )
  // signedData: version, digestAlgorithms, encapContentInfo, ...
  readIntegerBytes(signedData[0], "SignedData version")
  expectUniversal(signedData[1], UniversalTag.set, "digestAlgorithms")
  const encap = childrenOf(expectUniversal(signedData[2], UniversalTag.sequence, "encapContentInfo"))
  if (readOid(encap[0], "eContentType") !== OID_TST_INFO) throw new DerError("token content is not TSTInfo")
  return readOctetString(explicitContent(encap[1], 0, "eContent"), "eContent")
}

export const readTimestampInfo = (token: Uint8Array | string): TimestampInfo => {
  const tstInfo = childrenOf(expectUniversal(readSingle(readTstInfoBytes(token)), UniversalTag.sequence, "TSTInfo"))
  readIntegerBytes(tstInfo[0], "TSTInfo version")
  const policy = readOid(tstInfo[1], "policy")
  const imprint = childrenOf(expectUniversal(tstInfo[2], UniversalTag.sequence, "messageImprint"))
  const algorithm = childrenOf(expectUniversal(imprint[0], UniversalTag.sequence, "hashAlgorithm"))
  const hashAlgorithm = readOid(algorithm[0], "hashAlgorithm")
  const hashedMessage = readOctetString(imprint[1], "hashedMessage")
  const serialNumber = bytesToHex(readIntegerBytes(tstInfo[3], "serialNumber"))
  const genTime = readGeneralizedTime(tstInfo[4], "genTime")
  return { policy, hashAlgorithm, hashedMessage, serialNumber, genTime }
}

/** The message imprint a TimeStampToken commits to. Throws DerError on malformed input. */
export const readTimestampImprint = (token: Uint8Array | string): TimestampImprint => {
  const { hashAlgorithm, hashedMessage } = readTimestampInfo(token)
  return { hashAlgorithm, hashedMessage }
}

/** The time the TSA asserts (TSTInfo.genTime). Throws DerError on malformed input. */
export const readTimestampGenTime = (token: Uint8Array | string): Date => readTimestampInfo(token).genTime

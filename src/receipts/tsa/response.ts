// Answers a DER TimeStampReq (RFC 3161 §2.4) with a TimeStampResp: a granted token, or a
// rejection naming the PKIFailureInfo bit.
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { decodeSingle } from "./decode.js"
import { derInteger, TAG, tlv } from "./der-writer.js"
import { OID } from "./oids.js"
import type { StampOptions } from "./token.js"

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

const grantedStatus = tlv(TAG.sequence, derInteger(0n))

/** The TimeStampResp for `requestDer`, stamping with `stamp` when the request is acceptable. */
export const answerTimestampRequest = (
  requestDer: Uint8Array,
  policyOid: string,
  stamp: (digestSha256: Uint8Array, options: StampOptions) => Uint8Array,
): Uint8Array => {
  let request: pkijs.TimeStampReq
  try {
    request = new pkijs.TimeStampReq({ schema: decodeSingle(requestDer) })
  } catch {
    return rejection("badDataFormat", "malformed TimeStampReq")
  }
  const { hashAlgorithm, hashedMessage } = request.messageImprint
  const imprint = new Uint8Array(hashedMessage.getValue())
  if (request.version !== 1) return rejection("badRequest", "unsupported TimeStampReq version")
  if (hashAlgorithm.algorithmId !== OID.sha256) return rejection("badAlg", "only sha256 message imprints are accepted")
  if (imprint.length !== 32) return rejection("badDataFormat", "sha256 imprint must be 32 bytes")
  if (request.reqPolicy !== undefined && request.reqPolicy !== policyOid) {
    return rejection("unacceptedPolicy", "unsupported TSA policy")
  }
  if (request.extensions !== undefined) return rejection("unacceptedExtension", "request extensions are not supported")
  const token = stamp(imprint, {
    ...(request.nonce === undefined ? {} : { nonce: request.nonce.toBigInt() }),
    includeCertificate: request.certReq === true,
  })
  // TimeStampResp ::= SEQUENCE { status PKIStatusInfo { granted(0) }, timeStampToken ContentInfo }
  return tlv(TAG.sequence, grantedStatus, token)
}

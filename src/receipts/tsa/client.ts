// RFC 3161 client for an external timestamp authority reached over HTTP(S).
// The HTTP call is injected so the caller can route it through the SSRF-safe
// outbound client; this module only builds, checks and unwraps the DER.
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { decodeSingle, encodingOf, itemsOf } from "./decode.js"
import { randomPositiveInteger } from "./der-writer.js"
import { OID } from "./oids.js"
import { verifyTimestampToken } from "./verify.js"

export type TimestampPost = (
  url: string,
  body: Uint8Array,
  headers: Readonly<Record<string, string>>,
) => Promise<{ readonly status: number; readonly body: Uint8Array }>

export type TimestampRequestFailure =
  | "invalid_digest"
  | "http_status"
  | "malformed_response"
  | "rejected"
  | "nonce_mismatch"
  | "invalid_token"

export class TimestampRequestError extends Error {
  override readonly name = "TimestampRequestError"
  constructor(
    readonly reason: TimestampRequestFailure,
    message: string,
  ) {
    super(message)
  }
}

export interface RequestTimestampOptions {
  /** When given, the token must be signed by this TSA certificate. */
  readonly trustedCertificateDer?: Uint8Array
}

/**
 * TimeStampReq ::= SEQUENCE { version 1, messageImprint, nonce, certReq TRUE }.
 * certReq asks the TSA to embed its certificate so the token verifies on its own.
 */
export const buildTimestampRequest = (digestSha256: Uint8Array, nonce: bigint): Uint8Array => {
  const request = new pkijs.TimeStampReq({
    version: 1,
    // id-sha256 with absent parameters (RFC 5754 §2).
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
      hashedMessage: new asn1js.OctetString({ valueHex: digestSha256 }),
    }),
    nonce: asn1js.Integer.fromBigInt(nonce),
    certReq: true,
  })
  return new Uint8Array(request.toSchema().toBER(false))
}

/**
 * Asks the TSA at `tsaUrl` to timestamp a SHA-256 digest and returns the DER
 * TimeStampToken after checking status, imprint, nonce and the token's signature.
 */
export const requestTimestamp = async (
  tsaUrl: string,
  digest: Uint8Array,
  post: TimestampPost,
  options: RequestTimestampOptions = {},
): Promise<Uint8Array> => {
  if (digest.length !== 32) throw new TimestampRequestError("invalid_digest", "digest must be 32 bytes of SHA-256")
  const nonce = randomPositiveInteger(8)
  const response = await post(tsaUrl, buildTimestampRequest(digest, nonce), {
    "content-type": "application/timestamp-query",
    accept: "application/timestamp-reply",
  })
  if (response.status !== 200) {
    throw new TimestampRequestError("http_status", `TSA answered HTTP ${response.status}`)
  }

  let status: { readonly code: number; readonly text: string }
  let tokenDer: Uint8Array | undefined
  try {
    // TimeStampResp ::= SEQUENCE { status PKIStatusInfo, timeStampToken ContentInfo OPTIONAL }
    const schema = decodeSingle(response.body)
    const parsed = new pkijs.TimeStampResp({ schema })
    const texts = (parsed.status.statusStrings ?? []).map((text) => text.valueBlock.value)
    status = { code: parsed.status.status, text: texts.join("; ") }
    // The token is kept as received: its signature covers those exact bytes.
    const tokenNode = itemsOf(schema)[1]
    tokenDer = tokenNode === undefined ? undefined : encodingOf(tokenNode)
  } catch (cause) {
    throw new TimestampRequestError(
      "malformed_response",
      `malformed TimeStampResp: ${cause instanceof Error ? cause.message : String(cause)}`,
    )
  }
  // PKIStatus granted(0) or grantedWithMods(1).
  if (status.code !== 0 && status.code !== 1) {
    throw new TimestampRequestError(
      "rejected",
      `TSA answered status ${status.code}${status.text === "" ? "" : `: ${status.text}`}`,
    )
  }
  if (tokenDer === undefined) throw new TimestampRequestError("malformed_response", "granted response without a token")

  const verification = verifyTimestampToken(tokenDer, {
    digest,
    ...(options.trustedCertificateDer === undefined ? {} : { certificateDer: options.trustedCertificateDer }),
  })
  if (!verification.valid) throw new TimestampRequestError("invalid_token", verification.reason)
  if (verification.info.imprintAlgorithm !== OID.sha256) {
    throw new TimestampRequestError("invalid_token", "TSA token imprint is not sha256")
  }
  if (verification.info.nonce !== nonce) {
    throw new TimestampRequestError("nonce_mismatch", "TSA token does not echo the request nonce")
  }
  return tokenDer
}

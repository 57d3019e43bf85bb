// The gateway's own RFC 3161 timestamp authority: a persisted identity (certificate.ts)
// that stamps digests (token.ts) and answers TimeStampReqs (response.ts), without HTTP.
//
// How an auditor checks a token with OpenSSL 3.0 (exercised in test/tsa.test.ts):
//   openssl ts -verify -digest <sha256 hex> -token_in -in token.der -CAfile tsa.pem
// or, for a full TimeStampResp:
//   openssl ts -verify -digest <sha256 hex> -in resp.tsr -CAfile tsa.pem
// The self-signed TSA certificate is its own trust anchor; no -partial_chain or
// -untrusted is needed because the token carries the certificate (unless the request
// said certReq false, then add `-untrusted tsa.pem`).
import { certificatePem, generateTsaMaterial, loadTsaKey, type TsaMaterial } from "./certificate.js"
import { answerTimestampRequest } from "./response.js"
import { signingSchemeFor } from "./signing.js"
import { type StampOptions, tokenWriter } from "./token.js"

export {
  generateTsaMaterial,
  TSA_SUBJECT_COMMON_NAME,
  type TsaKeyAlgorithm,
  type TsaMaterial,
} from "./certificate.js"
export type { StampOptions } from "./token.js"

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

/** Loads a persisted TSA identity; the key must match the certificate. */
export const loadTimestampAuthority = (material: TsaMaterial, options: AuthorityOptions = {}): TimestampAuthority => {
  const policyOid = options.policyOid ?? DEFAULT_POLICY_OID
  const certificateDer = new Uint8Array(material.certificateDer)
  const stampSync = tokenWriter(certificateDer, signingSchemeFor(loadTsaKey(material)), policyOid)
  const stampResponseSync = (requestDer: Uint8Array) => answerTimestampRequest(requestDer, policyOid, stampSync)
  return {
    certificateDer,
    certificatePem: certificatePem(certificateDer),
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

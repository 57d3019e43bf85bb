// Checks a SignerInfo's signature with node:crypto, for the algorithms TSAs use.
import * as crypto from "node:crypto"
import * as pkijs from "pkijs"
import { hashNameByOid, OID } from "./oids.js"

const hashBySignatureOid: Readonly<Record<string, string>> = {
  [OID.sha1WithRsa]: "sha1",
  [OID.sha256WithRsa]: "sha256",
  [OID.sha384WithRsa]: "sha384",
  [OID.sha512WithRsa]: "sha512",
  [OID.ecdsaWithSha256]: "sha256",
  [OID.ecdsaWithSha384]: "sha384",
  [OID.ecdsaWithSha512]: "sha512",
}

// Absent RSASSA-PSS parameters mean sha1 with a 20-byte salt; pkijs fills the same defaults.
const pssParameters = (algorithm: pkijs.AlgorithmIdentifier): { hashName: string | undefined; saltLength: number } => {
  if (algorithm.algorithmParams === undefined) return { hashName: "sha1", saltLength: 20 }
  const parameters = new pkijs.RSASSAPSSParams({ schema: algorithm.algorithmParams })
  return { hashName: hashNameByOid[parameters.hashAlgorithm.algorithmId], saltLength: parameters.saltLength }
}

/** Whether `signedBytes` carry the SignerInfo's signature under `key`. */
export const verifySignerSignature = (
  signerInfo: pkijs.SignerInfo,
  signedBytes: Uint8Array,
  key: crypto.KeyObject,
): boolean => {
  const signature = signerInfo.signature.valueBlock.valueHexView
  const algorithm = signerInfo.signatureAlgorithm.algorithmId
  if (algorithm === OID.ed25519) return crypto.verify(null, signedBytes, key, signature)
  if (algorithm === OID.rsaPss) {
    const { hashName, saltLength } = pssParameters(signerInfo.signatureAlgorithm)
    if (hashName === undefined) return false
    const options = { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength }
    return crypto.verify(hashName, signedBytes, options, signature)
  }
  // Bare key algorithm OIDs take the hash from the SignerInfo digestAlgorithm.
  const hashName =
    algorithm === OID.rsaEncryption || algorithm === OID.ecPublicKey
      ? hashNameByOid[signerInfo.digestAlgorithm.algorithmId]
      : hashBySignatureOid[algorithm]
  if (hashName === undefined) return false
  return crypto.verify(hashName, signedBytes, { key, dsaEncoding: "der" }, signature)
}

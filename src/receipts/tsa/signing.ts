// The TSA key's signature algorithm, shared by its certificate and its tokens.
import * as crypto from "node:crypto"
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"
import { OID } from "./oids.js"

export interface SigningScheme {
  readonly algorithm: pkijs.AlgorithmIdentifier
  readonly sign: (data: Uint8Array) => Uint8Array
}

export const signingSchemeFor = (privateKey: crypto.KeyObject): SigningScheme => {
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
      // node's default dsaEncoding is DER, the ECDSA-Sig-Value X.509 and CMS expect. The key is
      // passed bare: for an options object node first probes it as a KeyObject and a CryptoKey
      // by catching two exceptions, ~15 µs on a ~22 µs signature.
      sign: (data) => crypto.sign("sha256", data, privateKey),
    }
  }
  throw new Error(`TSA key must be RSA or ECDSA P-256, got ${keyType ?? "unknown"}`)
}

// Object identifiers used by RFC 3161 tokens, requests and the TSA certificate.

export const OID = {
  sha1: "1.3.14.3.2.26",
  sha256: "2.16.840.1.101.3.4.2.1",
  sha384: "2.16.840.1.101.3.4.2.2",
  sha512: "2.16.840.1.101.3.4.2.3",
  rsaEncryption: "1.2.840.113549.1.1.1",
  rsaPss: "1.2.840.113549.1.1.10",
  sha1WithRsa: "1.2.840.113549.1.1.5",
  sha256WithRsa: "1.2.840.113549.1.1.11",
  sha384WithRsa: "1.2.840.113549.1.1.12",
  sha512WithRsa: "1.2.840.113549.1.1.13",
  ecPublicKey: "1.2.840.10045.2.1",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  ecdsaWithSha384: "1.2.840.10045.4.3.3",
  ecdsaWithSha512: "1.2.840.10045.4.3.4",
  ed25519: "1.3.101.112",
  signedData: "1.2.840.113549.1.7.2",
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  contentTypeAttr: "1.2.840.113549.1.9.3",
  messageDigestAttr: "1.2.840.113549.1.9.4",
  signingTimeAttr: "1.2.840.113549.1.9.5",
  signingCertificateAttr: "1.2.840.113549.1.9.16.2.12",
  signingCertificateV2Attr: "1.2.840.113549.1.9.16.2.47",
  commonName: "2.5.4.3",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  basicConstraints: "2.5.29.19",
  subjectKeyIdentifier: "2.5.29.14",
  timeStamping: "1.3.6.1.5.5.7.3.8",
} as const

/** node:crypto hash names for the digest OIDs a timestamp token may use. */
export const hashNameByOid: Readonly<Record<string, string>> = {
  [OID.sha1]: "sha1",
  [OID.sha256]: "sha256",
  [OID.sha384]: "sha384",
  [OID.sha512]: "sha512",
}

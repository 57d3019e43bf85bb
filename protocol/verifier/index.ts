/**
 * Portable receipt verifier: runs in a browser or any client with no server.
 * Imports only @noble/ed25519, @noble/hashes and canonicalize.
 */

export {
  BUNDLE_RECORD_KEYS,
  type BundleChecks,
  type BundleExportChecks,
  type BundleVerification,
  verifyBundle,
  verifyBundleExport
} from "./bundle.js"
export { canonicalBytes, canonicalJson, payloadHash, sha256Tagged, textHash } from "./canonical.js"
export {
  type Checkpoint,
  CheckpointError,
  checkpointBody,
  noteKeyId,
  parseCheckpoint,
  signatureLine,
  verifierKey,
  verifyCheckpoint
} from "./checkpoint.js"
export {
  REPORT_DESCRIPTOR_FIELDS,
  type ReportCheck,
  type ReportChecks,
  type ReportInput,
  type ReportVerification,
  reportDescriptor,
  reportDescriptorBytes,
  verifyReportDescriptor
} from "./compliance.js"
export { DerError } from "./der.js"
export {
  base64Decode,
  base64Encode,
  base64UrlDecode,
  base64UrlEncode,
  bytesEqual,
  bytesToHex,
  EncodingError,
  hexToBytes,
  utf8Bytes
} from "./encoding.js"
export {
  EXPLANATION_SIGNED_KEYS,
  type ExplanationCheck,
  type ExplanationChecks,
  type ExplanationVerification,
  explanationEnvelope,
  explanationSignedContent,
  NOT_CHECKED,
  verifyExplanation
} from "./explanation.js"
export {
  type HashInput,
  hashBytes,
  leafHash,
  MerkleRootBuilder,
  type NodeHasher,
  nodeHash,
  rootFromInclusionProof,
  verifyConsistency,
  verifyConsistencyWith,
  verifyInclusion,
  verifyInclusionWith
} from "./merkle.js"
export {
  decodeSignature,
  type Ed25519Jwk,
  type PublicKeyInput,
  publicKeyId,
  REPLAY_RECEIPT_VERSION,
  type ReceiptChecks,
  type ReceiptInput,
  type ReceiptVerification,
  type ReplayContextInput,
  rawPublicKey,
  replayContextHash,
  verifyEd25519,
  verifyReceipt
} from "./receipt.js"
export {
  REPUTATION_COUNT_KEYS,
  REPUTATION_FORMULA_VERSION,
  type ReputationChecks,
  type ReputationCounts,
  type ReputationTierName,
  type ReputationVerification,
  reputationScore,
  reputationStatement,
  reputationTier,
  type ScoreParts,
  scoreParts,
  verifyReputation
} from "./reputation.js"
export {
  SEALED_PACKAGE_KEYS,
  SNAPSHOT_SIGNED_KEYS,
  signedContent,
  verifyEvidencePackage,
  verifySnapshot
} from "./sealed.js"
export {
  type ConsistencyProofInput,
  type InclusionProofInput,
  receiptLeafHash,
  SETTLEMENT_SIGNED_FIELDS,
  type SettlementChecks,
  settlementRecord,
  type TreeHead,
  verifySettlement,
  verifySettlementConsistency,
  verifySettlementInclusion
} from "./settlement.js"
export {
  OID_SHA256,
  OID_SIGNED_DATA,
  OID_TST_INFO,
  readTimestampGenTime,
  readTimestampImprint,
  readTimestampInfo,
  readTstInfoBytes,
  type TimestampImprint,
  type TimestampInfo
} from "./timestamp.js"

/**
 * Ed25519Signature2020 proofs (JSON-LD, RDF canonicalization) through Digital Bazaar's libraries,
 * with a document loader that knows only what we serve: the W3C credentials, Ed25519 2020 and
 * StatusList2021 contexts (bundled), our agent-capability context and the platform's root DID
 * document. Nothing is fetched from the network while signing or verifying.
 * The libraries and their contexts are imported at the first signature or verification
 * (src/platform/lazy.ts): most processes never issue a credential.
 */
import { loadOnce } from "../platform/lazy.js"

/** The context URLs credentials name (the same as the bundled libraries' `CONTEXT_URL`s; a test checks). */
export const CREDENTIALS_V1 = "https://www.w3.org/2018/credentials/v1"
export const STATUS_LIST_2021_V1 = "https://w3id.org/vc/status-list/2021/v1"
const ED25519_2020_V1 = "https://w3id.org/security/suites/ed25519-2020/v1"

/** The suite, the signing and verifying functions and the bundled contexts, loaded together once. */
const loadLibraries = loadOnce(async () => {
  const [suite, vc, signatures, statusListContext, credentialsContext, ed25519Context] = await Promise.all([
    import("@digitalbazaar/ed25519-signature-2020"),
    import("@digitalbazaar/vc"),
    import("jsonld-signatures"),
    import("@digitalbazaar/vc-status-list-context"),
    import("credentials-context"),
    import("ed25519-signature-2020-context")
  ])
  return {
    Ed25519Signature2020: suite.Ed25519Signature2020,
    issue: vc.issue,
    jsigs: signatures.default,
    bundled: new Map<string, unknown>([...credentialsContext.contexts, ...ed25519Context.contexts, ...statusListContext.contexts])
  }
})

export const agentCapabilityContextUrl = (baseUrl: string) => `${baseUrl}/contexts/agent-capability/v1`

/** The JSON-LD context of the credential subject's terms; their IRIs are fragments of the context's own URL. */
export const agentCapabilityContext = (baseUrl: string) => {
  const term = (name: string) => `${agentCapabilityContextUrl(baseUrl)}#${name}`
  return {
    "@context": {
      "@version": 1.1,
      "@protected": true,
      AgentCapabilityCredential: term("AgentCapabilityCredential"),
      agentSlug: term("agentSlug"),
      displayName: term("displayName"),
      ownerOrganization: term("ownerOrganization"),
      capabilities: { "@id": term("capabilities"), "@container": "@set" },
      modelId: term("modelId"),
      version: term("version"),
      euAiActCompliant: term("euAiActCompliant"),
      notarizationEnabled: term("notarizationEnabled"),
      maxActionValue: term("maxActionValue")
    }
  }
}

export interface RootDid {
  readonly id: string
  /** The root DID document as served (its verification methods are the platform's keys). */
  readonly document: { readonly verificationMethod: ReadonlyArray<{ readonly id: string }> } & Record<string, unknown>
}

const found = (url: string, document: unknown) => ({ contextUrl: null, documentUrl: url, document })

export const makeDocumentLoader = (baseUrl: string, root: RootDid) => {
  const ours = agentCapabilityContext(baseUrl)
  return async (url: string) => {
    const context = (await loadLibraries()).bundled.get(url)
    if (context !== undefined) return found(url, context)
    if (url === agentCapabilityContextUrl(baseUrl)) return found(url, ours)
    if (url === root.id) return found(url, root.document)
    const method = root.document.verificationMethod.find((candidate) => candidate.id === url)
    if (method !== undefined) return found(url, { "@context": ED25519_2020_V1, ...method })
    throw new Error(`document not available offline: ${url}`)
  }
}

export type DocumentLoader = ReturnType<typeof makeDocumentLoader>

export interface ProofSigner {
  /** The verification method id: `{root DID}#{public_key_id}`. */
  readonly id: string
  readonly signRaw: (bytes: Uint8Array) => Uint8Array
}

/** The credential with an Ed25519Signature2020 proof (assertionMethod) added. */
export const signCredential = async (credential: object, signer: ProofSigner, documentLoader: DocumentLoader) => {
  const { issue, Ed25519Signature2020 } = await loadLibraries()
  return issue({
    credential,
    suite: new Ed25519Signature2020({ signer: { id: signer.id, algorithm: "Ed25519", sign: async ({ data }) => signer.signRaw(data) } }),
    documentLoader
  })
}

/** Whether the credential's Ed25519Signature2020 proof verifies against our root DID's keys (false for anything unreadable). */
export const proofVerifies = async (credential: object, documentLoader: DocumentLoader): Promise<boolean> => {
  const { jsigs, Ed25519Signature2020 } = await loadLibraries()
  try {
    const result = await jsigs.verify(credential, { suite: new Ed25519Signature2020(), purpose: new jsigs.purposes.AssertionProofPurpose(), documentLoader })
    return result.verified === true
  } catch {
    return false
  }
}

/**
 * Ed25519Signature2020 proofs (JSON-LD, RDF canonicalization) through Digital Bazaar's libraries,
 * with a document loader that knows only what we serve: the W3C credentials, Ed25519 2020 and
 * StatusList2021 contexts (bundled), our agent-capability context and the platform's root DID
 * document. Nothing is fetched from the network while signing or verifying.
 */
import { Ed25519Signature2020 } from "@digitalbazaar/ed25519-signature-2020"
import { issue } from "@digitalbazaar/vc"
import * as statusListContext from "@digitalbazaar/vc-status-list-context"
import * as credentialsContext from "credentials-context"
import * as ed25519Context from "ed25519-signature-2020-context"
import jsigs from "jsonld-signatures"

export const CREDENTIALS_V1 = credentialsContext.CONTEXT_URL
export const STATUS_LIST_2021_V1 = statusListContext.CONTEXT_URL_V1

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

const bundled = new Map<string, unknown>([...credentialsContext.contexts, ...ed25519Context.contexts, ...statusListContext.contexts])

export interface RootDid {
  readonly id: string
  /** The root DID document as served (its verification methods are the platform's keys). */
  readonly document: { readonly verificationMethod: ReadonlyArray<{ readonly id: string }> } & Record<string, unknown>
}

const found = (url: string, document: unknown) => ({ contextUrl: null, documentUrl: url, document })

export const makeDocumentLoader = (baseUrl: string, root: RootDid) => {
  const ours = agentCapabilityContext(baseUrl)
  return async (url: string) => {
    const context = bundled.get(url)
    if (context !== undefined) return found(url, context)
    if (url === agentCapabilityContextUrl(baseUrl)) return found(url, ours)
    if (url === root.id) return found(url, root.document)
    const method = root.document.verificationMethod.find((candidate) => candidate.id === url)
    if (method !== undefined) return found(url, { "@context": ed25519Context.CONTEXT_URL, ...method })
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
export const signCredential = (credential: object, signer: ProofSigner, documentLoader: DocumentLoader) =>
  issue({
    credential,
    suite: new Ed25519Signature2020({ signer: { id: signer.id, algorithm: "Ed25519", sign: async ({ data }) => signer.signRaw(data) } }),
    documentLoader
  })

/** Whether the credential's Ed25519Signature2020 proof verifies against our root DID's keys (false for anything unreadable). */
export const proofVerifies = async (credential: object, documentLoader: DocumentLoader): Promise<boolean> => {
  try {
    const result = await jsigs.verify(credential, { suite: new Ed25519Signature2020(), purpose: new jsigs.purposes.AssertionProofPurpose(), documentLoader })
    return result.verified === true
  } catch {
    return false
  }
}

// The Digital Bazaar linked-data libraries ship JavaScript without types: what we call, typed narrowly.
declare module "@digitalbazaar/vc" {
  export function issue(options: { credential: object; suite: unknown; documentLoader: DocumentLoader }): Promise<Record<string, unknown>>
  /** Used by the tests: the verifier's side. */
  export function verifyCredential(options: object): Promise<{ verified: boolean; error?: any }>
  export type DocumentLoader = (url: string) => Promise<{ contextUrl: null; documentUrl: string; document: unknown }>
}

declare module "@digitalbazaar/ed25519-signature-2020" {
  export class Ed25519Signature2020 {
    constructor(options?: { signer?: { id: string; algorithm: string; sign: (input: { data: Uint8Array }) => Promise<Uint8Array> } })
  }
}

declare module "jsonld-signatures" {
  const jsigs: {
    verify(
      document: object,
      options: { suite: unknown; purpose: unknown; documentLoader: (url: string) => Promise<unknown> }
    ): Promise<{ verified: boolean; error?: unknown }>
    purposes: { AssertionProofPurpose: new () => unknown }
  }
  export default jsigs
}

declare module "credentials-context" {
  export const contexts: Map<string, unknown>
  export const CONTEXT_URL: string
}

declare module "ed25519-signature-2020-context" {
  export const contexts: Map<string, unknown>
  export const CONTEXT_URL: string
}

declare module "@digitalbazaar/vc-status-list-context" {
  export const contexts: Map<string, unknown>
  export const CONTEXT_URL_V1: string
}

/**
 * A did:web host inside the test: counterparties' DID documents served over HTTPS on a loopback
 * port, as a real resolver would fetch them (mutual signing, reputation attestations).
 */
import { useTlsServer } from "./tls.js"

export interface DidHost {
  /** The did:web of `path` ("bank/agents/a" → did:web:127.0.0.1%3A<port>:bank:agents:a). */
  readonly didAt: (path: string) => string
  /** Serves a DID document for `path` with these verification methods (each gets the DID as controller); answers the DID. */
  readonly publish: (path: string, methods: Array<object>) => string
  /** The host's certificate (PEM), for the gateway to trust (NODE_EXTRA_CA_CERTS). */
  readonly certPem: () => string
}

/** Starts before the file's first test and stops after its last (like `useTlsServer`). */
export const useDidHost = (): DidHost => {
  const documents = new Map<string, object>()
  const peer = useTlsServer((req, res) => {
    const document = documents.get(req.url ?? "")
    if (document === undefined) res.writeHead(404).end()
    else res.setHeader("content-type", "application/json").end(JSON.stringify(document))
  })
  const didAt = (path: string) => `did:web:127.0.0.1%3A${peer.port}:${path.split("/").join(":")}`
  return {
    didAt,
    certPem: () => peer.certPem,
    publish: (path, methods) => {
      const did = didAt(path)
      documents.set(`/${path}/did.json`, { "@context": ["https://www.w3.org/ns/did/v1"], id: did, verificationMethod: methods.map((method) => ({ controller: did, ...method })) })
      return did
    }
  }
}

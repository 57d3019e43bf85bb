/** A local https server with a fresh self-signed certificate, for the TLS-pin checks of the endpoint whitelist. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import type { RequestListener } from "node:http"
import https from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { useFixture } from "./fixture.js"

export interface TlsServer {
  readonly port: number
  /** The server's certificate (CN=localhost, SAN IP:127.0.0.1), PEM. */
  readonly certPem: string
  /** The same certificate, DER. */
  readonly certDer: Buffer
  readonly stop: () => Promise<void>
}

/** A fresh self-signed certificate (CN=localhost, SAN IP:127.0.0.1), PEM, valid one day. */
export const selfSignedCertificate = (): { readonly keyPem: string; readonly certPem: string } => {
  const dir = mkdtempSync(join(tmpdir(), "test-tls-"))
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
      { stdio: "ignore" }
    )
    return { keyPem: readFileSync(join(dir, "key.pem"), "utf8"), certPem: readFileSync(join(dir, "cert.pem"), "utf8") }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A local https server answering with `handler` (default: "ok") on a fresh self-signed certificate. */
export const startTlsServer = async (handler: RequestListener = (_req, res) => res.end("ok")): Promise<TlsServer> => {
  const { keyPem, certPem } = selfSignedCertificate()
  const server = https.createServer({ key: keyPem, cert: certPem }, handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as AddressInfo).port,
    certPem,
    certDer: Buffer.from(certPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64"),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The file's TLS server: started before its first test, stopped after its last. */
export const useTlsServer = (handler?: RequestListener): TlsServer =>
  useFixture(
    () => startTlsServer(handler),
    (server) => server.stop()
  )

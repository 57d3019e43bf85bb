/**
 * Reads the TLS certificate an endpoint presents, for pinning. The certificate
 * is not verified here: the caller compares its fingerprint with the pinned one,
 * which is a stronger check than trusting a CA for a customer's endpoint.
 */

import * as tls from "node:tls"
import { Effect } from "effect"
import { sha256Tagged } from "../digest.js"
import { OutboundError, outboundError } from "./errors.js"
import type { OutboundPolicy } from "./policy.js"
import { type LookupFunction, resolveTarget, systemLookup } from "./target.js"

export interface TlsFingerprintOptions {
  readonly policy: OutboundPolicy
  readonly lookup?: LookupFunction
  /** Whole probe: DNS, connect, handshake. Default 5,000 ms. */
  readonly timeoutMs?: number
  readonly signal?: AbortSignal
}

export const DEFAULT_TLS_TIMEOUT_MS = 5_000

/** `sha256:` + lowercase hex of the DER bytes of a certificate. */
export const certificateFingerprint = (der: Uint8Array): string =>
  sha256Tagged(der)

/** `sha256:ab01...` → `AB:01:...`, the form of `X509Certificate.fingerprint256` and browsers. */
export const fingerprintToColonHex = (fingerprint: string): string => {
  const hex = fingerprint.startsWith("sha256:") ? fingerprint.slice("sha256:".length) : fingerprint
  return (hex.toUpperCase().match(/../g) ?? []).join(":")
}

/** `AB:01:...` (or bare hex) → `sha256:ab01...`. */
export const fingerprintFromColonHex = (colonHex: string): string =>
  `sha256:${colonHex.replace(/:/g, "").toLowerCase()}`

/**
 * Connects to an https:// URL's checked address (same refusals as the HTTP
 * client; server name = the URL's host name) and returns the fingerprint of the
 * leaf certificate it presents.
 */
export const tlsFingerprint = async (url: string | URL, options: TlsFingerprintOptions): Promise<string> => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TLS_TIMEOUT_MS
  const controller = new AbortController()
  const timer = setTimeout(
    () => controller.abort(outboundError("timeout", `no TLS handshake within ${timeoutMs} ms`)),
    timeoutMs
  )
  const onCallerAbort = () => controller.abort(outboundError("network", "TLS probe aborted"))
  options.signal?.addEventListener("abort", onCallerAbort, { once: true })
  if (options.signal?.aborted) onCallerAbort()
  try {
    // Refuse other schemes before any DNS query (an invalid URL is reported by resolveTarget).
    if (URL.canParse(String(url)) && new URL(String(url)).protocol !== "https:") {
      throw outboundError("scheme_not_allowed", "a TLS fingerprint needs an https:// URL")
    }
    const target = await resolveTarget(
      url,
      options.policy,
      options.lookup ?? systemLookup,
      controller.signal
    )
    return await new Promise<string>((resolve, reject) => {
      const signal = controller.signal
      let socket: tls.TLSSocket | undefined
      const settle = (outcome: () => void) => {
        signal.removeEventListener("abort", onAbort)
        socket?.destroy()
        outcome()
      }
      const onAbort = () => settle(() => reject(signal.reason))
      if (signal.aborted) {
        reject(signal.reason)
        return
      }
      signal.addEventListener("abort", onAbort, { once: true })
      const connectOptions: tls.ConnectionOptions = {
        host: target.connectHost,
        port: target.checked.port,
        rejectUnauthorized: false
      }
      if (target.servername !== undefined) connectOptions.servername = target.servername
      socket = tls.connect(connectOptions)
      socket.once("secureConnect", () => {
        const certificate = socket?.getPeerX509Certificate()
        settle(() =>
          certificate === undefined
            ? reject(outboundError("network", `${target.checked.hostname} presented no certificate`))
            : resolve(certificateFingerprint(certificate.raw))
        )
      })
      socket.once("error", (error: NodeJS.ErrnoException) =>
        settle(() =>
          reject(
            outboundError(
              "network",
              `TLS connection to ${target.checked.hostname} failed${error.code ? ` (${error.code})` : ""}: ${error.message}`
            )
          )
        )
      )
    })
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener("abort", onCallerAbort)
  }
}

/** The probe as an Effect; interrupting it closes the connection. */
export const tlsFingerprintEffect = (
  url: string | URL,
  options: Omit<TlsFingerprintOptions, "signal">
): Effect.Effect<string, OutboundError> =>
  Effect.tryPromise({
    try: (signal) => tlsFingerprint(url, { ...options, signal }),
    catch: (error) =>
      error instanceof OutboundError
        ? error
        : outboundError("network", error instanceof Error ? error.message : String(error))
  })

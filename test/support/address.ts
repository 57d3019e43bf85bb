/**
 * Clients at distinct addresses: every 127.0.0.0/8 address reaches a server listening on
 * 127.0.0.1, and the server sees each as its own client (per-address rate limits, failure budgets).
 */
import { request } from "node:http"
import type { Reply } from "./client.js"

let next = 2
/** A loopback address no other test of this process has used (never 127.0.0.1, the default client). */
export const freshAddress = (): string => {
  let n = next++
  while ((n & 255) === 0 || (n & 255) === 255) n = next++
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
}

/** `call` from `address`. */
export const callFrom = (
  address: string,
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {}
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const headers: Record<string, string> = {}
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    if (body !== undefined) headers["content-type"] = "application/json"
    const req = request(new URL(path, base), { method, headers, localAddress: address, agent: false }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => {
        const replyHeaders = new Headers()
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === "string") replyHeaders.set(name, value)
        let parsed: any = text
        try {
          parsed = text ? JSON.parse(text) : undefined
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: replyHeaders, body: parsed, text })
      })
    })
    req.on("error", reject)
    req.end(body)
  })

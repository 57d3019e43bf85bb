/**
 * The server side of `bench/live.ts`, each in its own process so the clients
 * do not share its event loop (and so its RSS is its own):
 * - `uws <port>`: raw uWS pub/sub; every WebSocket on /ws subscribes to one
 *   topic and `GET /publish?n=<round>` publishes `{"n":<round>}` to it.
 * - `receiver <port>`: a node:http server answering 200 to everything and
 *   counting answers; on the IPC message `{ expect: n }` it resets its count
 *   and sends `{ received: n }` once n requests have been answered. With
 *   `{ hold: true }` it keeps requests unanswered until `{ release: true }`.
 *   With `{ record: true }` it also notes when each delivery arrived (epoch ms
 *   by its `action_uuid`) and sends them along as `arrivals`.
 */
import { createServer, type ServerResponse } from "node:http"
import { loadUws } from "../../src/gateway/uws.js"

const [mode, portText] = process.argv.slice(2)
const port = Number(portText)
const ready = () => process.send?.("ready")

const rawPubSub = () => {
  const app = loadUws().App()
  app.ws("/ws", {
    idleTimeout: 0,
    open: (ws) => {
      ws.subscribe("bench")
    }
  })
  app.get("/publish", (res, req) => {
    const round = Number(new URLSearchParams(req.getQuery() ?? "").get("n") ?? 0)
    app.publish("bench", JSON.stringify({ n: round }), false)
    res.cork(() => {
      res.writeHeader("content-type", "application/json").end('{"published":true}')
    })
  })
  app.listen("127.0.0.1", port, (socket) => {
    if (!socket) process.exit(1)
    ready()
  })
}

const receiver = () => {
  let received = 0
  let expected = Number.POSITIVE_INFINITY
  let holding = false
  let arrivals: Record<string, number> | undefined
  const held: Array<() => void> = []
  const answer = (res: ServerResponse) => () => {
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}')
    received++
    if (received === expected) process.send?.({ received, arrivals })
  }
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk: Buffer) => {
      if (arrivals !== undefined) body += chunk
    })
    req.on("end", () => {
      if (arrivals !== undefined) {
        const action = /"action_uuid":"([^"]+)"/.exec(body)?.[1]
        if (action !== undefined) arrivals[action] ??= performance.timeOrigin + performance.now()
      }
      if (holding) held.push(answer(res))
      else answer(res)()
    })
  })
  server.keepAliveTimeout = 30_000
  process.on("message", (message: { expect?: number; hold?: boolean; release?: boolean; record?: boolean }) => {
    if (typeof message?.expect === "number") {
      received = 0
      expected = message.expect
      arrivals = message.record === true ? {} : undefined
    }
    if (message?.hold === true) holding = true
    if (message?.release === true) {
      holding = false
      for (const release of held.splice(0)) release()
    }
  })
  server.listen(port, "127.0.0.1", ready)
}

if (mode === "uws") rawPubSub()
else if (mode === "receiver") receiver()
else {
  console.error(`unknown mode ${mode}`)
  process.exit(2)
}

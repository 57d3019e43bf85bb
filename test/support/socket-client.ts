/** A WebSocket client for end-to-end tests: records every frame and the close code. */
import { afterAll } from "vitest"
import WebSocket from "ws"

/** A client socket that records every frame and its close code. */
export class Client {
  readonly frames: Array<any> = []
  closeCode: number | undefined
  readonly opened: Promise<void>
  readonly closed: Promise<number>
  private waiters: Array<() => void> = []

  constructor(
    readonly socket: WebSocket,
    collect = true
  ) {
    this.opened = new Promise((resolve, reject) => {
      socket.once("open", () => resolve())
      socket.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
      socket.once("error", reject)
    })
    this.closed = new Promise((resolve) =>
      socket.once("close", (code) => {
        this.closeCode = code
        resolve(code)
        this.wake()
      })
    )
    socket.on("message", (data) => {
      if (collect) this.frames.push(JSON.parse(String(data)))
      else this.frames.push(null)
      this.wake()
    })
  }

  private wake() {
    const waiters = this.waiters
    this.waiters = []
    for (const waiter of waiters) waiter()
  }

  send(frame: unknown) {
    this.socket.send(typeof frame === "string" ? frame : JSON.stringify(frame))
  }

  /** Resolves with the first frame matching `predicate` (already received or arriving within `ms`). */
  async next(predicate: (frame: any) => boolean, ms = 2_000): Promise<any> {
    const deadline = Date.now() + ms
    for (;;) {
      const found = this.frames.find(predicate)
      if (found !== undefined) return found
      if (this.closeCode !== undefined) throw new Error(`socket closed (${this.closeCode}) before the frame arrived`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error("timed out waiting for a frame")
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  close() {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate()
  }
}

export const connect = (url: string, token?: string, collect = true) =>
  new Client(new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {}), collect)

export const connected = async (url: string, token?: string) => {
  const client = connect(url, token)
  await client.opened
  return client
}

export const subscribed = async (client: Client, channel: string) => {
  client.send({ type: "subscribe", channel })
  await client.next((frame) => frame.type === "subscribed" && frame.channel === channel)
}

/** Keeps the sockets a test file (or describe block) opens, and closes them after its last test; `track(client)` returns the client. */
export const useSockets = () => {
  const clients: Array<Client> = []
  afterAll(() => {
    for (const client of clients) client.close()
  })
  return (client: Client): Client => {
    clients.push(client)
    return client
  }
}

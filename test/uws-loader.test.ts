/**
 * The uWS loader on this machine: the module it returns is the native one (HTTP answers, and
 * `app.publish` reaches a WebSocket subscriber, which the JavaScript fallback cannot do), it says
 * which file it loaded (a patched copy on glibc < 2.38), and when nothing fits it refuses with
 * Node, ABI, platform and glibc in the message.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { basename } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { patchedForOldGlibc } from "../src/gateway/elf-glibc-patch.js"
import { currentTarget, loadedUwsBinary, loadUws, loadUwsBinary, type us_listen_socket } from "../src/gateway/uws.js"

const target = currentTarget()
const oldGlibc = target.platform === "linux" && target.glibc !== undefined && Number(target.glibc.split(".")[1]) < 38

const listening: us_listen_socket[] = []
afterAll(() => {
  for (const socket of listening) loadUws().us_listen_socket_close(socket)
})

describe("loadUws", () => {
  it("returns the native module: App serves HTTP and app.publish reaches a WebSocket subscriber", async () => {
    const uws = loadUws()
    const app = uws.App()
    app.get("/hello", (res) => {
      res.cork(() => res.writeHeader("content-type", "text/plain").end("native"))
    })
    app.ws("/live", {
      open: (ws) => {
        ws.subscribe("news")
        ws.send("ready")
      }
    })
    const socket = await new Promise<us_listen_socket>((resolve, reject) =>
      app.listen("127.0.0.1", 0, (listen) => (listen ? resolve(listen) : reject(new Error("listen failed"))))
    )
    listening.push(socket)
    const port = uws.us_socket_local_port(socket as any)
    expect(port).toBeGreaterThan(0)

    const reply = await fetch(`http://127.0.0.1:${port}/hello`)
    expect(reply.status).toBe(200)
    expect(await reply.text()).toBe("native")

    const client = new WebSocket(`ws://127.0.0.1:${port}/live`)
    const messages: string[] = []
    const waiting: Array<() => void> = []
    client.on("message", (data) => {
      messages.push(String(data))
      waiting.shift()?.()
    })
    const message = (count: number) =>
      new Promise<void>((resolve, reject) => {
        if (messages.length >= count) return resolve()
        waiting.push(resolve)
        client.once("error", reject)
      })
    await message(1)
    expect(messages).toEqual(["ready"])
    expect(app.numSubscribers("news")).toBe(1)
    expect(app.publish("news", "published")).toBe(true)
    await message(2)
    expect(messages).toEqual(["ready", "published"])
    client.close()
  })

  it("reports the file it loaded: a patched copy under glibc < 2.38, the package's own binary otherwise", () => {
    loadUws()
    const binary = loadedUwsBinary()!
    expect(basename(binary.original)).toBe(`uws_${target.platform}_${target.arch}_${target.abi}.node`)
    if (!oldGlibc) {
      expect(binary).toMatchObject({ file: binary.original, patched: false, copy: undefined })
      return
    }
    const original = readFileSync(binary.original)
    const hash = createHash("sha256").update(original).digest("hex")
    expect(binary.patched).toBe(true)
    expect(binary.file).not.toBe(binary.original)
    expect(basename(binary.file)).toBe(`uws_${target.platform}_${target.arch}_${target.abi}-${hash}.node`)
    expect(binary.file).toMatch(/node_modules\/\.cache\/uws\/|uws-cache-/)
    expect(Buffer.compare(readFileSync(binary.file), patchedForOldGlibc(original))).toBe(0)
  })

  it("finds its patched copy again instead of writing it twice", () => {
    const { uws, binary } = loadUwsBinary()
    expect(uws).toBe(loadUws())
    expect(binary.file).toBe(loadedUwsBinary()!.file)
    expect(binary.copy).toBe(oldGlibc ? "cached" : undefined)
  })

  it.runIf(oldGlibc)("on glibc < 2.38 the unpatched binary does not load (the patch is what makes it load)", () => {
    expect(() => loadUwsBinary({ glibc: "2.38" })).toThrow(/Loading .*uws_linux_\w+_\d+\.node failed: .*GLIBC_2\.38/)
  })
})

describe("refusal", () => {
  it("names Node, ABI, platform and glibc when the package has no binary for the ABI", () => {
    let message = ""
    try {
      loadUwsBinary({ abi: "999" })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toContain("JavaScript fallback is refused")
    expect(message).toContain(`Node ${process.version} (ABI 999)`)
    expect(message).toContain(`${process.platform}/${process.arch}`)
    expect(message).toContain(`glibc ${target.glibc ?? "none"}`)
    expect(message).toContain(`has no uws_${process.platform}_${process.arch}_999.node`)
    expect(message).toContain("it ships ABI 115 (Node 20), 127 (Node 22), 137 (Node 24), 141 (Node 25).")
  })

  it("says so when the platform has no binaries at all", () => {
    expect(() => loadUwsBinary({ platform: "freebsd", glibc: undefined })).toThrow(/freebsd\/\w+, glibc none .*\n.*ships ABI none/)
  })
})

/**
 * The one place uWebSockets.js is loaded.
 *
 * The npm builds of uWS ship native binaries per Node ABI and silently fall back to a
 * slow JavaScript imitation when none matches (where `app.publish` throws). We load the
 * native binaries ourselves and refuse to start on the fallback.
 */
import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import type * as UwsTypes from "@trufflesuite/uws-js-unofficial"

export type Uws = typeof UwsTypes
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, WebSocket } from "@trufflesuite/uws-js-unofficial"

const require = createRequire(import.meta.url)

const glibcVersion = (): string => {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  if (report?.header?.glibcVersionRuntime) return report.header.glibcVersionRuntime
  try {
    return execFileSync("ldd", ["--version"], { encoding: "utf8" }).split("\n")[0] ?? "unknown"
  } catch {
    return "unknown"
  }
}

/** Candidates, newest build first. Each names the native binary, never the package's fallback entry. */
const candidates = (): Array<{ name: string; load: () => Uws }> => {
  const abi = process.versions.modules
  const platform = `${process.platform}_${process.arch}`
  return [
    {
      // Upstream-current build (20.56+). Needs glibc >= 2.38.
      name: "@btc-vision/uwebsockets.js",
      load: () => {
        const dir = require.resolve("@btc-vision/uwebsockets.js/package.json").replace(/package\.json$/, "")
        return require(`${dir}uws_${platform}_${abi}.node`)
      }
    },
    {
      // 20.30 with binaries for Node 16/18/20.
      name: "@trufflesuite/uws-js-unofficial",
      load: () => {
        const dir = require.resolve("@trufflesuite/uws-js-unofficial/package.json").replace(/package\.json$/, "")
        return require(`${dir}binaries/uws_${platform}_${abi}.node`)
      }
    }
  ]
}

let loaded: Uws | undefined

export const loadUws = (): Uws => {
  if (loaded) return loaded
  const failures: string[] = []
  for (const candidate of candidates()) {
    try {
      const uws = candidate.load()
      if (typeof uws.App !== "function") throw new Error("binary has no App export")
      loaded = uws
      return uws
    } catch (error) {
      failures.push(`  ${candidate.name}: ${(error as Error).message.split("\n")[0]}`)
    }
  }
  throw new Error(
    [
      "No native uWebSockets.js build loads on this platform, and the JavaScript fallback is refused",
      "(it is several times slower and cannot publish to WebSocket topics).",
      `Node ${process.version} (ABI ${process.versions.modules}), ${process.platform}/${process.arch}, glibc ${glibcVersion()}.`,
      "Tried:",
      ...failures,
      "Use Node 20 (the @trufflesuite build has binaries for ABI 93/108/115), or glibc >= 2.38 with @btc-vision/uwebsockets.js."
    ].join("\n")
  )
}

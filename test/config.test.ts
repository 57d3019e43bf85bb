/** The environment contract as `loadConfig` reads it: one reading of yes/no, refusals that name the variable. */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import { loadConfig, parseBoolean } from "../src/platform/config.js"

describe("configuration", () => {
  it("reads yes/no the same way for every variable, and refuses anything else", () => {
    for (const on of ["1", "true", "TRUE", "yes", "On"]) {
      expect(loadConfig({ CI: on, OUTBOUND_ALLOW_HTTP: on, ENABLE_SLACK_INTEGRATION: on })).toMatchObject({
        ci: true,
        outboundAllowHttp: true,
        features: { slackIntegration: true }
      })
    }
    for (const off of ["0", "false", "No", "off"]) {
      expect(loadConfig({ CI: off, OUTBOUND_ALLOW_HTTP: off, ENABLE_SLACK_INTEGRATION: off })).toMatchObject({
        ci: false,
        outboundAllowHttp: false,
        features: { slackIntegration: false }
      })
    }
    expect(loadConfig({})).toMatchObject({ ci: false, outboundAllowHttp: false, features: { slackIntegration: true, outputFiltering: true } })
    for (const name of ["CI", "OUTBOUND_ALLOW_HTTP", "ENABLE_OUTPUT_FILTERING", "ENABLE_DORA", "ENABLE_SOME_FUTURE_FLAG"]) {
      expect(() => loadConfig({ [name]: "maybe" })).toThrow(new RegExp(`${name} must be true or false`))
    }
  })

  it("parses every spelling of yes and no, and nothing else", () => {
    const yes = ["1", "true", "yes", "on"]
    const no = ["0", "false", "no", "off"]
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), (text) => {
        const parsed = parseBoolean("X", text)
        const word = text.trim().toLowerCase()
        if (yes.includes(word)) expect(parsed).toEqual(Result.succeed(true))
        else if (no.includes(word)) expect(parsed).toEqual(Result.succeed(false))
        else expect(Result.isFailure(parsed)).toBe(true)
      })
    )
  })

  it("refuses an unknown LOG_LEVEL instead of logging at info", () => {
    expect(loadConfig({}).logLevel).toBe("info")
    expect(loadConfig({ LOG_LEVEL: "silent" }).logLevel).toBe("silent")
    expect(() => loadConfig({ LOG_LEVEL: "verbose" })).toThrow(/LOG_LEVEL must be info or debug or warn or error or silent, got "verbose"/)
  })

  it("reads the pool size (default 10) and refuses one below 1", () => {
    expect(loadConfig({}).databaseMaxConnections).toBe(10)
    expect(loadConfig({ DATABASE_MAX_CONNECTIONS: "4" }).databaseMaxConnections).toBe(4)
    expect(() => loadConfig({ DATABASE_MAX_CONNECTIONS: "0" })).toThrow(/DATABASE_MAX_CONNECTIONS must be an integer between 1 and 1000/)
  })

  it("refuses an OUTBOUND_ALLOW_PRIVATE entry that is not an address or range at start", () => {
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: "10.0.0.0/8, 127.0.0.1" }).outboundAllowPrivate).toBe("10.0.0.0/8, 127.0.0.1")
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE: "10.0.0.0/8,intranet" })).toThrow(/OUTBOUND_ALLOW_PRIVATE: "intranet" is not an IP address or CIDR range/)
  })
})

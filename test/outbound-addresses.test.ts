import { BlockList, isIP } from "node:net"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../src/platform/config.js"
import {
  checkUrl,
  chooseAddress,
  cidrContains,
  classifyAddress,
  formatCidr,
  formatIp,
  NEVER_ALLOWED,
  OutboundError,
  outboundPolicyOfConfig,
  PUBLIC_HTTPS_ONLY,
  parseCidr,
  parseIp
} from "../src/platform/outbound/index.js"

const v4Bytes = fc.uint8Array({ minLength: 4, maxLength: 4 })
const v6Bytes = fc.uint8Array({ minLength: 16, maxLength: 16 })
const dotted = (b: Uint8Array) => `${b[0]}.${b[1]}.${b[2]}.${b[3]}`
const hex16 = (hi: number, lo: number) => ((hi << 8) | lo).toString(16)

const expectOutboundError = (run: () => unknown, kind: OutboundError["kind"]) => {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundError)
    expect((error as OutboundError).kind).toBe(kind)
    return error as OutboundError
  }
  throw new Error(`expected an OutboundError of kind ${kind}`)
}

describe("parseIp", () => {
  it("parses the written forms of IPv6", () => {
    expect(formatIp(parseIp("::")!)).toBe("::")
    expect(formatIp(parseIp("::1")!)).toBe("::1")
    expect(formatIp(parseIp("0:0:0:0:0:0:0:1")!)).toBe("::1")
    expect(formatIp(parseIp("[2001:DB8::1]")!)).toBe("2001:db8::1")
    expect(formatIp(parseIp("::ffff:10.0.0.1")!)).toBe("::ffff:a00:1")
    expect(formatIp(parseIp("::ffff:0a00:0001")!)).toBe("::ffff:a00:1")
    expect(formatIp(parseIp("1:2:3:4:5:6:1.2.3.4")!)).toBe("1:2:3:4:5:6:102:304")
    expect(formatIp(parseIp("::1.2.3.4")!)).toBe("::102:304")
    expect(formatIp(parseIp("fe80::1%eth0")!)).toBe("fe80::1")
    expect(formatIp(parseIp("1:0:0:2:0:0:0:3")!)).toBe("1:0:0:2::3")
  })

  it("refuses malformed text", () => {
    for (const bad of [
      "",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "01.2.3.4",
      "1.2.3.-4",
      "0x7f.0.0.1",
      "2130706433",
      // Legacy spellings ipaddr.js would read (127.0.0.1 or 127.0.0.10): never parsed here.
      "127.1",
      "0x7f.1",
      "0177.0.0.1",
      "0x7f000001",
      "127.0.0.010",
      "::ffff:0x7f.0.0.1",
      "::ffff:127.1",
      "::ffff:0177.0.0.1",
      ":::",
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7::8",
      ":1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:",
      "12345::",
      "::ffff:1.2.3",
      "::1.2.3.4:5",
      "fe80::1%",
      "[::1"
    ]) {
      expect(parseIp(bad), bad).toBeUndefined()
    }
  })

  it("agrees with node:net on which strings are addresses", () => {
    const alphabet = fc.constantFrom(..."0123456789abcdef:.".split(""))
    const fuzz = fc.oneof(
      fc.string({ unit: alphabet, maxLength: 24 }),
      // Near-misses of real addresses: one character changed, dropped or added.
      fc
        .tuple(fc.oneof(v4Bytes.map(dotted), v6Bytes.map((b) => formatIp({ family: 6, bytes: b }))), fc.nat(), alphabet, fc.nat(2))
        .map(([text, at, char, op]) => {
          const i = at % (text.length + 1)
          if (op === 0) return text.slice(0, i) + char + text.slice(i + 1)
          if (op === 1) return text.slice(0, i) + text.slice(i + 1)
          return text.slice(0, i) + char + text.slice(i)
        })
    )
    fc.assert(
      fc.property(fuzz, (text) => {
        expect(parseIp(text) !== undefined, text).toBe(isIP(text) !== 0)
      }),
      { numRuns: 5000 }
    )
  })

  it("reads every written form of an IPv6 address to its bytes, as the URL parser does", () => {
    const written = fc
      .record({
        // Many zero groups, so that "::" has runs to stand for.
        groups: fc.array(fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 }),
        dottedTail: fc.boolean(),
        compressAt: fc.nat(8),
        padded: fc.boolean(),
        upper: fc.boolean(),
        zone: fc.constantFrom("", "%eth0", "%1", "%br_lan")
      })
      .map(({ groups, dottedTail, compressAt, padded, upper, zone }) => {
        const hex = groups.map((g) => (padded ? g.toString(16).padStart(4, "0") : g.toString(16)))
        const words = dottedTail ? [...hex.slice(0, 6), `${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.${groups[7] & 0xff}`] : hex
        // "::" in place of the run of zero groups starting at compressAt, when there is one.
        let end = compressAt
        while (end < 6 + (dottedTail ? 0 : 2) && groups[end] === 0) end++
        const text = end > compressAt ? `${words.slice(0, compressAt).join(":")}::${words.slice(end).join(":")}` : words.join(":")
        return { bytes: new Uint8Array(groups.flatMap((g) => [g >> 8, g & 0xff])), text: upper ? text.toUpperCase() : text, zone }
      })
    fc.assert(
      fc.property(written, ({ bytes, text, zone }) => {
        const parsed = parseIp(text + zone)
        expect(parsed?.family, text + zone).toBe(6)
        expect(Array.from(parsed!.bytes), text + zone).toEqual(Array.from(bytes))
        expect(`[${formatIp(parsed!)}]`).toBe(new URL(`http://[${text}]/`).hostname)
      }),
      { numRuns: 3000 }
    )
    // An IPv4 tail after "::" is IPv4-compatible (::a.b.c.d), not IPv4-mapped as ipaddr.js reads it.
    expect(formatIp(parseIp("::8.8.8.8")!)).toBe("::808:808")
    expect(classifyAddress("::8.8.8.8")).toBe("ipv4-compatible")
  })

  it("formats IPv6 exactly as the WHATWG URL parser and round-trips", () => {
    fc.assert(
      fc.property(
        // Many zero groups, so that compression is exercised.
        fc.array(fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff })), {
          minLength: 8,
          maxLength: 8
        }),
        (groups) => {
          const bytes = new Uint8Array(groups.flatMap((g) => [g >> 8, g & 0xff]))
          const text = formatIp({ family: 6, bytes })
          expect(new URL(`http://[${text}]/`).hostname).toBe(`[${text}]`)
          expect(Array.from(parseIp(text)!.bytes)).toEqual(Array.from(bytes))
          const full = groups.map((g) => g.toString(16).padStart(4, "0")).join(":")
          expect(Array.from(parseIp(full)!.bytes)).toEqual(Array.from(bytes))
        }
      )
    )
  })
})

describe("parseCidr and cidrContains", () => {
  it("parses ranges and single hosts, clearing host bits", () => {
    expect(formatCidr(parseCidr("10.0.0.0/8")!)).toBe("10.0.0.0/8")
    expect(formatCidr(parseCidr("127.0.0.1/8")!)).toBe("127.0.0.0/8")
    expect(formatCidr(parseCidr(" 192.168.1.7 ")!)).toBe("192.168.1.7/32")
    expect(formatCidr(parseCidr("fc00::1/7")!)).toBe("fc00::/7")
    expect(formatCidr(parseCidr("::1")!)).toBe("::1/128")
    expect(formatCidr(parseCidr("0.0.0.0/0")!)).toBe("0.0.0.0/0")
    for (const bad of ["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/08", "10.0.0/8", "x/8", "10.0.0.0/8/8"]) {
      expect(parseCidr(bad), bad).toBeUndefined()
    }
  })

  it("matches like node:net BlockList", () => {
    fc.assert(
      fc.property(fc.boolean(), v6Bytes, v6Bytes, fc.nat(128), (isV4, netBytes, addrBytes, rawPrefix) => {
        const family = isV4 ? 4 : 6
        const size = isV4 ? 4 : 16
        const prefix = rawPrefix % (size * 8 + 1)
        const network = { family, bytes: netBytes.slice(0, size) } as const
        // Half of the cases copy the network's leading bytes so that matches happen.
        const address = { family, bytes: addrBytes.slice(0, size) } as const
        if (rawPrefix % 2 === 0) address.bytes.set(network.bytes.slice(0, Math.floor(prefix / 8)))
        const cidr = parseCidr(`${formatIp(network)}/${prefix}`)!
        const list = new BlockList()
        list.addSubnet(formatIp({ family, bytes: cidr.bytes }), prefix, isV4 ? "ipv4" : "ipv6")
        expect(cidrContains(cidr, address)).toBe(list.check(formatIp(address), isV4 ? "ipv4" : "ipv6"))
      }),
      { numRuns: 3000 }
    )
  })

  it("treats an IPv4-mapped address and its IPv4 form as the same host", () => {
    fc.assert(
      fc.property(v4Bytes, fc.integer({ min: 0, max: 32 }), (bytes, prefix) => {
        const cidr = parseCidr(`${dotted(bytes)}/${prefix}`)!
        const mappedCidr = parseCidr(`::ffff:${dotted(bytes)}/${96 + prefix}`)!
        const v4 = parseIp(dotted(bytes))!
        const mapped = parseIp(`::ffff:${dotted(bytes)}`)!
        expect(cidrContains(cidr, mapped)).toBe(true)
        expect(cidrContains(mappedCidr, v4)).toBe(true)
      })
    )
    expect(cidrContains(parseCidr("127.0.0.0/8")!, parseIp("::1")!)).toBe(false)
    expect(cidrContains(parseCidr("::/0")!, parseIp("8.8.8.8")!)).toBe(true)
  })
})

const IPV4_EXPECTED: ReadonlyArray<readonly [string, string]> = [
  ["0.0.0.0/32", "unspecified"],
  ["0.0.0.1/32", "this-network"],
  ["0.255.255.255/32", "this-network"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "shared-address-space"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "ietf-protocol-assignment"],
  ["192.0.2.0/24", "documentation"],
  ["192.88.99.0/24", "deprecated-6to4-relay"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "benchmarking"],
  ["198.51.100.0/24", "documentation"],
  ["203.0.113.0/24", "documentation"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/5", "reserved"],
  ["255.255.255.254/32", "reserved"],
  ["255.255.255.255/32", "broadcast"]
]

const IPV6_EXPECTED: ReadonlyArray<readonly [string, string]> = [
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["64:ff9b:1::/48", "nat64-local-use"],
  ["100::/64", "discard-only"],
  ["2001:2::/48", "benchmarking"],
  ["2001:db8::/32", "documentation"],
  ["2001:100::/24", "ietf-protocol-assignment"],
  ["3fff::/20", "documentation"],
  ["fc00::/7", "unique-local"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local"],
  ["ff00::/8", "multicast"],
  ["4000::/2", "reserved"],
  ["c000::/3", "reserved"]
]

/** A random address inside the range. */
const inside = (cidrText: string) => {
  const cidr = parseCidr(cidrText)!
  return fc.uint8Array({ minLength: cidr.bytes.length, maxLength: cidr.bytes.length }).map((random) => {
    const bytes = new Uint8Array(cidr.bytes)
    for (let bit = cidr.prefix; bit < bytes.length * 8; bit++) {
      const mask = 0x80 >> (bit % 8)
      bytes[bit >> 3] = (bytes[bit >> 3] & ~mask) | (random[bit >> 3] & mask)
    }
    return { family: cidr.family, bytes }
  })
}

describe("classifyAddress", () => {
  it("names the listed public and special examples", () => {
    expect(classifyAddress("8.8.8.8")).toBe("public")
    expect(classifyAddress("1.1.1.1")).toBe("public")
    expect(classifyAddress("172.32.0.1")).toBe("public")
    expect(classifyAddress("100.128.0.1")).toBe("public")
    expect(classifyAddress("2606:4700:4700::1111")).toBe("public")
    expect(classifyAddress("169.254.169.254")).toBe("link-local")
    expect(classifyAddress("::ffff:169.254.169.254")).toBe("link-local")
    expect(classifyAddress("::ffff:0a00:0001")).toBe("private")
    expect(classifyAddress("::ffff:8.8.8.8")).toBe("public")
    expect(classifyAddress("::127.0.0.1")).toBe("loopback")
    expect(classifyAddress("::8.8.8.8")).toBe("ipv4-compatible")
    expect(classifyAddress("64:ff9b::10.0.0.1")).toBe("private")
    expect(classifyAddress("64:ff9b::8.8.8.8")).toBe("public")
    expect(classifyAddress("2002:c0a8:0101::1")).toBe("private")
    expect(classifyAddress("2002:7f00:1::")).toBe("loopback")
    expect(classifyAddress("2002:0808:0808::1")).toBe("public")
    // Teredo: client 10.0.0.1 is stored inverted in the last 32 bits.
    expect(classifyAddress("2001:0:4136:e378:8000:63bf:f5ff:fffe")).toBe("private")
    expect(classifyAddress("2001:0:4136:e378:8000:63bf:f7f7:f7f7")).toBe("public")
    expect(classifyAddress("not an address")).toBe("invalid")
  })

  it("refuses every address inside each special IPv4 range, with its reason", () => {
    for (const [range, reason] of IPV4_EXPECTED) {
      fc.assert(
        fc.property(inside(range), (address) => {
          expect(classifyAddress(address), `${formatIp(address)} in ${range}`).toBe(reason)
        }),
        { numRuns: 200 }
      )
    }
  })

  it("refuses every address inside each special IPv6 range, with its reason", () => {
    for (const [range, reason] of IPV6_EXPECTED) {
      fc.assert(
        fc.property(inside(range), (address) => {
          expect(classifyAddress(address), `${formatIp(address)} in ${range}`).toBe(reason)
        }),
        { numRuns: 200 }
      )
    }
  })

  it("calls an IPv4 address public exactly when it lies in no special range", () => {
    const special = [...IPV4_EXPECTED.map(([range]) => range), "0.0.0.0/8", "240.0.0.0/4"].map((range) => parseCidr(range)!)
    fc.assert(
      fc.property(v4Bytes, (bytes) => {
        const address = { family: 4, bytes } as const
        const isSpecial = special.some((cidr) => cidrContains(cidr, address))
        expect(classifyAddress(address) === "public").toBe(!isSpecial)
      }),
      { numRuns: 5000 }
    )
  })

  it("classifies IPv4-mapped (dotted or hex) and NAT64 forms like their IPv4 address", () => {
    const interesting = fc.oneof(v4Bytes, ...IPV4_EXPECTED.map(([range]) => inside(range).map((a) => a.bytes)))
    fc.assert(
      fc.property(interesting, (bytes) => {
        const v4 = classifyAddress(dotted(bytes))
        const hi = hex16(bytes[0], bytes[1])
        const lo = hex16(bytes[2], bytes[3])
        expect(classifyAddress(`::ffff:${dotted(bytes)}`)).toBe(v4)
        expect(classifyAddress(`::ffff:${hi}:${lo}`)).toBe(v4)
        expect(classifyAddress(`0:0:0:0:0:ffff:${hi}:${lo}`)).toBe(v4)
        expect(classifyAddress(`64:ff9b::${dotted(bytes)}`)).toBe(v4)
        // The URL parser's own rewriting of a mapped literal changes nothing.
        const fromUrl = new URL(`https://[::ffff:${dotted(bytes)}]/`).hostname
        expect(classifyAddress(fromUrl)).toBe(v4)
        // 6to4 and IPv4-compatible forms of a non-public address are refused for the same reason.
        if (v4 !== "public") {
          expect(classifyAddress(`2002:${hi}:${lo}::1`)).toBe(v4)
          expect(classifyAddress(`::${dotted(bytes)}`)).not.toBe("public")
        }
      }),
      { numRuns: 3000 }
    )
  })

  it("calls an IPv6 address public only inside 2000::/3", () => {
    const globalUnicast = parseCidr("2000::/3")!
    fc.assert(
      fc.property(v6Bytes, (bytes) => {
        const address = { family: 6, bytes } as const
        if (classifyAddress(address) === "public" && !cidrContains(parseCidr("64:ff9b::/96")!, address)) {
          expect(cidrContains(globalUnicast, address)).toBe(true)
        }
      }),
      { numRuns: 3000 }
    )
  })
})

describe("outboundPolicyOfConfig", () => {
  it("reads the allow-list and the http switch as the configuration gives them", () => {
    const policy = outboundPolicyOfConfig(loadConfig({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8, ::1 ,10.1.0.0/16,", OUTBOUND_ALLOW_HTTP: "true" }))
    expect(policy.allowPrivate.map(formatCidr)).toEqual(["127.0.0.0/8", "::1/128", "10.1.0.0/16"])
    expect(policy.allowHttp).toBe(true)
    expect(outboundPolicyOfConfig(loadConfig({}))).toEqual({ allowPrivate: [], allowHttp: false })
    expect(outboundPolicyOfConfig(loadConfig({ OUTBOUND_ALLOW_HTTP: "FALSE" })).allowHttp).toBe(false)
  })

  it("stops the start on a malformed setting instead of guessing", () => {
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE: "10.0.0.0/8,localhost" })).toThrow(/localhost/)
    expect(() => loadConfig({ OUTBOUND_ALLOW_HTTP: "sure" })).toThrow(/OUTBOUND_ALLOW_HTTP/)
  })
})

describe("checkUrl", () => {
  const loopbackHttp = outboundPolicyOfConfig({ outboundAllowPrivate: "127.0.0.0/8", outboundAllowHttp: true })

  it("accepts public https and keeps the host name for TLS", () => {
    const checked = checkUrl("https://Example.COM./hook?x=1#frag", PUBLIC_HTTPS_ONLY)
    expect(checked.hostname).toBe("example.com.")
    expect(checked.literal).toBeUndefined()
    expect(checked.port).toBe(443)
    expect(checked.secure).toBe(true)
    expect(checkUrl("https://8.8.8.8:8443/", PUBLIC_HTTPS_ONLY).port).toBe(8443)
    expect(formatIp(checkUrl("https://[2606:4700::1]/", PUBLIC_HTTPS_ONLY).literal!)).toBe("2606:4700::1")
  })

  it("refuses bad URLs, other schemes and credentials", () => {
    expectOutboundError(() => checkUrl("not a url", PUBLIC_HTTPS_ONLY), "invalid_url")
    expectOutboundError(() => checkUrl("https://user:pw@example.com/", PUBLIC_HTTPS_ONLY), "invalid_url")
    expectOutboundError(() => checkUrl("https://user@example.com/", PUBLIC_HTTPS_ONLY), "invalid_url")
    for (const url of ["ftp://example.com/", "file:///etc/passwd", "gopher://127.0.0.1:6379/_", "data:,x", "ws://example.com/"]) {
      expectOutboundError(() => checkUrl(url, loopbackHttp), "scheme_not_allowed")
    }
  })

  it("refuses numeric hosts in every spelling the URL parser accepts", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://2130706433/",
      "https://0x7f.1/",
      "https://0177.0.0.1/",
      "https://127.1/",
      "https://0x7f000001/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://169.254.169.254/latest/meta-data",
      "https://[fd00::1]/",
      "https://10.1.2.3/",
      "https://[64:ff9b::a9fe:a9fe]/"
    ]) {
      expectOutboundError(() => checkUrl(url, PUBLIC_HTTPS_ONLY), "address_not_allowed")
    }
    expectOutboundError(() => checkUrl("https://0.0.0.0/", PUBLIC_HTTPS_ONLY), "address_not_allowed")
  })

  it("opens allow-listed ranges, but never unspecified, multicast or broadcast", () => {
    const everything = outboundPolicyOfConfig({ outboundAllowPrivate: "0.0.0.0/0,::/0", outboundAllowHttp: false })
    expect(checkUrl("https://10.1.2.3/", everything).literal).toBeDefined()
    expect(checkUrl("https://[::ffff:10.1.2.3]/", outboundPolicyOfConfig({ outboundAllowPrivate: "10.0.0.0/8", outboundAllowHttp: false })).literal).toBeDefined()
    for (const url of ["https://0.0.0.0/", "https://[::]/", "https://224.0.0.1/", "https://255.255.255.255/", "https://[ff02::1]/", "https://0.1.2.3/"]) {
      const error = expectOutboundError(() => checkUrl(url, everything), "address_not_allowed")
      expect(error.message).toMatch(/can never be called/)
    }
  })

  it("allows plain http only to allow-listed ranges with the http switch on", () => {
    expect(checkUrl("http://127.0.0.1:8080/", loopbackHttp).port).toBe(8080)
    const noHttp = outboundPolicyOfConfig({ outboundAllowPrivate: "127.0.0.0/8", outboundAllowHttp: false })
    expectOutboundError(() => checkUrl("http://127.0.0.1/", noHttp), "scheme_not_allowed")
    expectOutboundError(() => checkUrl("http://8.8.8.8/", loopbackHttp), "scheme_not_allowed")
    expectOutboundError(() => checkUrl("http://2130706433/", PUBLIC_HTTPS_ONLY), "scheme_not_allowed")
    expectOutboundError(() => checkUrl("http://10.0.0.1/", loopbackHttp), "scheme_not_allowed")
  })

  it("refuses a name when any one of its addresses is refused", () => {
    const target = { hostname: "multi.example", secure: true }
    expect(formatIp(chooseAddress([parseIp("8.8.8.8")!, parseIp("1.1.1.1")!], target, PUBLIC_HTTPS_ONLY))).toBe("8.8.8.8")
    const error = expectOutboundError(
      () => chooseAddress([parseIp("8.8.8.8")!, parseIp("10.0.0.5")!], target, PUBLIC_HTTPS_ONLY),
      "address_not_allowed"
    )
    expect(error.message).toContain("10.0.0.5")
    expect(error.message).toContain("multi.example")
    expectOutboundError(() => chooseAddress([], target, PUBLIC_HTTPS_ONLY), "dns_failed")
  })

  it("never lets an address the allow-list does not open through when it is not public", () => {
    const allowed = fc.constantFrom("10.0.0.0/8", "127.0.0.0/8", "fc00::/7", "169.254.0.0/16")
    fc.assert(
      fc.property(allowed, v4Bytes, v6Bytes, fc.boolean(), (range, b4, b6, useV4) => {
        const policy = outboundPolicyOfConfig({ outboundAllowPrivate: range, outboundAllowHttp: false })
        const address = useV4 ? { family: 4, bytes: b4 } as const : { family: 6, bytes: b6 } as const
        const text = address.family === 4 ? formatIp(address) : `[${formatIp(address)}]`
        const addressClass = classifyAddress(address)
        const listed = cidrContains(policy.allowPrivate[0], address)
        let refused = false
        try {
          checkUrl(`https://${text}/`, policy)
        } catch (error) {
          expect(error).toBeInstanceOf(OutboundError)
          refused = true
        }
        expect(refused).toBe(NEVER_ALLOWED.has(addressClass) || (addressClass !== "public" && !listed))
      }),
      { numRuns: 3000 }
    )
  })
})

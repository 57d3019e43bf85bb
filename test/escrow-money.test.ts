/**
 * Escrow money as properties (fast-check): parsing and formatting are inverse, a JSON number is
 * read through its shortest decimal text, the fee and the net release always add up to the amount,
 * and nothing on the way is a float.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatMinor, MAX_AMOUNT_MINOR, minorDigits, parseAmount, releaseFee, supportedCurrencies } from "../src/escrow/money.js"

const digitsArb = fc.constantFrom(0, 2, 3, 4)
const amountArb = fc.bigInt({ min: 1n, max: MAX_AMOUNT_MINOR })
const minorOf = (input: string | number, digits: number) => {
  const parsed = parseAmount(input, digits)
  return "minor" in parsed ? parsed.minor : parsed.problem
}

describe("parsing and formatting", () => {
  it("parse ∘ format is the identity on every accepted amount", () => {
    fc.assert(fc.property(digitsArb, amountArb, (digits, minor) => minorOf(formatMinor(minor, digits), digits) === minor))
  })

  it("format ∘ parse gives back a decimal written with exactly the currency's digits", () => {
    fc.assert(
      fc.property(digitsArb, amountArb, (digits, minor) => {
        const text = formatMinor(minor, digits)
        expect(text).toMatch(digits === 0 ? /^[1-9]\d*$/ : new RegExp(`^(0|[1-9]\\d*)\\.\\d{${digits}}$`))
        return formatMinor(minorOf(text, digits) as bigint, digits) === text
      })
    )
  })

  it("fewer decimals than the currency has are padded; more are refused", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 9n }), fc.integer({ min: 0, max: 3 }), (whole, drop) => {
        const full = formatMinor(whole * 10_000n, 4)
        const shorter = full.slice(0, full.length - drop).replace(/\.$/, "")
        expect(minorOf(shorter, 4)).toBe(whole * 10_000n)
        return minorOf(`${formatMinor(whole, 2)}1`, 2) === "too_many_decimals"
      })
    )
  })

  it("a JSON number is read through its shortest decimal text: cents stay exact up to the limit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999_999_999_999 }), (cents) => {
        const asNumber = cents / 100
        return minorOf(asNumber, 2) === BigInt(cents) && minorOf(asNumber, 2) === minorOf(String(asNumber), 2)
      })
    )
    expect(minorOf(100.5, 2)).toBe(10_050n)
    expect(formatMinor(minorOf(100.5, 2) as bigint, 2)).toBe("100.50")
    expect(minorOf(0.1 + 0.2, 2)).toBe("too_many_decimals")
    expect(minorOf(1e21, 2)).toBe("not_a_decimal")
    expect(minorOf(1e-7, 4)).toBe("not_a_decimal")
  })

  it("zero, negatives, signs, exponents, blanks and other text are refused", () => {
    for (const bad of ["0", "0.00", "-1", "-0.01", "+1", "1e3", " 1", "1 ", "", ".5", "5.", "1,00", "0x10", "NaN", "Infinity", "١٢"]) {
      expect(typeof minorOf(bad, 2), bad).toBe("string")
    }
    expect(minorOf(-5, 2)).toBe("not_a_decimal")
    expect(minorOf(0, 2)).toBe("not_positive")
    fc.assert(fc.property(fc.string(), (text) => /^\d+(\.\d+)?$/.test(text) || minorOf(text, 2) === "not_a_decimal"))
  })

  it("amounts above the limit are refused however they are written, leading zeros included", () => {
    expect(minorOf(formatMinor(MAX_AMOUNT_MINOR, 2), 2)).toBe(MAX_AMOUNT_MINOR)
    expect(minorOf(formatMinor(MAX_AMOUNT_MINOR + 1n, 2), 2)).toBe("too_large")
    expect(minorOf("9".repeat(80), 2)).toBe("too_large")
    expect(minorOf(`${"0".repeat(60)}1.25`, 2)).toBe(125n)
  })
})

describe("release fee", () => {
  it("fee + net_release = amount, 0 ≤ fee ≤ amount, rounded half up, for every amount and rate", () => {
    fc.assert(
      fc.property(amountArb, fc.integer({ min: 0, max: 10_000 }), (amount, basisPoints) => {
        const { fee, net } = releaseFee(amount, basisPoints)
        const exact = amount * BigInt(basisPoints)
        // fee is the integer nearest amount × bp / 10 000, halves going up.
        const halfUp = fee * 10_000n <= exact + 5_000n && exact + 5_000n < (fee + 1n) * 10_000n
        return fee + net === amount && fee >= 0n && fee <= amount && net >= 0n && halfUp
      })
    )
  })

  it("the ends and a half", () => {
    expect(releaseFee(12_345n, 0)).toEqual({ fee: 0n, net: 12_345n })
    expect(releaseFee(12_345n, 10_000)).toEqual({ fee: 12_345n, net: 0n })
    // 250 bp of 1.00 = 0.025 → 0.03 (half up); of 0.20 = 0.005 → 0.01.
    expect(releaseFee(100n, 250)).toEqual({ fee: 3n, net: 97n })
    expect(releaseFee(20n, 250)).toEqual({ fee: 1n, net: 19n })
    expect(releaseFee(19n, 250)).toEqual({ fee: 0n, net: 19n })
  })
})

describe("currencies", () => {
  it("ISO 4217 minor digits, where ICU's display digits differ too", () => {
    expect(minorDigits("EUR")).toBe(2)
    expect(minorDigits("eur")).toBe(2)
    expect(minorDigits("JPY")).toBe(0)
    expect(minorDigits("KWD")).toBe(3)
    // ICU shows these with 0 digits; ISO 4217 List One says 2 and 3.
    expect(minorDigits("HUF")).toBe(2)
    expect(minorDigits("IDR")).toBe(2)
    expect(minorDigits("IQD")).toBe(3)
    for (const code of ["XXX", "XTS", "XDR", "XAU", "ABC", "EURO", ""]) expect(minorDigits(code), code).toBeUndefined()
    expect(supportedCurrencies().size).toBeGreaterThan(140)
  })
})

describe("no float anywhere", () => {
  it("the escrow sources never turn an amount into a float", () => {
    const dir = resolve(import.meta.dirname, "../src/escrow")
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), "utf8")
      for (const pattern of [/parseFloat/, /toFixed/, /Math\.round/, /Number\(/, /\bREAL\b|DOUBLE PRECISION|NUMERIC/]) {
        expect([file, pattern.test(text)], String(pattern)).toEqual([file, false])
      }
    }
    const migration = readFileSync(resolve(import.meta.dirname, "../src/platform/db/migrations/0019_escrow.ts"), "utf8")
    expect(migration).not.toMatch(/REAL|DOUBLE PRECISION|NUMERIC|FLOAT/i)
  })
})

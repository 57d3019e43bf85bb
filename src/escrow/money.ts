/**
 * Money as integer minor units (bigint), never floats. Which currency codes exist comes from
 * Node's ICU (`Intl.supportedValuesOf("currency")`), read once; how many minor digits each has
 * comes from ISO 4217 List One, because ICU's digits follow CLDR's display habits and differ for
 * about twenty codes (it shows HUF, IDR, COP, IQD ... with 0 digits; ISO 4217 says 2, 2, 2, 3).
 */

/** ISO 4217 List One minor units other than 2. */
const ISO_MINOR_DIGITS: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4
}

/** Codes whose ISO 4217 minor unit is "N.A." (units of account, metals, testing, no currency): not money to keep a ledger in. */
const NO_MINOR_UNIT = new Set(["XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA", "XXX"])

const CURRENCIES: ReadonlyMap<string, number> = new Map(
  Intl.supportedValuesOf("currency")
    .filter((code) => !NO_MINOR_UNIT.has(code))
    .map((code) => [code, ISO_MINOR_DIGITS[code] ?? 2] as const)
)

/** Every supported currency code with its minor digits. */
export const supportedCurrencies = (): ReadonlyMap<string, number> => CURRENCIES

/** The currency's minor digits, or undefined when it is not supported. Codes are read case-insensitively. */
export const minorDigits = (code: string): number | undefined => CURRENCIES.get(code.toUpperCase())

/** No single amount above this many minor units (10^15): far beyond any commitment, far below int8. */
export const MAX_AMOUNT_MINOR = 10n ** 15n
/** No balance above this many minor units (10^18 < 2^63): sums of amounts stay exact in BIGINT. */
export const MAX_BALANCE_MINOR = 10n ** 18n

const DECIMAL = /^(\d+)(?:\.(\d+))?$/

export type AmountProblem = "not_a_decimal" | "too_many_decimals" | "not_positive" | "too_large"

/**
 * A positive amount in minor units, or why not. A number is read through its shortest decimal
 * text (`String(n)`: 100.5 → "100.5"), so what the client wrote is what counts, not its binary
 * double; exponent forms (1e21, 1e-7) are refused as they are never a plain amount.
 */
export const parseAmount = (input: string | number, digits: number): { readonly minor: bigint } | { readonly problem: AmountProblem } => {
  const text = typeof input === "number" ? String(input) : input
  const match = DECIMAL.exec(text)
  if (match === null) return { problem: "not_a_decimal" }
  const whole = match[1]!
  const fraction = match[2] ?? ""
  if (fraction.length > digits) return { problem: "too_many_decimals" }
  // Leading zeros would let a huge string through the length check below; strip them first.
  const digitsText = `${whole}${fraction.padEnd(digits, "0")}`.replace(/^0+(?=\d)/, "")
  if (digitsText.length > 19) return { problem: "too_large" }
  const minor = BigInt(digitsText)
  if (minor <= 0n) return { problem: "not_positive" }
  if (minor > MAX_AMOUNT_MINOR) return { problem: "too_large" }
  return { minor }
}

/** Minor units as a decimal string with exactly `digits` decimals ("0.00", "1234.50", "7"). */
export const formatMinor = (minor: bigint, digits: number): string => {
  const negative = minor < 0n
  const text = (negative ? -minor : minor).toString().padStart(digits + 1, "0")
  const body = digits === 0 ? text : `${text.slice(0, text.length - digits)}.${text.slice(text.length - digits)}`
  return negative ? `-${body}` : body
}

/**
 * The fee of a release: `amount × basisPoints / 10 000`, rounded half up to the minor unit
 * (amounts are positive, so half up is half away from zero). 0 ≤ fee ≤ amount because
 * basisPoints ≤ 10 000, and `net_release = amount − fee`, so the two always add up to the amount.
 */
export const releaseFee = (amount: bigint, basisPoints: number): { readonly fee: bigint; readonly net: bigint } => {
  const fee = (amount * BigInt(basisPoints) + 5_000n) / 10_000n
  return { fee, net: amount - fee }
}

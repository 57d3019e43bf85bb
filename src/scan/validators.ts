/** Checksums and plausibility rules that turn pattern hits into findings. */

const digitsOf = (text: string): string => text.replace(/[^0-9]/g, "")

/** Luhn (mod 10) check over the digits of `text`. */
export const luhnValid = (text: string): boolean => {
  const digits = digitsOf(text)
  if (digits.length === 0) return false
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

/**
 * Payment card: 13-19 digits, a major-network leading digit (2-6) and a valid Luhn sum.
 * The leading-digit rule drops most Luhn-valid accidents (order numbers, timestamps).
 */
export const cardNumberValid = (text: string): boolean => {
  const digits = digitsOf(text)
  if (digits.length < 13 || digits.length > 19) return false
  const first = digits.charCodeAt(0) - 48
  if (first < 2 || first > 6) return false
  return luhnValid(digits)
}

/**
 * Card number inside a greedy hit: the whole text, else the longest prefix that ends
 * right before a separator (so "4111 1111 1111 1111 123" yields the card without the
 * trailing code). Returns the accepted length, 0 when none is valid.
 */
export const cardNumberPrefix = (text: string): number => {
  if (cardNumberValid(text)) return text.length
  for (let cut = text.length - 1; cut > 0; cut--) {
    const separator = text[cut]
    if (separator !== " " && separator !== "-") continue
    if (cardNumberValid(text.slice(0, cut))) return cut
  }
  return 0
}

/** US SSN rules: area not 000, 666 or 900-999; group not 00; serial not 0000. */
export const ssnValid = (text: string): boolean => {
  const digits = digitsOf(text)
  if (digits.length !== 9) return false
  const area = Number(digits.slice(0, 3))
  const group = Number(digits.slice(3, 5))
  const serial = Number(digits.slice(5))
  if (area === 0 || area === 666 || area >= 900) return false
  return group !== 0 && serial !== 0
}

/** IBAN: 15-34 characters and ISO 7064 mod-97 remainder 1. */
export const ibanValid = (text: string): boolean => {
  const compact = text.replace(/ /g, "").toUpperCase()
  if (compact.length < 15 || compact.length > 34) return false
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/.test(compact)) return false
  const rearranged = compact.slice(4) + compact.slice(0, 4)
  // Fold digit by digit so the remainder stays a small integer (no BigInt needed).
  let remainder = 0
  for (let i = 0; i < rearranged.length; i++) {
    const code = rearranged.charCodeAt(i)
    if (code >= 65) {
      const value = code - 55 // A=10 ... Z=35, two digits
      remainder = (remainder * 100 + value) % 97
    } else {
      remainder = (remainder * 10 + (code - 48)) % 97
    }
  }
  return remainder === 1
}

/** Phone numbers: 8-15 digits overall (E.164 bounds), excluding obvious runs like 0000000000. */
export const phoneValid = (text: string): boolean => {
  const digits = digitsOf(text)
  if (digits.length < 8 || digits.length > 15) return false
  return !/^(\d)\1+$/.test(digits)
}

/** IPv6: exactly one way to write it, either 8 groups or a single `::` compression. */
export const ipv6Valid = (text: string): boolean => {
  const doubleColon = text.indexOf("::")
  if (doubleColon !== text.lastIndexOf("::")) return false
  const groups = text.split(":")
  if (doubleColon === -1) {
    return groups.length === 8 && groups.every((g) => g.length >= 1 && g.length <= 4)
  }
  const nonEmpty = groups.filter((g) => g.length > 0)
  // `::` must stand for at least one zero group; a bare `::` is too common in code to report.
  return nonEmpty.length >= 2 && nonEmpty.length <= 7 && nonEmpty.every((g) => g.length <= 4)
}

const PLACEHOLDER = /^(?:\*+|x+|\.+|-+|_+|\?+|#+|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|%[^%]*%|null|none|undefined|redacted|changeme|example|password|secret|your[_-]?\w*|true|false)$/i

/** Secret assignments: reject placeholders such as `****`, `<token>`, `${VAR}`, `your_api_key`. */
export const secretValueValid = (value: string): boolean => {
  const trimmed = value.replace(/^["'`]|["'`]$/g, "")
  if (trimmed.length < 6) return false
  if (PLACEHOLDER.test(trimmed)) return false
  return !/^\[REDACTED/.test(trimmed)
}

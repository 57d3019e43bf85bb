/** Checksums that only sanitize needs; Luhn, IBAN and SSN rules come from src/scan. */
import { luhnValid } from "../scan/index.js"

const digitsOf = (text: string): string => text.replace(/[^0-9]/g, "")

/** NHS number: 10 digits, weights 10..2 over the first nine, check digit 11 - (sum mod 11); 10 never valid, 11 means 0. */
export const nhsNumberValid = (text: string): boolean => {
  const digits = digitsOf(text)
  if (digits.length !== 10 || /^(\d)\1+$/.test(digits)) return false
  let sum = 0
  for (let i = 0; i < 9; i++) sum += (digits.charCodeAt(i) - 48) * (10 - i)
  const check = 11 - (sum % 11)
  if (check === 10) return false
  return (check === 11 ? 0 : check) === digits.charCodeAt(9) - 48
}

/** US NPI: 10 digits starting 1 or 2, Luhn-valid once the 80840 card-issuer prefix is put in front. */
export const npiValid = (text: string): boolean => {
  const digits = digitsOf(text)
  if (digits.length !== 10 || (digits[0] !== "1" && digits[0] !== "2")) return false
  return luhnValid(`80840${digits}`)
}

/** Shannon entropy in bits per character. */
export const entropy = (value: string): number => {
  const counts = new Map<string, number>()
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1)
  let bits = 0
  for (const n of counts.values()) {
    const p = n / value.length
    bits -= p * Math.log2(p)
  }
  return bits
}

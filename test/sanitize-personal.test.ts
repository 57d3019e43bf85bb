/**
 * Birth dates after labels in several languages, e-mail addresses written with words or brackets,
 * and national identity numbers (src/sanitize/personal.ts), in the default pack.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { sanitizeText } from "../src/sanitize/text.js"

const typesIn = (text: string): Array<string> => sanitizeText(text, { policy: "default", mode: "redact" }).spans.filter((s) => s.replacement !== null).map((s) => s.entity_type)

const redacted = (text: string): string => sanitizeText(text, { policy: "default", mode: "redact" }).clean

describe("birth dates", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["Patient DOB: 3 de marzo de 1985, seen today.", "3 de marzo de 1985"],
    ["She was born on March 3rd, 1985 in Ohio.", "March 3rd, 1985"],
    ["Geburtsdatum: 14.03.1962", "14.03.1962"],
    ["date de naissance : 02/11/1990", "02/11/1990"],
    ["née le 7 juin 1974 à Lyon", "7 juin 1974"],
    ["Data di nascita 1980-12-24", "1980-12-24"],
    ["my date of birth is 4/5/87", "4/5/87"],
    ["D.O.B. 12-Mar-1985", "12-Mar-1985"],
    ["DOB (MM/DD/YYYY): 07/19/1959", "07/19/1959"],
    ["birthdate 19850314", "19850314"],
    ["geboortedatum: 1 januari 1979", "1 januari 1979"]
  ]
  for (const [text, date] of cases)
    it(`replaces "${date}"`, () => {
      expect(typesIn(text)).toContain("date_of_birth")
      expect(redacted(text)).not.toContain(date)
    })

  it("leaves dates that are not births", () => {
    for (const text of ["Invoice dated 03/04/2024, due 2024-05-01.", "The meeting moved to March 3rd, 2026.", "Release 2.4 shipped on 14.03.2025."])
      expect(typesIn(text)).not.toContain("date_of_birth")
  })
})

describe("e-mail addresses written to dodge harvesters", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["write to anna [dot] kowalska [at] wp [dot] pl", "anna [dot] kowalska [at] wp [dot] pl"],
    ["it's john dot smith at gmail dot com if you need me", "john dot smith at gmail dot com"],
    ["contact: m.rossi (at) libero.it", "m.rossi (at) libero.it"],
    ["ping john at gmail.com", "john at gmail.com"],
    ["sales{at}acme-tools{dot}de", "sales{at}acme-tools{dot}de"],
    ["reach me: j_doe42 at outlook dot com", "j_doe42 at outlook dot com"]
  ]
  for (const [text, email] of cases)
    it(`replaces "${email}"`, () => {
      expect(typesIn(text)).toContain("email_address")
      expect(redacted(text)).not.toContain(email)
    })

  it("leaves prose with the word at", () => {
    for (const text of [
      "email me at example.com",
      "I arrived at 9.15 and left at 10.30",
      "We met at Hotel Adlon. Then we left.",
      "    at Module._compile (node:internal/modules/cjs/loader.js:1105:14)",
      "look at foo.js for the handler",
      "Pricing starts at 4.99 per month"
    ])
      expect(typesIn(text), text).toEqual([])
  })
})

/** The Spanish DNI check letter of an eight-digit number. */
const dniLetter = (n: number): string => "TRWAGMYFPDXBNJZSQVHLCKE"[n % 23]!

describe("national identity numbers", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["Passport number: X1234567, expires 2027", "X1234567"],
    ["DNI 12345678Z", "12345678Z"],
    ["NI number AB 12 34 56 C", "AB 12 34 56 C"],
    ["CPF 123.456.789-09 do titular", "123.456.789-09"],
    ["BSN: 123456782", "123456782"],
    ["driver's license no. D1234-5678-9012", "D1234-5678-9012"],
    ["Steuer-ID 12 345 678 901", "12 345 678 901"]
  ]
  for (const [text, id] of cases)
    it(`replaces "${id}"`, () => {
      expect(typesIn(text)).toContain("national_id")
      expect(redacted(text)).not.toContain(id)
    })

  it("leaves document numbers and words that share a label's letters", () => {
    for (const text of ["RFC 9162 defines the log.", "the pan 12 inches wide", "passport expires soon", "a tin of 2000 screws", "Ticket CS-2024-118833 is closed"])
      expect(typesIn(text), text).not.toContain("national_id")
  })

  it("accepts a DNI exactly when its check letter is right", () => {
    fc.assert(
      fc.property(fc.integer({ min: 10_000_000, max: 99_999_999 }), fc.constantFrom(..."TRWAGMYFPDXBNJZSQVHLCKE"), (n, letter) => {
        const found = typesIn(`Hola, mi documento: ${n}${letter} gracias`).includes("national_id")
        expect(found).toBe(letter === dniLetter(n))
      })
    )
  })
})

describe("pasted tables", () => {
  it("reads a cell by the column it sits under, in CSV, semicolon and psql layouts", () => {
    const csv = "emp_no;name;dob;sort_code;account;salary\nE0412;Oliver Hughes;21-03-1993;20-45-77;43819027;41250"
    const clean = redacted(csv)
    for (const value of ["21-03-1993", "20-45-77", "43819027"]) expect(clean).not.toContain(value)
    expect(clean).toContain("41250")
    const psql = " id  | name          | birth_date | phone\n-----+---------------+------------+--------------\n 771 | Latoya Jenkins | 1988-05-14 | 918 555 0147\n"
    expect(redacted(psql)).not.toContain("1988-05-14")
  })

  it("leaves tables whose columns name nothing personal", () => {
    const text = "sku,colour,size,price\nA-1021,blue,42,19.99\nA-1022,red,40,21-03-1993"
    expect(typesIn(text)).not.toContain("date_of_birth")
  })
})

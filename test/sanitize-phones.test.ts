/**
 * Phone numbers in text written the way people write them (issue 31): support chats, e-mail
 * signatures, logs, configs, clinical and HR notes, in several countries' formats. Each case lists
 * the exact phone spans expected; decoys are texts full of phone-like digits (dates, versions,
 * amounts, order numbers, addresses...) that must come back unchanged.
 */
import { describe, expect, it } from "vitest"
import { sanitizeText } from "../src/sanitize/text.js"

interface Case {
  readonly text: string
  readonly phones: ReadonlyArray<string>
}

const CASES: ReadonlyArray<Case> = [
  { text: "hey can u call me back on (555) 010-4477 when ur free", phones: ["(555) 010-4477"] },
  { text: "Our London office: +44 20 7946 0958 (reception, 9-5).", phones: ["+44 20 7946 0958"] },
  { text: "Bitte rufen Sie uns an unter 0049 30 901820 oder schreiben Sie eine Mail.", phones: ["0049 30 901820"] },
  { text: "mobile 07700 900123 - text first pls", phones: ["07700 900123"] },
  { text: "Order flowers any time at 1-800-FLOWERS, open all night.", phones: ["1-800-FLOWERS"] },
  { text: "Support line: +1 (800) 555-0199 x123", phones: ["+1 (800) 555-0199 x123"] },
  { text: "Direct: 212-555-0147 ext. 45 | Fax: 212-555-0148", phones: ["212-555-0147 ext. 45", "212-555-0148"] },
  { text: "Best regards,\nAnna\nTel.: +49 (0)89 1234567\nMobil: +49 171 2345678", phones: ["+49 (0)89 1234567", "+49 171 2345678"] },
  { text: "Pour toute question : 01 42 68 53 00 ou 06 12 34 56 78.", phones: ["01 42 68 53 00", "06 12 34 56 78"] },
  { text: "Contactez le +33 6 12 34 56 78 avant 18h.", phones: ["+33 6 12 34 56 78"] },
  { text: "Ring the Sydney desk on +61 2 9374 4000 or mobile 0412 345 678.", phones: ["+61 2 9374 4000", "0412 345 678"] },
  { text: "Patient's daughter (next of kin) can be reached at 617.555.0182.", phones: ["617.555.0182"] },
  { text: "whatsapp +919876543210 for the invoice copy", phones: ["+919876543210"] },
  { text: "Call our Mumbai team: +91 98765 43210.", phones: ["+91 98765 43210"] },
  { text: "{\"name\":\"J. Doe\",\"phone\":\"+14155550123\",\"plan\":\"pro\"}", phones: ["+14155550123"] },
  { text: "contact_phone: \"+44 7700 900456\"\ncontact_email: ops@example.org", phones: ["+44 7700 900456"] },
  { text: "2024-03-02 14:11:09 INFO sms.send to=+34 612 345 678 status=queued", phones: ["+34 612 345 678"] },
  { text: "Teléfono: +34 91 123 45 67", phones: ["+34 91 123 45 67"] },
  { text: "Per informazioni chiamare lo 02 1234 5678 (ufficio di Milano).", phones: ["02 1234 5678"] },
  { text: "Bel ons gerust op 06-12345678 of 020-7654321.", phones: ["06-12345678", "020-7654321"] },
  { text: "Emergency contact: Mark (husband) 555-010-3391", phones: ["555-010-3391"] },
  { text: "I tried +1 415 555 0100 twice but nobody picked up!!", phones: ["+1 415 555 0100"] },
  { text: "Fax the signed form to 020 7946 0000 before Friday.", phones: ["020 7946 0000"] },
  { text: "Phone (home): 0161 496 0753", phones: ["0161 496 0753"] },
  { text: "Pls reach me at +353 1 234 5678, I'm in Dublin this week.", phones: ["+353 1 234 5678"] },
  { text: "NZ office +64 9 123 4567; Auckland hours only.", phones: ["+64 9 123 4567"] },
  { text: "call me 415 555 0123 tmrw", phones: ["415 555 0123"] },
  { text: "My cell is 4155550123 btw", phones: ["4155550123"] },
  { text: "Tel: +81 3-1234-5678 (Tokyo)", phones: ["+81 3-1234-5678"] },
  { text: "Reservations +1-212-555-0190, concierge +1-212-555-0191.", phones: ["+1-212-555-0190", "+1-212-555-0191"] },
  { text: "Caller ID showed 1 (312) 555-0178 at 03:14.", phones: ["1 (312) 555-0178"] },
  { text: "HR note: candidate phone +48 512 345 678, available from May.", phones: ["+48 512 345 678"] },
  { text: "Switchboard +46 8 123 456 78 - ask for procurement.", phones: ["+46 8 123 456 78"] },
  { text: "Telefon: 030 901820", phones: ["030 901820"] },
  { text: "Call 1-800-356-9377 extension 12 to cancel.", phones: ["1-800-356-9377 extension 12"] },
  { text: "SMS alerts go to +27 82 123 4567 and +55 11 91234-5678.", phones: ["+27 82 123 4567", "+55 11 91234-5678"] },
  { text: "clinic called pt at (646) 555-0112, left voicemail re: labs", phones: ["(646) 555-0112"] },
  { text: "Vendor: ACME Ltd, tel +41 44 668 18 00, VAT CHE-123.456.789", phones: ["+41 44 668 18 00"] },
  { text: "Kontakt: +43 1 58058 0", phones: ["+43 1 58058 0"] },
  { text: "tel:+18005550100", phones: ["+18005550100"] },
  { text: "Dial 1-888-GO-FEDEX for pickups.", phones: ["1-888-GO-FEDEX"] },
  { text: "Home 0117 496 0123, work 0117 496 0456 ext 210.", phones: ["0117 496 0123", "0117 496 0456 ext 210"] },
  { text: "Ring Brian on 087 123 4567 after lunch.", phones: ["087 123 4567"] }
]

/** Texts that carry phone-like digits but no phone number: nothing may be redacted. */
const DECOYS: ReadonlyArray<string> = [
  "Build 2024.05.17 passed 1234 of 1300 tests in 55.3 seconds.",
  "Deployed at 2024-05-17T10:22:33Z by the release job (run 20240517102233).",
  "Your order #1002348817 has shipped; tracking 1Z 999 AA1 0123 4567 84.",
  "Upgrade from v10.4.12 to v10.5.0 before 31/12/2024.",
  "Total due: $1,234,567.89, paid 1 234 567,00 EUR on 12.05.2024.",
  "Ping 192.168.100.200 and 10.0.0.1 before the 2 p.m. window.",
  "Ship to ZIP 94103-1234, parcel weight 2.35 kg.",
  "Invoice INV-2024-000123 covers 14 seats at 1200 each.",
  "The meeting moved from 10:30-11:45 to 13:00-14:15 on 2024-06-03.",
  "Population grew from 8 336 817 to 8 804 190 between 2010 and 2020.",
  "Ticket 4471-2209-33 was merged into 4471-2210-01.",
  "ISBN 978-0-306-40615-7 and 978 0 306 40615 7 are the same book.",
  "Coordinates 51.5007, -0.1246 mark the spot; elevation 12.5 m.",
  "Error 0x80070005 at offset 1048576 (block 2048 of 4096).",
  "Account balance 45 230 112, reference 2023 11 04 88.",
  "Sprint 42 closed 37 of 40 stories; velocity 2024 points YTD."
]

const phonesIn = (text: string): Array<string> =>
  sanitizeText(text, { policy: "default", mode: "redact" })
    .spans.filter((span) => span.entity_type === "phone_number")
    .map((span) => text.slice(span.start, span.end))

describe("phone numbers in real-world text", () => {
  it.each(CASES.map((c) => [c.text, c.phones] as const))("finds the phones in %j", (text, phones) => {
    expect(phonesIn(text)).toEqual(phones)
  })

  it.each(DECOYS.map((text) => [text]))("leaves the decoy %j unchanged", (text) => {
    expect(sanitizeText(text, { policy: "default", mode: "redact" }).clean).toBe(text)
  })

  it("reports recall and precision over all cases", () => {
    let expected = 0
    let found = 0
    let wrong = 0
    for (const c of CASES) {
      const got = phonesIn(c.text)
      expected += c.phones.length
      found += c.phones.filter((p) => got.includes(p)).length
      wrong += got.filter((p) => !c.phones.includes(p)).length
    }
    for (const text of DECOYS) wrong += phonesIn(text).length
    const recall = found / expected
    const precision = found / Math.max(1, found + wrong)
    console.log(`phones: recall ${recall.toFixed(2)} (${found}/${expected}), precision ${precision.toFixed(2)} (${wrong} wrong)`)
    expect(recall).toBeGreaterThanOrEqual(0.95)
    expect(precision).toBeGreaterThanOrEqual(0.95)
  })
})

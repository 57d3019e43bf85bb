/**
 * Street addresses in text written the way people write them (issue 31): shipping chats, e-mail
 * signatures, clinical and HR notes, logs and configs, in US, UK and European styles. Each case
 * lists the exact address spans expected; decoys carry a number next to a street-type word (or a
 * capitalised name) without being an address and must come back unchanged.
 */
import { describe, expect, it } from "vitest"
import { detect, sanitizeText } from "../src/sanitize/text.js"

interface Case {
  readonly text: string
  readonly addresses: ReadonlyArray<string>
}

const CASES: ReadonlyArray<Case> = [
  { text: "Sherlock's lodgings were at 221B Baker Street, London NW1 6XE.", addresses: ["221B Baker Street, London NW1 6XE"] },
  { text: "The letter was addressed to 1600 Pennsylvania Ave NW, Washington, DC 20500.", addresses: ["1600 Pennsylvania Ave NW, Washington, DC 20500"] },
  { text: "Our NYC office moved to 350 Fifth Avenue, Suite 3300 last spring.", addresses: ["350 Fifth Avenue, Suite 3300"] },
  { text: "hi, pls ship it to 742 Evergreen Terrace, Springfield thx", addresses: ["742 Evergreen Terrace, Springfield"] },
  { text: "Deliver to: 12-14 W 3rd St Apt 4B, New York, NY 10012", addresses: ["12-14 W 3rd St Apt 4B, New York, NY 10012"] },
  { text: "The PM lives at 10 Downing St, as everyone knows.", addresses: ["10 Downing St"] },
  { text: "Tenant: Flat 3, 47 Queen's Road, Brighton BN1 3XE", addresses: ["Flat 3, 47 Queen's Road, Brighton BN1 3XE"] },
  { text: "Lieferadresse: Hauptstraße 5, 10115 Berlin", addresses: ["Hauptstraße 5, 10115 Berlin"] },
  { text: "Wir treffen uns am Kurfürstendamm 21 um acht.", addresses: ["Kurfürstendamm 21"] },
  { text: "Indirizzo di consegna: Via Roma 12, 00184 Roma", addresses: ["Via Roma 12, 00184 Roma"] },
  { text: "Le magasin se trouve au 12 rue de la Paix, 75002 Paris.", addresses: ["12 rue de la Paix, 75002 Paris"] },
  { text: "Envíelo a Calle Mayor 7, 3º antes del lunes.", addresses: ["Calle Mayor 7, 3º"] },
  { text: "Please remit payment to P.O. Box 1234, Austin, TX 78701.", addresses: ["P.O. Box 1234, Austin, TX 78701"] },
  { text: "mail goes to PO Box 77 now, the house was sold", addresses: ["PO Box 77"] },
  { text: "Pt. resides at 58 Oak Lane, Apt 2, lives alone; daughter visits weekly.", addresses: ["58 Oak Lane, Apt 2"] },
  { text: "billing_address: \"4 Privet Drive, Little Whinging, Surrey\"", addresses: ["4 Privet Drive, Little Whinging"] },
  { text: "2024-05-02T10:11:12Z geocode ok addr=\"1 Infinite Loop, Cupertino, CA 95014\"", addresses: ["1 Infinite Loop, Cupertino, CA 95014"] },
  { text: "Customer says the courier left the box at 89 Maple Ave instead of 98 Maple Ave.", addresses: ["89 Maple Ave", "98 Maple Ave"] },
  { text: "New employee address: 1200 Harbor Blvd., Unit 14, Weehawken, NJ 07086", addresses: ["1200 Harbor Blvd., Unit 14, Weehawken, NJ 07086"] },
  { text: "Send the samples to 33 Wellington Square, Oxford OX1 2JF please.", addresses: ["33 Wellington Square, Oxford OX1 2JF"] },
  { text: "Emergency contact lives at 15 Elm Court #3.", addresses: ["15 Elm Court #3"] },
  { text: "Visit us: 500 Terry Francine Street, San Francisco, CA 94158", addresses: ["500 Terry Francine Street, San Francisco, CA 94158"] },
  { text: "Shipping to 9 Rosebery Crescent, Edinburgh EH12 5JY", addresses: ["9 Rosebery Crescent, Edinburgh EH12 5JY"] },
  { text: "Correspondence: 27 Kensington Gardens, London W2 4RH", addresses: ["27 Kensington Gardens, London W2 4RH"] },
  { text: "She grew up at 6 Mill Close in Leeds.", addresses: ["6 Mill Close"] },
  { text: "Kontakt: Musterweg 12a, 80331 München", addresses: ["Musterweg 12a, 80331 München"] },
  { text: "Praxis am Marktplatz 3, Termin nach Vereinbarung.", addresses: ["Marktplatz 3"] },
  { text: "Unsere Filiale: Bahnhofstr. 44, Zürich", addresses: ["Bahnhofstr. 44, Zürich"] },
  { text: "Wohnung in der Schönbrunner Allee 8, 1130 Wien", addresses: ["Schönbrunner Allee 8, 1130 Wien"] },
  { text: "Rendez-vous au 8 avenue des Champs-Élysées demain.", addresses: ["8 avenue des Champs-Élysées"] },
  { text: "Siège social : 45 boulevard Haussmann, 75009 Paris", addresses: ["45 boulevard Haussmann, 75009 Paris"] },
  { text: "Ci vediamo in Piazza Navona 45 alle sei.", addresses: ["Piazza Navona 45"] },
  { text: "Ufficio: Corso Buenos Aires 33, Milano", addresses: ["Corso Buenos Aires 33, Milano"] },
  { text: "Dirección: Avenida de Mayo 1370, Buenos Aires", addresses: ["Avenida de Mayo 1370, Buenos Aires"] },
  { text: "Nos vemos en Paseo de la Castellana 89 a las diez.", addresses: ["Paseo de la Castellana 89"] },
  { text: "Adres: Leidsestraat 45, 1017 NV Amsterdam", addresses: ["Leidsestraat 45, 1017 NV Amsterdam"] },
  { text: "Biuro: ul. Marszałkowska 10, 00-590 Warszawa", addresses: ["ul. Marszałkowska 10, 00-590 Warszawa"] },
  { text: "Our depot is at 2100 Industrial Pkwy, Suite B, Columbus, OH 43228.", addresses: ["2100 Industrial Pkwy, Suite B, Columbus, OH 43228"] },
  { text: "Ship from 77 Massachusetts Ave, Cambridge, MA 02139 to 1 Main St.", addresses: ["77 Massachusetts Ave, Cambridge, MA 02139", "1 Main St"] },
  { text: "drop-off: 3 Rue Cler, then lunch", addresses: ["3 Rue Cler"] }
]

/** A number next to a street word, or a street word next to a number, that is not an address. */
const DECOYS: ReadonlyArray<string> = [
  "The talk covered 5 Main points about onboarding.",
  "We hired 3 Park rangers for the summer season.",
  "Route 66 was built in 1926 and decommissioned later.",
  "See Chapter 12 Street Art for the mural examples.",
  "Bought 12 Avenue Q tickets for the whole team.",
  "Upgrade to version 2.4 Way faster than before, says the changelog.",
  "On 12 May the Court ruled against the appeal.",
  "We walked 3 Miles Road-side before the rain started.",
  "Press 4 Place your order, then press 5 to confirm.",
  "The Dr said 2 Drive sessions a week are enough.",
  "Team 7 Square dance practice was cancelled.",
  "Room 101 is on Floor 3 next to the Square meeting room.",
  "Released 24 Lane markings in the 3.2 update.",
  "Sprint 42 St. Patrick's Day release went fine.",
  "Order of 10 Boulevard Rouge bottles arrived broken.",
  "Box 3 of 12 contained 40 Street lamps."
]

const addressesIn = (text: string): Array<string> =>
  detect(text, "default")
    .filter((c) => c.entity_type === "street_address")
    .map((c) => text.slice(c.start, c.end))

describe("street addresses in real-world text", () => {
  it.each(CASES.map((c) => [c.text, c.addresses] as const))("finds the addresses in %j", (text, addresses) => {
    expect(addressesIn(text)).toEqual(addresses)
  })

  it.each(DECOYS.map((text) => [text]))("does not take %j for an address", (text) => {
    expect(addressesIn(text)).toEqual([])
  })

  it("redacts a found address in the cleaned text", () => {
    const result = sanitizeText("Ship to 221B Baker Street today.", { policy: "default", mode: "redact" })
    expect(result.clean).toBe("Ship to [REDACTED_STREET_ADDRESS] today.")
  })

  it("reports recall and precision over all cases", () => {
    let expected = 0
    let found = 0
    let wrong = 0
    for (const c of CASES) {
      const got = addressesIn(c.text)
      expected += c.addresses.length
      found += c.addresses.filter((a) => got.includes(a)).length
      wrong += got.filter((a) => !c.addresses.includes(a)).length
    }
    for (const text of DECOYS) wrong += addressesIn(text).length
    const recall = found / expected
    const precision = found / Math.max(1, found + wrong)
    console.log(`addresses: recall ${recall.toFixed(2)} (${found}/${expected}), precision ${precision.toFixed(2)} (${wrong} wrong)`)
    expect(recall).toBeGreaterThanOrEqual(0.9)
    expect(precision).toBeGreaterThanOrEqual(0.95)
  })
})

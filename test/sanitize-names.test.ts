/**
 * Person names the way people write them (issue 31): chats, clinical and HR notes, letters, agent
 * tool calls, logs and tables; lower case, unfamiliar and non-English names, first names alone,
 * names that are ordinary words. Each case lists the names expected (a `ner_person` span must
 * overlap each); decoys hold words that look like names (months, places, drugs, products, everyday
 * words) and must yield no `ner_person` span. Recall and precision are printed.
 */
import { describe, expect, it } from "vitest"
import { loadGazetteer } from "../src/sanitize/names.js"
import { detect, sanitizeText } from "../src/sanitize/text.js"

interface Case {
  readonly text: string
  readonly names: ReadonlyArray<string>
}

const CASES: ReadonlyArray<Case> = [
  // Salutations and sign-offs.
  { text: "Dear Siobhan,\nThank you for your patience with the refund.", names: ["Siobhan"] },
  { text: "Hi kwame, the invoice is attached.", names: ["kwame"] },
  { text: "hey priya - can you look at ticket 4411 today?", names: ["priya"] },
  { text: "Hello Mr. Okonkwo, your appointment is confirmed for Tuesday.", names: ["Okonkwo"] },
  { text: "Thanks,\nMarta Kowalczyk\nAccounts Payable", names: ["Marta Kowalczyk"] },
  { text: "Kind regards,\nHiroshi Tanaka", names: ["Hiroshi Tanaka"] },
  { text: "Best,\nJo", names: ["Jo"] },
  { text: "Cheers,\nNiamh", names: ["Niamh"] },
  { text: "Mit freundlichen Grüßen\nJürgen Hoffmann", names: ["Jürgen Hoffmann"] },
  { text: "Cordialement,\nAmélie Dubois", names: ["Amélie Dubois"] },
  { text: "Dear Will,\nthe contract is ready for your signature.", names: ["Will"] },
  { text: "Hi Grace, quick question about the roster.", names: ["Grace"] },
  // Titles in several languages.
  { text: "Dr. Adebayo reviewed the scan this morning.", names: ["Adebayo"] },
  { text: "Please forward the file to Frau Schneider in HR.", names: ["Schneider"] },
  { text: "Herr Müller hat angerufen.", names: ["Müller"] },
  { text: "La Sra. Pérez llegará a las diez.", names: ["Pérez"] },
  { text: "Mme Lefèvre a confirmé le rendez-vous.", names: ["Lefèvre"] },
  { text: "Seen by Dr Nakamura; follow up in 2 weeks.", names: ["Nakamura"] },
  { text: "Prof. Yilmaz will chair the session.", names: ["Yilmaz"] },
  { text: "mrs hosseini called twice about the bill", names: ["hosseini"] },
  { text: "Ms. June Carter asked for a copy.", names: ["June Carter"] },
  // Roles and labels.
  { text: "Patient: Oluwaseun Adeyemi, 34 y/o M, presents with chest pain.", names: ["Oluwaseun Adeyemi"] },
  { text: "Name: Chidi Okeke\nDept: Logistics", names: ["Chidi Okeke"] },
  { text: "Emergency contact: Fatima Al-Sayed (sister)", names: ["Fatima Al-Sayed"] },
  { text: "Tenant: Bogdan Wiśniewski, flat 4", names: ["Bogdan Wiśniewski"] },
  { text: "Employee: Lars Johansson has requested parental leave.", names: ["Lars Johansson"] },
  { text: "signed by Anneke van der Berg on behalf of the board", names: ["Anneke van der Berg"] },
  { text: "Referred by: Dr. Ramachandran", names: ["Ramachandran"] },
  { text: "pt is a 67yo woman; daughter Mei Ling at bedside", names: ["Mei Ling"] },
  { text: "Witness: Tomasz Nowak", names: ["Tomasz Nowak"] },
  { text: "Assignee: Dmitri Volkov", names: ["Dmitri Volkov"] },
  { text: "the patient, Rosa Delgado, declined the flu shot", names: ["Rosa Delgado"] },
  { text: "my name is Thandiwe and I need help with my account", names: ["Thandiwe"] },
  { text: "This is Kenji from the Osaka office.", names: ["Kenji"] },
  // Verbs of people and possessives.
  { text: "I told Kofi the shipment is late.", names: ["Kofi"] },
  { text: "Kofi's phone is off, try later.", names: ["Kofi"] },
  { text: "can you ask maria to resend the form?", names: ["maria"] },
  { text: "Okafor said the vendor would call back.", names: ["Okafor"] },
  { text: "tell ahmed the build is green", names: ["ahmed"] },
  { text: "We met Ingrid Solberg at the conference in Oslo.", names: ["Ingrid Solberg"] },
  { text: "Yesterday Giulia Bianchi emailed the revised budget.", names: ["Giulia Bianchi"] },
  { text: "Please loop in Aarav before Friday.", names: ["Aarav"] },
  { text: "Svetlana's laptop needs a new battery.", names: ["Svetlana"] },
  { text: "Spoke with Nguyen Van An about the delivery.", names: ["Nguyen Van An"] },
  { text: "I called Jessica but she did not pick up.", names: ["Jessica"] },
  { text: "Summer said she would bring the forms.", names: ["Summer"] },
  // Full names without context, capitalized.
  { text: "The award went to Marcus Oyelaran this year.", names: ["Marcus Oyelaran"] },
  { text: "Meeting notes: Carlos Mendoza and Ana Ruiz will draft the plan.", names: ["Carlos Mendoza", "Ana Ruiz"] },
  { text: "Attendees were Zeynep Demir, Mehmet Kaya and Elif Şahin.", names: ["Zeynep Demir", "Mehmet Kaya", "Elif Şahin"] },
  { text: "The report by Wojciech Lewandowski was approved.", names: ["Wojciech Lewandowski"] },
  { text: "Kwabena Asante joined the call late.", names: ["Kwabena Asante"] },
  { text: "Contact Sean O'Brien for keys.", names: ["Sean O'Brien"] },
  { text: "J. Smith approved the change.", names: ["J. Smith"] },
  { text: "Ticket reassigned from Jean-Pierre Martin to Li Wei.", names: ["Jean-Pierre Martin", "Li Wei"] },
  { text: "Invoice approved by Rahul Sharma.", names: ["Rahul Sharma"] },
  { text: "Lead counsel is Abdullah bin Rashid.", names: ["Abdullah bin Rashid"] },
  { text: "Her advisor, Maria de la Cruz, signed the letter.", names: ["Maria de la Cruz"] },
  { text: "Kim Min-jun and Park Ji-woo are on shift tonight.", names: ["Kim Min-jun", "Park Ji-woo"] },
  { text: "Christos Papadopoulos requested a refund.", names: ["Christos Papadopoulos"] },
  { text: "The form was filed by Shirin Rezaei.", names: ["Shirin Rezaei"] },
  { text: "Sofia Lindqvist from Malmö reported the bug.", names: ["Sofia Lindqvist"] },
  // Lower case, chat style.
  { text: "spoke to maria gonzalez yesterday, she is fine with it", names: ["maria gonzalez"] },
  { text: "pls send it to john smith asap", names: ["john smith"] },
  { text: "fyi kwame mensah is out sick", names: ["kwame mensah"] },
  { text: "can u check if priya patel got the email", names: ["priya patel"] },
  { text: "lol ahmed khan just replied", names: ["ahmed khan"] },
  { text: "i think giovanni rossi has the keys", names: ["giovanni rossi"] },
  { text: "ok so fatima hussain will cover my shift", names: ["fatima hussain"] },
  { text: "wei zhang and yuki sato are the reviewers", names: ["wei zhang", "yuki sato"] },
  { text: "the doc from olga ivanova is in the drive", names: ["olga ivanova"] },
  { text: "diego hernandez called about the invoice", names: ["diego hernandez"] },
  // Lists and structure.
  { text: "On call this week:\n- Aisha Bello\n- Tomás Ferreira\n- Hannah Becker", names: ["Aisha Bello", "Tomás Ferreira", "Hannah Becker"] },
  { text: "Speakers\n1. Dr. Amara Nwosu\n2. Lukas Weber", names: ["Amara Nwosu", "Lukas Weber"] },
  { text: "first_name,last_name,email\nchioma,okafor,c.okafor@example.org\nBjörn,Lindgren,bl@example.org", names: ["chioma", "okafor", "Björn", "Lindgren"] },
  { text: "id\tname\tdept\n17\tKeisha Robinson\tSales\n18\tArjun Mehta\tOps", names: ["Keisha Robinson", "Arjun Mehta"] },
  { text: '{"patient_name": "Ngozi Eze", "mrn": "A7781"}', names: ["Ngozi Eze"] },
  { text: '{"customer": {"first_name": "tariq", "last_name": "haddad"}}', names: ["tariq", "haddad"] },
  { text: "full_name: Liesbeth Janssens\nrole: admin", names: ["Liesbeth Janssens"] },
  { text: "2024-03-01 INFO user profile updated name=Hamid Karimi id=4412", names: ["Hamid Karimi"] },
  { text: "Owner: Björk Guðmundsdóttir", names: ["Björk Guðmundsdóttir"] },
  // Clinical and HR prose.
  { text: "Mother (Adaeze) reports the child has had fever for three days.", names: ["Adaeze"] },
  { text: "Husband Rajesh present during the consult.", names: ["Rajesh"] },
  { text: "Per Dr. Chen, continue metformin 500 mg BID.", names: ["Chen"] },
  { text: "Ms. Oyelaran was counselled on the risks.", names: ["Oyelaran"] },
  { text: "The manager, Sandra Ortiz, documented the incident.", names: ["Sandra Ortiz"] },
  { text: "Complaint against Brandon Fischer was closed.", names: ["Brandon Fischer"] },
  { text: "Letter for Mr. Haruto Yamamoto, account 7731.", names: ["Haruto Yamamoto"] },
  { text: "Please give Ravi the new badge.", names: ["Ravi"] },
  { text: "Thanks to Ifeoma for covering the night shift.", names: ["Ifeoma"] },
  { text: "Cc: Magdalena Dąbrowska", names: ["Magdalena Dąbrowska"] },
  { text: "Nurse Obi changed the dressing at 14:00.", names: ["Obi"] }
]

const DECOYS: ReadonlyArray<string> = [
  "The meeting moved to May 14 because of the holiday in June.",
  "We hope the patch lands before Monday.",
  "Will you review the pull request?",
  "Grace period for the invoice is 30 days.",
  "Please mark the ticket as resolved.",
  "The bill came to 42 euros.",
  "Rose petals were scattered on the table.",
  "Use the jack to lift the car.",
  "Summer sales start in July.",
  "At dawn the servers restart for maintenance.",
  "Joy and relief all round after the release.",
  "She will sign the form tomorrow.",
  "The shipment left Paris on Thursday and reached Berlin on Friday.",
  "Our Austin and Dallas offices close early.",
  "Prescribed Allegra 180 mg and Lyrica 75 mg.",
  "Ask Alexa to set a timer for ten minutes.",
  "The Tesla charger in the garage is broken.",
  "Sydney and Melbourne teams joined the call.",
  "The Python script runs every night on the Linux box.",
  "Deploy to Kubernetes after the Docker image is built.",
  "Victoria Station was closed due to a strike.",
  "Quarterly Review Of Onboarding And Support Tickets",
  "ERROR: connection refused by upstream HOST after 3 retries",
  "The cost of goods rose sharply in April.",
  "hope you are well, just checking in about the order",
  "may i get a copy of the receipt?",
  "Patient denies chest pain, shortness of breath or dizziness.",
  "Take ibuprofen with food; avoid alcohol.",
  "The Ford Focus and the Honda Civic were both recalled.",
  "Jordan and Israel signed the water agreement.",
  "The Lincoln Memorial is open until 10 pm.",
  "Dear Sir or Madam,\nPlease find attached the quarterly report.",
  "Hi team, the build is green again.",
  "Thanks,\nThe Support Team",
  "Regards,\nAccounts Payable",
  "Name: server-01\nRegion: eu-west-1",
  '{"name": "get_weather", "arguments": {"city": "Lisbon"}}',
  "The river bank flooded near the mill.",
  "Chase the invoice with accounts before the deadline.",
  "Amazon Web Services and Google Cloud both offer this.",
  "We called the API twice and it returned 500 both times.",
  "I told the team the release is on Friday.",
  "Sterling silver and ruby rings are on sale.",
  "Click Save, then Close.",
  "Ivy covered the old brick wall.",
  "Christmas Eve falls on a Tuesday this year.",
  "Pat the dough flat and bake for 20 minutes.",
  "Her brother will drive; the sister lives in Georgia."
]

const personSpans = (text: string): Array<[number, number]> =>
  detect(text, "default")
    .filter((c) => c.entity_type === "ner_person")
    .map((c) => [c.start, c.end])

const score = () => {
  let tp = 0
  let fn = 0
  let fp = 0
  const misses: Array<string> = []
  for (const c of CASES) {
    const spans = personSpans(c.text)
    const used = new Set<number>()
    let from = 0
    for (const name of c.names) {
      const start = c.text.indexOf(name, from)
      if (start === -1) throw new Error(`label "${name}" is not in "${c.text}"`)
      from = start + name.length
      const hit = spans.findIndex(([s, e]) => s < start + name.length && start < e)
      if (hit === -1) {
        fn++
        misses.push(`missed "${name}" in ${JSON.stringify(c.text)}`)
      } else {
        tp++
        used.add(hit)
      }
    }
    spans.forEach(([s, e], x) => {
      const overlapsLabel = c.names.some((name) => {
        const start = c.text.indexOf(name)
        return s < start + name.length && start < e
      })
      if (!used.has(x) && !overlapsLabel) {
        fp++
        misses.push(`false "${c.text.slice(s, e)}" in ${JSON.stringify(c.text)}`)
      }
    })
  }
  let decoysChanged = 0
  for (const d of DECOYS) {
    const spans = personSpans(d)
    if (spans.length > 0) {
      decoysChanged++
      fp += spans.length
      for (const [s, e] of spans) misses.push(`decoy "${d.slice(s, e)}" in ${JSON.stringify(d)}`)
    }
  }
  return { tp, fn, fp, decoysChanged, misses }
}

describe("person names", () => {
  const { tp, fn, fp, decoysChanged, misses } = score()
  const recall = tp / (tp + fn)
  const precision = tp / (tp + fp)

  it("prints recall and precision", () => {
    console.log(
      `person names: ${CASES.length} labelled texts, ${DECOYS.length} decoys; tp ${tp} fn ${fn} fp ${fp}; recall ${recall.toFixed(2)} precision ${precision.toFixed(2)}; decoys changed ${decoysChanged}\n${misses.join("\n")}`
    )
    expect(CASES.length).toBeGreaterThanOrEqual(80)
    expect(DECOYS.length).toBeGreaterThanOrEqual(40)
  })

  it("finds at least 95% of the names with precision at least 0.95", () => {
    expect(recall).toBeGreaterThanOrEqual(0.95)
    expect(precision).toBeGreaterThanOrEqual(0.95)
  })

  it("leaves at most two decoy texts with a name", () => {
    expect(decoysChanged).toBeLessThanOrEqual(2)
  })

  it("redacts a name in the default pack, and keeps the text around it", () => {
    const out = sanitizeText("spoke to maria gonzalez yesterday", { policy: "default", mode: "redact" })
    expect(out.clean).toBe("spoke to [REDACTED_NER_PERSON] yesterday")
    expect(out.findings[0]).toMatchObject({ entity_type: "ner_person", library: "pii_ner", severity: "warning" })
  })

  it("loads the gazetteer with weights and word commonness", () => {
    const { names } = loadGazetteer()
    expect(names.size).toBeGreaterThan(100_000)
    // kofi: a given name, not an English word; rose: a name that is also a common word.
    expect(names.get("kofi")! % 10).toBe(0)
    expect(names.get("rose")! % 10).toBeGreaterThan(0)
    expect(Math.floor(names.get("smith")! / 10) % 10).toBeGreaterThanOrEqual(5)
  })
})

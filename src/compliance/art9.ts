/**
 * Article 9 risk register: the fixed Annex III categories and how an action falls into one
 * (CONTRACT "Article 9 categories"). Pure: the classification is a function of the action's type
 * and the category its authorize `context.art9_category` names, nothing else.
 */

export interface Art9Category {
  readonly key: string
  readonly annex_iii_point: number | null
  readonly title: string
  readonly risk_level: "high" | "low"
}

interface CategoryRule extends Art9Category {
  readonly keywords: ReadonlyArray<string>
}

/** In Annex III order: the first category with a keyword among the tokens wins. */
const RULES: ReadonlyArray<CategoryRule> = [
  { key: "biometric_identification", annex_iii_point: 1, title: "Biometrics", risk_level: "high", keywords: ["biometric", "face", "facial", "fingerprint", "iris"] },
  {
    key: "critical_infrastructure",
    annex_iii_point: 2,
    title: "Critical infrastructure",
    risk_level: "high",
    keywords: ["grid", "energy", "water", "gas", "traffic", "scada"]
  },
  {
    key: "education_vocational",
    annex_iii_point: 3,
    title: "Education and vocational training",
    risk_level: "high",
    keywords: ["admission", "exam", "grading", "student"]
  },
  {
    key: "employment_hr",
    annex_iii_point: 4,
    title: "Employment, workers' management and access to self-employment",
    risk_level: "high",
    keywords: ["hiring", "recruit", "recruitment", "cv", "resume", "candidate", "employee"]
  },
  {
    key: "essential_services",
    annex_iii_point: 5,
    title: "Access to essential private and public services and benefits",
    risk_level: "high",
    keywords: ["credit", "loan", "mortgage", "insurance", "benefit", "benefits"]
  },
  { key: "law_enforcement", annex_iii_point: 6, title: "Law enforcement", risk_level: "high", keywords: ["police", "crime", "suspect", "forensic"] },
  {
    key: "migration_asylum",
    annex_iii_point: 7,
    title: "Migration, asylum and border control management",
    risk_level: "high",
    keywords: ["visa", "asylum", "border", "immigration", "migration"]
  },
  {
    key: "justice_democracy",
    annex_iii_point: 8,
    title: "Administration of justice and democratic processes",
    risk_level: "high",
    keywords: ["court", "judicial", "election", "voting"]
  },
  { key: "other", annex_iii_point: null, title: "Not in Annex III", risk_level: "low", keywords: [] }
]

/** The fixed list the categories route answers, in Annex III order (`other` last). */
export const ART9_CATEGORIES: ReadonlyArray<Art9Category> = RULES.map(({ key, annex_iii_point, title, risk_level }) => ({ key, annex_iii_point, title, risk_level }))

export const ART9_KEYS: ReadonlyArray<string> = ART9_CATEGORIES.map((category) => category.key)

const byKey = new Map(ART9_CATEGORIES.map((category) => [category.key, category]))

export const art9Category = (key: string): Art9Category | undefined => byKey.get(key)

/** The lower-cased action type split on every non-alphanumeric character (empty pieces dropped). */
export const actionTypeTokens = (actionType: string): ReadonlyArray<string> => actionType.toLowerCase().split(/[^a-z0-9]+/).filter((token) => token !== "")

/**
 * The category of an action: a `context.art9_category` that names a category wins; otherwise the
 * first category (Annex III order) with a keyword equal to a token of the action type; else `other`.
 */
export const classifyAction = (actionType: string, contextCategory?: unknown): Art9Category => {
  if (typeof contextCategory === "string") {
    const named = byKey.get(contextCategory)
    if (named !== undefined) return named
  }
  const tokens = new Set(actionTypeTokens(actionType))
  for (const rule of RULES) if (rule.keywords.some((keyword) => tokens.has(keyword))) return byKey.get(rule.key)!
  return byKey.get("other")!
}

/** The keywords of a category (tests and the PDF's legend). */
export const art9Keywords = (key: string): ReadonlyArray<string> => RULES.find((rule) => rule.key === key)?.keywords ?? []

/** One action as a risk register counts it. */
export interface Art9Action {
  readonly action_uuid: string
  readonly agent_id: string | null
  readonly action_type: string
  readonly art9_category: unknown
  readonly created_at: string
}

export interface Art9CategoryCount {
  count: number
  risk_level: string
  annex_iii_point: number | null
  sample_action_uuids: Array<string>
}

export interface Art9AgentCount {
  readonly agent_id: string
  readonly category: string
  readonly risk_level: string
  action_count: number
  first_seen_at: string
  last_seen_at: string
}

const SAMPLES = 5

/**
 * Counts actions per category and per (agent, category) as they stream by, in time order (so the
 * samples are each category's earliest actions). Actions without an agent id are counted under
 * `noAgentId`.
 */
export class Art9Tally {
  readonly categories: Record<string, Art9CategoryCount> = Object.fromEntries(
    ART9_CATEGORIES.map((category) => [category.key, { count: 0, risk_level: category.risk_level, annex_iii_point: category.annex_iii_point, sample_action_uuids: [] }])
  )
  readonly byAgent = new Map<string, Art9AgentCount>()
  total = 0

  constructor(private readonly noAgentId: string) {}

  add(action: Art9Action): void {
    const category = classifyAction(action.action_type, action.art9_category)
    const counted = this.categories[category.key]!
    counted.count++
    if (counted.sample_action_uuids.length < SAMPLES) counted.sample_action_uuids.push(action.action_uuid)
    this.total++
    const agentId = action.agent_id ?? this.noAgentId
    const key = `${agentId}\u0000${category.key}`
    const seen = this.byAgent.get(key)
    if (seen === undefined) {
      this.byAgent.set(key, { agent_id: agentId, category: category.key, risk_level: category.risk_level, action_count: 1, first_seen_at: action.created_at, last_seen_at: action.created_at })
      return
    }
    seen.action_count++
    if (action.created_at < seen.first_seen_at) seen.first_seen_at = action.created_at
    if (action.created_at > seen.last_seen_at) seen.last_seen_at = action.created_at
  }

  /** (agent, category) counts, by agent then Annex III order. */
  agentCounts(): Array<Art9AgentCount> {
    return [...this.byAgent.values()].sort((a, b) => (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : ART9_KEYS.indexOf(a.category) - ART9_KEYS.indexOf(b.category)))
  }
}

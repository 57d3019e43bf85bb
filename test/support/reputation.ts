/**
 * Formula "1.0" of CONTRACT-sdk-beyond §3 written again for the tests, apart from the server's:
 * plain numbers, each floor found by correcting the float quotient with exact products (no BigInt),
 * the tiers as a table of ranges.
 */

export interface Inputs {
  readonly notarized: number
  readonly failed: number
  readonly denied_by_policy: number
  readonly denied_by_human: number
  readonly human_approved: number
  readonly attested_success: number
  readonly attested_failure: number
  readonly attestations: number
  readonly age_days: number
  readonly decommissioned: boolean
}

/** floor(a / b) for integers a >= 0, b > 0, exact while a and b are below 2^53. */
export const exactFloor = (a: number, b: number): number => {
  let q = Math.floor(a / b)
  while (q * b > a) q -= 1
  while ((q + 1) * b <= a) q += 1
  return q
}

export const expectedScore = (i: Inputs): number => {
  if (i.decommissioned) return 0
  const executed = i.notarized + i.failed
  const decided = executed + i.denied_by_policy + i.denied_by_human
  const reliability = exactFloor(40 * (i.notarized + 5), executed + 10)
  const compliance = exactFloor(20 * (executed + 5), decided + 10)
  const oversight = i.human_approved > 10 ? 10 : i.human_approved
  const endorsementRaw = 2 * i.attested_success - 4 * i.attested_failure
  const endorsement = endorsementRaw < 0 ? 0 : endorsementRaw > 20 ? 20 : endorsementRaw
  const tenureRaw = exactFloor(i.age_days, 30)
  const tenure = tenureRaw > 10 ? 10 : tenureRaw
  return reliability + compliance + oversight + endorsement + tenure
}

const TIERS: ReadonlyArray<readonly [number, number, string]> = [
  [0, 29, "untrusted"],
  [30, 49, "provisional"],
  [50, 69, "established"],
  [70, 84, "trusted"],
  [85, 100, "exemplary"]
]

export const expectedTier = (i: Inputs, score: number): string => {
  if (i.decommissioned) return "decommissioned"
  if (i.notarized + i.failed + i.denied_by_policy + i.denied_by_human + i.attestations === 0) return "unrated"
  return TIERS.find(([low, high]) => score >= low && score <= high)![2]
}

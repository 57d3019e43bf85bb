/** Case rows written straight to a test server's database, for tests that need a case to exist but no models. */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"

/** Inserts `count` complete cases of `orgUuid`; their ids. */
export const insertCases = (run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>, orgUuid: string, count = 1): Promise<Array<string>> =>
  run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const ids = Array.from({ length: count }, () => `cas_${randomBytes(8).toString("hex")}`)
      const rows = ids.map((case_id): Record<string, unknown> => ({
        case_id,
        org_uuid: orgUuid,
        status: "complete",
        request_hash: "sha256:00",
        details_hash: "sha256:00",
        models: "[]",
        review_threshold: 0.4
      }))
      yield* sql`INSERT INTO cases ${sql.insert(rows as [Record<string, unknown>, ...Array<Record<string, unknown>>])}`
      return ids
    })
  )

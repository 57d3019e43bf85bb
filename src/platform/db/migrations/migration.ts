/** A migration's body: its statements, run with the database's SqlClient. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

type Steps = Generator<Effect.Effect<unknown, unknown, SqlClient.SqlClient>, void, any>

export const migration = (steps: (sql: SqlClient.SqlClient) => Steps): Effect.Effect<void, unknown, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.gen(() => steps(sql)))

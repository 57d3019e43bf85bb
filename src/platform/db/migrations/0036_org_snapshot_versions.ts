/**
 * The versions of organizations' snapshots (actors/org.ts) come from the database, one sequence
 * for every process: a version a node hears about can be compared with the one it holds whatever
 * the nodes' clocks say, so a lagging node never takes an older snapshot for a newer one.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql.unsafe(`CREATE SEQUENCE org_snapshot_versions`)
})

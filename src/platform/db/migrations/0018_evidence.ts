/** TEMPORARY stand-in for the evidence area's table (the real 0018 replaces it on merge): what escrow disputes look up. */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`CREATE TABLE evidence_packages (package_uuid UUID PRIMARY KEY, org_uuid UUID NOT NULL)`
})

import { Effect } from "effect"
import { databaseClientLayer, runMigrations } from "../../src/platform/db/index.js"

await Effect.runPromise(Effect.provide(runMigrations, databaseClientLayer({ url: "postgres://postgres@127.0.0.1:5432/settle_dbg" } as any)) as any)
console.log("migrated")

/**
 * Storage plumbing on Postgres: a fresh database on DATABASE_URL's server, or
 * else on the run's embedded PostgreSQL; and the embedded default itself, in
 * a temporary DATA_DIR.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  Database,
  type DatabaseConfig,
  databaseLayer,
  describePostgresUrl,
  jsonb,
  runMigrations
} from "../src/platform/db/index.js"
import { migrations } from "../src/platform/db/migrations/index.js"
import { setLogLevel } from "../src/platform/log.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"

/** What effect_sql_migrations must hold once every registered migration ran. */
const registered = Object.keys(migrations).map((key) => {
  const [, id, name] = /^(\d+)_(.+)$/.exec(key) as RegExpExecArray
  return { migration_id: Number(id), name }
})

type Runtime = ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | Database, SqlError>

const openRuntime = async (config: DatabaseConfig): Promise<Runtime> => {
  const runtime = ManagedRuntime.make(databaseLayer(config))
  await runtime.runPromise(Effect.void)
  return runtime
}

const reasonOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return { _tag: "success" }
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail") as { error: SqlError } | undefined
  if (error === undefined) return { _tag: "defect" }
  const reason = error.error.reason as { _tag: string; constraint?: string }
  return reason.constraint === undefined ? { _tag: reason._tag } : { _tag: reason._tag, constraint: reason.constraint }
}

let counter = 0
const uniqueId = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`

const insertOrg = (sql: SqlClient.SqlClient, orgUuid: string, slug = orgUuid) =>
  sql`INSERT INTO organizations (org_uuid, name, slug) VALUES (${orgUuid}, ${"Org " + orgUuid}, ${slug})`

/** A row of many column types and the JavaScript values the service relies on. */
const WIDE_TYPES_QUERY = `SELECT
  9007199254740993::int8 AS big, 42::int4 AS int, 7::int2 AS small, 1.25::float8 AS double, 1.1::float4 AS single,
  12345678901234567890.123::numeric AS num, true AS flag, 'text'::text AS txt, 'x'::varchar AS vc,
  '2024-02-29 23:59:59.123456+05:30'::timestamptz AS tstz, '2024-02-29 23:59:59.5'::timestamp AS ts,
  '2024-02-29'::date AS day, '13:14:15.25'::time AS tod, '13:14:15+05:30'::timetz AS todtz,
  '1 year 2 mons -3 days 04:05:06.789'::interval AS iv, '{"b":[1,"x",null],"a":{"c":true}}'::jsonb AS doc,
  '[1,2]'::json AS js, '\\x00ff10'::bytea AS bin, '6b6f6d65-0000-4000-8000-000000000001'::uuid AS id,
  ARRAY[1, 2]::int8[] AS bigs, ARRAY['a', NULL, 'b"c']::text[] AS texts, ARRAY['2024-01-01'::date] AS days,
  ARRAY[now() - now() + '2020-01-01T00:00:00Z'::timestamptz] AS stamps, NULL::text AS nothing,
  '192.168.0.1'::inet AS ip, '10.0.0.0/8'::cidr AS net`

describe("database", () => {
  let runtime: Runtime
  let fresh: FreshDatabase | undefined
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | Database>) => runtime.runPromise(effect)
  const runExit = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | Database>) => runtime.runPromiseExit(effect)

  beforeAll(async () => {
    fresh = await freshDatabaseUrl()
    runtime = await openRuntime({ url: fresh.url, dataDir: UNUSED_DATA_DIR, maxConnections: 8 })
  })
  afterAll(async () => {
    await runtime?.dispose()
    await fresh?.drop()
  })

  it("reports its kind and answers ping", async () => {
    const database = await run(Effect.service(Database))
    expect(database.kind).toBe("postgres")
    await run(database.ping)
  })

  it("applies migrations once; running them again changes nothing", async () => {
    const recorded = await run(
      SqlClient.SqlClient.use((sql) => sql`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`)
    )
    expect(registered[0]).toEqual({ migration_id: 1, name: "accounts" })
    expect(recorded).toEqual(registered)
    expect(await run(runMigrations)).toEqual([])
    expect(await run(runMigrations)).toEqual([])
    const tables = await run(
      SqlClient.SqlClient.use((sql) => sql<{ table_name: string }>`
          SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
      )
    )
    expect(tables.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(["api_keys", "audit_log", "effect_sql_migrations", "invites", "organizations", "users"])
    )
  })

  it("round-trips rows with jsonb, bigint and timestamptz", async () => {
    const orgUuid = uniqueId("org")
    const expiresAt = new Date("2031-05-06T07:08:09.123Z")
    const result = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO organizations (org_uuid, name, slug, default_approvers)
                   VALUES (${orgUuid}, 'Acme', ${orgUuid}, ${jsonb(["a@example.com", "b@example.com"])})`
        yield* sql`INSERT INTO users (user_uuid, org_uuid, email, name, password_hash, role)
                   VALUES (${orgUuid + "_u"}, ${orgUuid}, 'Owner@Example.com', NULL, 'scrypt$x', 'owner')`
        yield* sql`INSERT INTO api_keys (id, org_uuid, user_uuid, name, key_prefix, key_hash, scopes, expires_at)
                   VALUES (${orgUuid + "_k"}, ${orgUuid}, ${orgUuid + "_u"}, 'ci', 'ak_live_ab', ${orgUuid + "hash"},
                           ${jsonb(["actions:read", "receipts:read"])}, ${expiresAt})`
        const details = { nested: { list: [1, 2.5, "three", null, true] }, unicode: "é☃𝄞", quote: "it's \"q\"" }
        const [audit] = yield* sql<{ id: bigint }>`
          INSERT INTO audit_log (org_uuid, actor, event, target, details, request_id)
          VALUES (${orgUuid}, 'user:1', 'api_key.created', ${orgUuid + "_k"}, ${jsonb(details)}, 'req_1')
          RETURNING id`
        const [org] = yield* sql`SELECT * FROM organizations WHERE org_uuid = ${orgUuid}`
        const [key] = yield* sql`SELECT * FROM api_keys WHERE id = ${orgUuid + "_k"}`
        const [log] = yield* sql`SELECT * FROM audit_log WHERE id = ${audit.id}`
        return { org, key, log, details, auditId: audit.id }
      })
    )
    expect(result.org).toMatchObject({
      org_uuid: orgUuid,
      name: "Acme",
      plan: "self_hosted",
      default_approvers: ["a@example.com", "b@example.com"]
    })
    expect(result.org.created_at).toBeInstanceOf(Date)
    expect(result.key.scopes).toEqual(["actions:read", "receipts:read"])
    expect(result.key.expires_at).toBeInstanceOf(Date)
    expect((result.key.expires_at as Date).getTime()).toBe(expiresAt.getTime())
    expect(result.key.revoked_at).toBeNull()
    expect(typeof result.auditId).toBe("bigint")
    expect(result.log.id).toBe(result.auditId)
    expect(result.log.details).toEqual(result.details)
    expect(result.log.created_at).toBeInstanceOf(Date)
  })

  it("returns int8 as bigint, numeric as string, timestamptz as Date", async () => {
    const [row] = await run(
      SqlClient.SqlClient.use((sql) => sql`SELECT 9007199254740993::int8 AS big, ${123n} AS param, 1.50::numeric AS num,
                            '2024-01-01T00:00:00.5Z'::timestamptz AS at, ${new Date(86_400_000)} AS echoed`
      )
    )
    expect(row).toEqual({
      big: 9007199254740993n,
      param: 123n,
      num: "1.50",
      at: new Date("2024-01-01T00:00:00.500Z"),
      echoed: new Date(86_400_000)
    })
  })

  it("returns the agreed JavaScript value for every common column type", async () => {
    const [row] = await run(SqlClient.SqlClient.use((sql) => sql.unsafe(WIDE_TYPES_QUERY)))
    expect(row).toEqual({
      big: 9007199254740993n,
      int: 42,
      small: 7,
      double: 1.25,
      single: Math.fround(1.1),
      num: "12345678901234567890.123",
      flag: true,
      txt: "text",
      vc: "x",
      tstz: new Date("2024-02-29T18:29:59.123Z"),
      ts: new Date("2024-02-29T23:59:59.500Z"),
      day: "2024-02-29",
      tod: 47_655_250_000n,
      todtz: "13:14:15+05:30",
      iv: { months: 14, days: -3, microseconds: 14_706_789_000n },
      doc: { a: { c: true }, b: [1, "x", null] },
      js: [1, 2],
      bin: new Uint8Array([0, 255, 16]),
      id: "6b6f6d65-0000-4000-8000-000000000001",
      bigs: [1n, 2n],
      texts: ["a", null, 'b"c'],
      days: ["2024-01-01"],
      stamps: [new Date("2020-01-01T00:00:00Z")],
      nothing: null,
      ip: "192.168.0.1",
      net: "10.0.0.0/8"
    })
  })

  it("binds parameters the same way (property)", async () => {
    const textArrays = fc.array(fc.option(fc.string({ unit: "grapheme" }), { nil: null }), { minLength: 1 })
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.integer(),
        // Integral numbers are bound as int8 and come back as bigint; `int` covers those.
        fc.double({ noNaN: true }).filter((value) => !Number.isInteger(value)),
        fc.date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true }),
        fc.string({ unit: "grapheme" }),
        textArrays.filter((items) => items.some((item) => item !== null)),
        fc.uint8Array({ maxLength: 64 }),
        async (big, int, double, date, text, texts, bytes) => {
          const [row] = await run(
            SqlClient.SqlClient.use((sql) => sql`SELECT ${big} AS big, ${int} AS int, ${double} AS double, ${date} AS date,
                                  ${text} AS text, ${texts} AS texts, ${bytes} AS bytes`
            )
          )
          // float8 zero may come back with either sign; === treats them as the same number.
          expect(row).toEqual({ big, int, double: row.double === double ? row.double : double, date, text, texts, bytes })
        }
      ),
      { numRuns: 60 }
    )
  })

  it("round-trips any JSON document through jsonb (property)", async () => {
    // Postgres rejects \u0000 and lone surrogates in jsonb on every driver.
    const storable = fc.jsonValue().filter((value) => !JSON.stringify(value).includes("\\u"))
    await fc.assert(
      fc.asyncProperty(storable, async (value) => {
        const [row] = await run(
          SqlClient.SqlClient.use((sql) => sql`SELECT ${jsonb(value)} AS doc`)
        )
        expect(row.doc).toEqual(JSON.parse(JSON.stringify(value)))
      }),
      { numRuns: 60 }
    )
  })

  it("decodes intervals field by field (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -100_000, max: 100_000 }),
        fc.integer({ min: -100_000, max: 100_000 }),
        fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }),
        async (months, days, microseconds) => {
          const [row] = await run(
            SqlClient.SqlClient.use((sql) => sql`SELECT make_interval(months => ${months}, days => ${days})
                                  + ${microseconds} * interval '1 microsecond' AS iv`
            )
          )
          expect(row.iv).toEqual({ months, days, microseconds })
        }
      ),
      { numRuns: 60 }
    )
  })

  it("refuses a plain object as a parameter", async () => {
    const exit = await runExit(
      SqlClient.SqlClient.use((sql) => sql`SELECT ${{ a: 1 } as unknown as string} AS x`)
    )
    expect(reasonOf(exit)).toEqual({ _tag: "UnknownError" })
  })

  it("commits a transaction and rolls back a failed one", async () => {
    const committed = uniqueId("org")
    const rolledBack = uniqueId("org")
    await run(
      SqlClient.SqlClient.use((sql) =>
        sql.withTransaction(Effect.andThen(insertOrg(sql, committed), insertOrg(sql, committed + "_b")))
      )
    )
    const failed = await runExit(
      SqlClient.SqlClient.use((sql) =>
        sql.withTransaction(Effect.andThen(insertOrg(sql, rolledBack), Effect.fail("business rule" as const)))
      )
    )
    expect(Exit.isFailure(failed)).toBe(true)
    const rows = await run(
      SqlClient.SqlClient.use((sql) => sql<{ org_uuid: string }>`
          SELECT org_uuid FROM organizations WHERE org_uuid IN (${committed}, ${committed + "_b"}, ${rolledBack})
          ORDER BY org_uuid`
      )
    )
    expect(rows.map((row) => row.org_uuid)).toEqual([committed, committed + "_b"])
  })

  it("rolls back only the inner savepoint of a nested transaction", async () => {
    const outer = uniqueId("org")
    const inner = uniqueId("org")
    await run(
      SqlClient.SqlClient.use((sql) =>
        sql.withTransaction(
          Effect.gen(function* () {
            yield* insertOrg(sql, outer)
            yield* sql.withTransaction(Effect.andThen(insertOrg(sql, inner), Effect.fail("inner"))).pipe(Effect.ignore)
          })
        )
      )
    )
    const rows = await run(
      SqlClient.SqlClient.use((sql) => sql`SELECT org_uuid FROM organizations WHERE org_uuid IN (${outer}, ${inner})`
      )
    )
    expect(rows).toEqual([{ org_uuid: outer }])
  })

  it("fails the COMMIT of a transaction whose statement failed but was caught", async () => {
    const orgUuid = uniqueId("org")
    const exit = await runExit(
      SqlClient.SqlClient.use((sql) =>
        sql.withTransaction(
          Effect.gen(function* () {
            yield* insertOrg(sql, orgUuid)
            // A failing statement aborts the Postgres transaction; swallowing the error must not hide that.
            yield* insertOrg(sql, orgUuid).pipe(Effect.ignore)
          })
        )
      )
    )
    expect(reasonOf(exit)).toEqual({ _tag: "UnknownError" })
    const rows = await run(
      SqlClient.SqlClient.use((sql) => sql`SELECT 1 FROM organizations WHERE org_uuid = ${orgUuid}`)
    )
    expect(rows).toEqual([])
    // The connection is usable afterwards.
    await run(Database.use((database) => database.ping))
  })

  it("maps a constraint violation found at COMMIT to ConstraintError", async () => {
    const table = uniqueId("deferred")
    const exit = await runExit(
      SqlClient.SqlClient.use((sql) =>
        Effect.gen(function* () {
          yield* sql.unsafe(`CREATE TABLE ${table} (id int PRIMARY KEY,
            parent int REFERENCES ${table} (id) DEFERRABLE INITIALLY DEFERRED)`)
          yield* sql.withTransaction(sql.unsafe(`INSERT INTO ${table} VALUES (1, 99)`))
        })
      )
    )
    expect(reasonOf(exit)).toEqual({ _tag: "ConstraintError" })
    const rows = await run(SqlClient.SqlClient.use((sql) => sql.unsafe(`SELECT * FROM ${table}`)))
    expect(rows).toEqual([])
  })

  it("maps unique violations to UniqueViolation with the constraint name", async () => {
    const orgUuid = uniqueId("org")
    await run(SqlClient.SqlClient.use((sql) => insertOrg(sql, orgUuid, orgUuid + "-slug")))
    const duplicateSlug = await runExit(
      SqlClient.SqlClient.use((sql) => insertOrg(sql, orgUuid + "_2", orgUuid + "-slug"))
    )
    expect(reasonOf(duplicateSlug)).toEqual({ _tag: "UniqueViolation", constraint: "organizations_slug_key" })
    const duplicateKey = await runExit(SqlClient.SqlClient.use((sql) => insertOrg(sql, orgUuid)))
    expect(reasonOf(duplicateKey)).toEqual({ _tag: "UniqueViolation", constraint: "organizations_pkey" })
    const badRole = await runExit(
      SqlClient.SqlClient.use((sql) => sql`INSERT INTO users (user_uuid, org_uuid, email, password_hash, role)
                     VALUES (${uniqueId("u")}, ${orgUuid}, 'x@example.com', 'h', 'superuser')`
      )
    )
    expect(reasonOf(badRole)).toEqual({ _tag: "ConstraintError" })
    const missingTable = await runExit(
      SqlClient.SqlClient.use((sql) => sql`SELECT * FROM no_such_table`)
    )
    expect(reasonOf(missingTable)).toEqual({ _tag: "SqlSyntaxError" })
  })

  it("keeps e-mail unique among active users, case-insensitively", async () => {
    const orgUuid = uniqueId("org")
    const email = `${uniqueId("person")}@example.com`
    const addUser = (userUuid: string, address: string) =>
      SqlClient.SqlClient.use((sql) => sql`INSERT INTO users (user_uuid, org_uuid, email, password_hash, role)
                     VALUES (${userUuid}, ${orgUuid}, ${address}, 'h', 'member')`
      )
    await run(SqlClient.SqlClient.use((sql) => insertOrg(sql, orgUuid)))
    await run(addUser(orgUuid + "_a", email))
    expect(reasonOf(await runExit(addUser(orgUuid + "_b", email.toUpperCase())))).toEqual({
      _tag: "UniqueViolation",
      constraint: "users_active_email_key"
    })
    await run(
      SqlClient.SqlClient.use((sql) => sql`UPDATE users SET deactivated_at = now() WHERE user_uuid = ${orgUuid + "_a"}`
      )
    )
    await run(addUser(orgUuid + "_b", email.toUpperCase()))
    // Deleting the organization takes its users and keys with it; audit entries stay.
    await run(
      SqlClient.SqlClient.use((sql) =>
        Effect.gen(function* () {
          yield* sql`INSERT INTO audit_log (org_uuid, actor, event) VALUES (${orgUuid}, 'platform', 'org.deleted')`
          yield* sql`DELETE FROM organizations WHERE org_uuid = ${orgUuid}`
        })
      )
    )
    const left = await run(
      SqlClient.SqlClient.use((sql) => sql`SELECT (SELECT count(*) FROM users WHERE org_uuid = ${orgUuid}) AS users,
                            (SELECT count(*) FROM audit_log WHERE org_uuid = ${orgUuid}) AS audit`
      )
    )
    expect(left).toEqual([{ users: 0n, audit: 1n }])
  })
})

describe("embedded PostgreSQL", () => {
  it("keeps data and migration state under DATA_DIR/pg across restarts, and refuses a second opener", async () => {
    setLogLevel((process.env.TEST_LOG_LEVEL as any) ?? "silent")
    const dataDir = mkdtempSync(join(tmpdir(), "gateway-db-"))
    // mkdtemp makes it 0700; the server may run as another user.
    chmodSync(dataDir, 0o755)
    try {
      const first = await openRuntime({ dataDir })
      expect((await first.runPromise(Effect.service(Database))).kind).toBe("embedded")
      const orgUuid = uniqueId("org")
      await first.runPromise(SqlClient.SqlClient.use((sql) => insertOrg(sql, orgUuid)))
      const password = join(dataDir, "pg", "password")
      expect(existsSync(password)).toBe(true)
      await expect(openRuntime({ dataDir })).rejects.toThrow(`${join(dataDir, "pg")} is in use by gateway process ${process.pid}`)
      await first.dispose()
      expect(existsSync(join(dataDir, "pg", "gateway.lock"))).toBe(false)
      // A lock left behind by a dead process does not block the next start.
      writeFileSync(join(dataDir, "pg", "gateway.lock"), "999999999")
      expect(existsSync(join(dataDir, "pg", "data", "PG_VERSION"))).toBe(true)

      const second = await openRuntime({ dataDir })
      const rows = await second.runPromise(
        SqlClient.SqlClient.use((sql) =>
          Effect.all([sql`SELECT org_uuid FROM organizations`, sql`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`])
        )
      )
      await second.dispose()
      expect(existsSync(join(dataDir, "pg", "gateway.lock"))).toBe(false)
      expect(existsSync(join(dataDir, "pg", "data", "postmaster.pid"))).toBe(false)
      expect(rows).toEqual([[{ org_uuid: orgUuid }], registered])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe("Postgres configuration", () => {
  it("fails at start with a clear message when DATABASE_URL is unreachable", async () => {
    const url = "postgres://app:s3cret-password@127.0.0.1:1/gateway"
    for (const ci of [false, true]) {
      const exit = await Effect.runPromiseExit(
        Effect.provide(Effect.void, databaseLayer({ url, dataDir: UNUSED_DATA_DIR, ci }))
      )
      expect(reasonOf(exit)).toEqual({ _tag: "ConnectionError" })
      const message = String(Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error: SqlError }).error.message : "")
      expect(message).toContain("127.0.0.1:1/gateway")
      expect(message).not.toContain("s3cret")
      expect(message).toContain(ci ? "CI=true" : "unset DATABASE_URL")
    }
  })

  it("describes a DATABASE_URL without its credentials", () => {
    expect(describePostgresUrl("postgres://u:p@db.internal/app")).toBe("db.internal:5432/app")
  })
})

describe("several processes on one database", () => {
  it("lets two processes start against one fresh database without running migrations twice", async () => {
    const fresh = await freshDatabaseUrl()
    const starts = await Promise.allSettled(
      [0, 1, 2].map(() => openRuntime({ url: fresh.url, dataDir: UNUSED_DATA_DIR, maxConnections: 2 }))
    )
    try {
      expect(starts.map((start) => start.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"])
      const runtime = (starts[0] as PromiseFulfilledResult<Runtime>).value
      const recorded = await runtime.runPromise(
        SqlClient.SqlClient.use((sql) => sql`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`)
      )
      expect(recorded).toEqual(registered)
    } finally {
      for (const start of starts) if (start.status === "fulfilled") await start.value.dispose()
      await fresh.drop()
    }
  })
})

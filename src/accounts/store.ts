/**
 * SQL for organizations, users, keys, invites and the audit log.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import type { Role } from "../../protocol/auth.js"
import { jsonb } from "../platform/db/index.js"
import { count, iso, isoRequired, jsonValue, offset, organizationTables } from "../platform/sql.js"

export interface UserRow {
  readonly user_uuid: string
  readonly org_uuid: string
  readonly email: string
  readonly name: string | null
  readonly password_hash: string
  readonly role: Role
  readonly created_at: string
  readonly deactivated_at: string | null
}

export interface KeyRow {
  readonly id: string
  readonly org_uuid: string
  readonly user_uuid: string | null
  readonly name: string
  readonly key_prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
  readonly expires_at: string | null
  readonly revoked_at: string | null
  readonly last_used_at: string | null
}

/** A key together with its creator, as authentication needs it. */
export interface KeyPrincipalRow extends KeyRow {
  readonly key_hash: string
  readonly role: Role
  readonly email: string
  readonly user_active: boolean
}

const toUser = (row: any): UserRow => ({
  user_uuid: row.user_uuid,
  org_uuid: row.org_uuid,
  email: row.email,
  name: row.name ?? null,
  password_hash: row.password_hash,
  role: row.role,
  created_at: isoRequired(row.created_at),
  deactivated_at: iso(row.deactivated_at)
})

const toKey = (row: any): KeyRow => ({
  id: row.id,
  org_uuid: row.org_uuid,
  user_uuid: row.user_uuid ?? null,
  name: row.name,
  key_prefix: row.key_prefix,
  scopes: jsonValue<string[]>(row.scopes, ["*"]),
  created_at: isoRequired(row.created_at),
  expires_at: iso(row.expires_at),
  revoked_at: iso(row.revoked_at),
  last_used_at: iso(row.last_used_at)
})

export const makeAccountsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient


  const audit = (entry: {
    orgUuid: string | null
    actor: string
    event: string
    target?: string | null
    details?: Record<string, unknown>
    requestId?: string | null
  }) =>
    sql`INSERT INTO audit_log (org_uuid, actor, event, target, details, request_id)
        VALUES (${entry.orgUuid}, ${entry.actor}, ${entry.event}, ${entry.target ?? null}, ${jsonb(entry.details ?? {})}, ${entry.requestId ?? null})`.pipe(
      Effect.asVoid
    )

  return {
    sql,
    audit,

    createOrganization: (org: { orgUuid: string; name: string; slug: string; plan: string }) =>
      sql`INSERT INTO organizations (org_uuid, name, slug, plan) VALUES (${org.orgUuid}, ${org.name}, ${org.slug}, ${org.plan})`.pipe(Effect.asVoid),

    organization: (orgUuid: string) =>
      sql`SELECT org_uuid, name, slug, plan, default_approvers, created_at FROM organizations WHERE org_uuid = ${orgUuid}`.pipe(
        Effect.map((rows: ReadonlyArray<any>) =>
          rows[0]
            ? {
                org_uuid: rows[0].org_uuid as string,
                name: rows[0].name as string,
                slug: rows[0].slug as string,
                plan: rows[0].plan as string,
                default_approvers: jsonValue<string[]>(rows[0].default_approvers, []),
                created_at: isoRequired(rows[0].created_at)
              }
            : undefined
        )
      ),

    setPlan: (orgUuid: string, plan: string) =>
      sql`UPDATE organizations SET plan = ${plan} WHERE org_uuid = ${orgUuid} RETURNING org_uuid`.pipe(Effect.map((rows) => rows.length > 0)),

    setDefaultApprovers: (orgUuid: string, emails: ReadonlyArray<string>) =>
      sql`UPDATE organizations SET default_approvers = ${jsonb(emails)} WHERE org_uuid = ${orgUuid}`.pipe(Effect.asVoid),

    createUser: (user: { userUuid: string; orgUuid: string; email: string; name: string | null; passwordHash: string; role: Role }) =>
      sql`INSERT INTO users (user_uuid, org_uuid, email, name, password_hash, role)
          VALUES (${user.userUuid}, ${user.orgUuid}, ${user.email}, ${user.name}, ${user.passwordHash}, ${user.role})
          RETURNING created_at`.pipe(Effect.map((rows: ReadonlyArray<any>) => isoRequired(rows[0]?.created_at))),

    activeUserByEmail: (email: string) =>
      sql`SELECT * FROM users WHERE lower(email) = lower(${email}) AND deactivated_at IS NULL`.pipe(
        Effect.map((rows) => (rows[0] ? toUser(rows[0]) : undefined))
      ),

    user: (userUuid: string) =>
      sql`SELECT * FROM users WHERE user_uuid = ${userUuid}`.pipe(Effect.map((rows) => (rows[0] ? toUser(rows[0]) : undefined))),

    userInOrg: (orgUuid: string, userUuid: string) =>
      sql`SELECT * FROM users WHERE user_uuid = ${userUuid} AND org_uuid = ${orgUuid} AND deactivated_at IS NULL`.pipe(
        Effect.map((rows) => (rows[0] ? toUser(rows[0]) : undefined))
      ),

    members: (orgUuid: string, page: number, perPage: number) =>
      Effect.all([
        sql`SELECT * FROM users WHERE org_uuid = ${orgUuid} AND deactivated_at IS NULL
            ORDER BY created_at, user_uuid LIMIT ${perPage} OFFSET ${offset(page, perPage)}`.pipe(Effect.map((rows) => rows.map(toUser))),
        sql`SELECT count(*) AS n FROM users WHERE org_uuid = ${orgUuid} AND deactivated_at IS NULL`.pipe(
          Effect.map((rows: ReadonlyArray<any>) => count(rows[0]?.n))
        )
      ]),

    setRole: (orgUuid: string, userUuid: string, role: Role) =>
      sql`UPDATE users SET role = ${role} WHERE org_uuid = ${orgUuid} AND user_uuid = ${userUuid} AND deactivated_at IS NULL RETURNING *`.pipe(
        Effect.map((rows) => (rows[0] ? toUser(rows[0]) : undefined))
      ),

    /** Leaving: personal data replaced, password unusable, account deactivated, keys revoked. */
    anonymizeAndDeactivate: (userUuid: string) =>
      Effect.all([
        sql`UPDATE users SET email = ${`deleted+${userUuid}@invalid`}, name = NULL, password_hash = '!', deactivated_at = now()
            WHERE user_uuid = ${userUuid}`,
        sql`UPDATE api_keys SET revoked_at = now() WHERE user_uuid = ${userUuid} AND revoked_at IS NULL`
      ]).pipe(Effect.asVoid),

    /** Every row that names the organization, in every table, so a table added later cannot be forgotten. */
    deleteOrganization: (orgUuid: string) =>
      Effect.gen(function* () {
        for (const table of yield* organizationTables(sql)) yield* sql`DELETE FROM ${sql(table)} WHERE org_uuid = ${orgUuid}`
        yield* sql`DELETE FROM organizations WHERE org_uuid = ${orgUuid}`
      }),

    createKey: (key: {
      id: string
      orgUuid: string
      userUuid: string
      name: string
      prefix: string
      digest: string
      scopes: ReadonlyArray<string>
      expiresAt: string | null
    }) =>
      sql`INSERT INTO api_keys (id, org_uuid, user_uuid, name, key_prefix, key_hash, scopes, expires_at)
          VALUES (${key.id}, ${key.orgUuid}, ${key.userUuid}, ${key.name}, ${key.prefix}, ${key.digest}, ${jsonb(key.scopes)}, ${key.expiresAt})
          RETURNING *`.pipe(Effect.map((rows) => toKey(rows[0]))),

    keys: (orgUuid: string, page: number, perPage: number) =>
      Effect.all([
        sql`SELECT * FROM api_keys WHERE org_uuid = ${orgUuid} ORDER BY created_at DESC, id LIMIT ${perPage} OFFSET ${offset(page, perPage)}`.pipe(
          Effect.map((rows) => rows.map(toKey))
        ),
        sql`SELECT count(*) AS n FROM api_keys WHERE org_uuid = ${orgUuid}`.pipe(Effect.map((rows: ReadonlyArray<any>) => count(rows[0]?.n)))
      ]),

    keyInOrg: (orgUuid: string, keyId: string) =>
      sql`SELECT * FROM api_keys WHERE org_uuid = ${orgUuid} AND id = ${keyId}`.pipe(Effect.map((rows) => (rows[0] ? toKey(rows[0]) : undefined))),

    revokeKey: (orgUuid: string, keyId: string) =>
      sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE org_uuid = ${orgUuid} AND id = ${keyId}
          RETURNING id, revoked_at, key_hash`.pipe(
        Effect.map((rows: ReadonlyArray<any>) => (rows[0] ? { id: rows[0].id as string, revoked_at: isoRequired(rows[0].revoked_at), digest: rows[0].key_hash as string } : undefined))
      ),

    keyByDigest: (digest: string) =>
      sql`SELECT k.*, u.role, u.email, (u.deactivated_at IS NULL) AS user_active
          FROM api_keys k JOIN users u ON u.user_uuid = k.user_uuid
          WHERE k.key_hash = ${digest}`.pipe(
        Effect.map((rows: ReadonlyArray<any>) =>
          rows[0] ? ({ ...toKey(rows[0]), key_hash: rows[0].key_hash, role: rows[0].role, email: rows[0].email, user_active: Boolean(rows[0].user_active) } as KeyPrincipalRow) : undefined
        )
      ),

    /** One statement for every key used since the last flush. */
    touchKeys: (usage: ReadonlyArray<readonly [keyId: string, at: string]>) =>
      usage.length === 0
        ? Effect.void
        : sql`UPDATE api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.at), u.at)
              FROM (SELECT (e->>0) AS id, (e->>1)::timestamptz AS at FROM jsonb_array_elements(${jsonb(usage)}) AS e) AS u
              WHERE k.id = u.id`.pipe(Effect.asVoid),

    createInvite: (invite: { codeHash: string; orgUuid: string; email: string; role: Role; createdBy: string; expiresAt: string }) =>
      sql`INSERT INTO invites (code_hash, org_uuid, email, role, created_by, expires_at)
          VALUES (${invite.codeHash}, ${invite.orgUuid}, ${invite.email}, ${invite.role}, ${invite.createdBy}, ${invite.expiresAt})`.pipe(Effect.asVoid),

    /** Marks an open invite accepted and returns it; undefined when unknown, used, expired or for another address. */
    acceptInvite: (codeHash: string, email: string) =>
      sql`UPDATE invites SET accepted_at = now()
          WHERE code_hash = ${codeHash} AND accepted_at IS NULL AND expires_at > now() AND lower(email) = lower(${email})
          RETURNING org_uuid, role, code_hash`.pipe(
        Effect.map((rows: ReadonlyArray<any>) =>
          rows[0] ? { orgUuid: rows[0].org_uuid as string, role: rows[0].role as Role, codeHash: rows[0].code_hash as string } : undefined
        )
      ),

    /** Invites whose code is still stored in plain text (written before codes were hashed). */
    plaintextInviteCodes: sql`SELECT invite_code FROM invites WHERE invite_code IS NOT NULL`.pipe(
      Effect.map((rows: ReadonlyArray<any>) => rows.map((row) => row.invite_code as string))
    ),

    /** Replaces a stored plaintext code by its hash. */
    sealInvite: (code: string, codeHash: string) =>
      sql`UPDATE invites SET code_hash = ${codeHash}, invite_code = NULL WHERE invite_code = ${code}`.pipe(Effect.asVoid)
  }
})

export type AccountsStore = Effect.Success<typeof makeAccountsStore>

/**
 * SQL for organizations, users, keys, invites and the audit log.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Roles } from "../../protocol/accounts.js"
import type { Role } from "../../protocol/auth.js"
import { KeyRow, makeCredentialsStore, UserRow } from "../access/store.js"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Count, Json, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { isUniqueViolation, sqlDefects } from "../platform/db/store.js"
import { offset, organizationTables } from "../platform/sql.js"

const Organization = Schema.Struct({
  org_uuid: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  plan: Schema.String,
  default_approvers: Json(Schema.Array(Schema.String)),
  created_at: Timestamp
})

const RoleColumn = Schema.Literals(Roles)
const Paged = Schema.Struct({ orgUuid: Schema.String, page: Schema.Number, perPage: Schema.Number })
const Total = Schema.Struct({ n: Count })
const InOrg = Schema.Struct({ orgUuid: Schema.String, keyId: Schema.String })
const RevokedKey = Schema.Struct({ id: Schema.String, revoked_at: Timestamp, key_hash: Schema.String })
const AcceptedInvite = Schema.Struct({ org_uuid: Schema.String, role: RoleColumn, code_hash: Schema.String })
const Strings = Schema.Array(Schema.String)

const NewUser = Schema.Struct({
  userUuid: Schema.String,
  orgUuid: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  passwordHash: Schema.String,
  role: RoleColumn
})

const NewKey = Schema.Struct({
  id: Schema.String,
  orgUuid: Schema.String,
  userUuid: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  digest: Schema.String,
  scopes: Strings,
  expiresAt: Schema.NullOr(Schema.String)
})

const NewInvite = Schema.Struct({
  codeHash: Schema.String,
  orgUuid: Schema.String,
  email: Schema.String,
  role: RoleColumn,
  createdBy: Schema.String,
  expiresAt: Schema.String
})

export const makeAccountsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const credentials = yield* makeCredentialsStore
  const one = <A, E, R>(effect: Effect.Effect<Option.Option<A>, E, R>) => Effect.map(effect, Option.getOrUndefined)
  // COUNT(*) always answers one row.
  const total = <E, R>(effect: Effect.Effect<{ readonly n: number }, E, R>) => Effect.map(Effect.orDie(effect), (row) => row.n)

  const createOrganization = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, name: Schema.String, slug: Schema.String, plan: Schema.String }),
    execute: (org) => sql`INSERT INTO organizations (org_uuid, name, slug, plan) VALUES (${org.orgUuid}, ${org.name}, ${org.slug}, ${org.plan})`
  })
  const organization = Rows.findOneOption({
    Request: Schema.String,
    Result: Organization,
    execute: (orgUuid) => sql`SELECT org_uuid, name, slug, plan, default_approvers, created_at FROM organizations WHERE org_uuid = ${orgUuid}`
  })
  const setPlan = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, plan: Schema.String }),
    Result: Schema.Struct({ org_uuid: Schema.String }),
    execute: ({ orgUuid, plan }) => sql`UPDATE organizations SET plan = ${plan} WHERE org_uuid = ${orgUuid} RETURNING org_uuid`
  })
  const setDefaultApprovers = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, emails: Strings }),
    execute: ({ orgUuid, emails }) => sql`UPDATE organizations SET default_approvers = ${jsonb(emails)} WHERE org_uuid = ${orgUuid}`
  })
  const createUser = Rows.void({
    Request: NewUser,
    execute: (user) =>
      sql`INSERT INTO users (user_uuid, org_uuid, email, name, password_hash, role)
          VALUES (${user.userUuid}, ${user.orgUuid}, ${user.email}, ${user.name}, ${user.passwordHash}, ${user.role})`
  })
  const activeUserByEmail = Rows.findOneOption({
    Request: Schema.String,
    Result: UserRow,
    execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email}) AND deactivated_at IS NULL`
  })
  const members = Rows.findAll({
    Request: Paged,
    Result: UserRow,
    execute: ({ orgUuid, page, perPage }) =>
      sql`SELECT * FROM users WHERE org_uuid = ${orgUuid} AND deactivated_at IS NULL
          ORDER BY created_at, user_uuid LIMIT ${perPage} OFFSET ${offset(page, perPage)}`
  })
  const memberCount = Rows.findOne({
    Request: Schema.String,
    Result: Total,
    execute: (orgUuid) => sql`SELECT count(*) AS n FROM users WHERE org_uuid = ${orgUuid} AND deactivated_at IS NULL`
  })
  const setRole = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, userUuid: Schema.String, role: RoleColumn }),
    Result: UserRow,
    execute: ({ orgUuid, userUuid, role }) =>
      sql`UPDATE users SET role = ${role} WHERE org_uuid = ${orgUuid} AND user_uuid = ${userUuid} AND deactivated_at IS NULL RETURNING *`
  })
  const anonymizeUser = Rows.void({
    Request: Schema.String,
    execute: (userUuid) =>
      sql`UPDATE users SET email = ${`deleted+${userUuid}@invalid`}, name = NULL, password_hash = '!', deactivated_at = now()
          WHERE user_uuid = ${userUuid}`
  })
  const revokeUserKeys = Rows.void({
    Request: Schema.String,
    execute: (userUuid) => sql`UPDATE api_keys SET revoked_at = now() WHERE user_uuid = ${userUuid} AND revoked_at IS NULL`
  })
  const deleteOrgRows = Rows.void({
    Request: Schema.Struct({ table: Schema.String, orgUuid: Schema.String }),
    execute: ({ table, orgUuid }) => sql`DELETE FROM ${sql(table)} WHERE org_uuid = ${orgUuid}`
  })
  const deleteOrg = Rows.void({
    Request: Schema.String,
    execute: (orgUuid) => sql`DELETE FROM organizations WHERE org_uuid = ${orgUuid}`
  })
  const createKey = Rows.findOne({
    Request: NewKey,
    Result: KeyRow,
    execute: (key) =>
      sql`INSERT INTO api_keys (id, org_uuid, user_uuid, name, key_prefix, key_hash, scopes, expires_at)
          VALUES (${key.id}, ${key.orgUuid}, ${key.userUuid}, ${key.name}, ${key.prefix}, ${key.digest}, ${jsonb(key.scopes)}, ${key.expiresAt})
          RETURNING *`
  })
  const keys = Rows.findAll({
    Request: Paged,
    Result: KeyRow,
    execute: ({ orgUuid, page, perPage }) =>
      sql`SELECT * FROM api_keys WHERE org_uuid = ${orgUuid} ORDER BY created_at DESC, id LIMIT ${perPage} OFFSET ${offset(page, perPage)}`
  })
  const keyCount = Rows.findOne({
    Request: Schema.String,
    Result: Total,
    execute: (orgUuid) => sql`SELECT count(*) AS n FROM api_keys WHERE org_uuid = ${orgUuid}`
  })
  const keyInOrg = Rows.findOneOption({
    Request: InOrg,
    Result: KeyRow,
    execute: ({ orgUuid, keyId }) => sql`SELECT * FROM api_keys WHERE org_uuid = ${orgUuid} AND id = ${keyId}`
  })
  const revokeKey = Rows.findOneOption({
    Request: InOrg,
    Result: RevokedKey,
    execute: ({ orgUuid, keyId }) =>
      sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE org_uuid = ${orgUuid} AND id = ${keyId}
          RETURNING id, revoked_at, key_hash`
  })
  const createInvite = Rows.void({
    Request: NewInvite,
    execute: (invite) =>
      sql`INSERT INTO invites (code_hash, org_uuid, email, role, created_by, expires_at)
          VALUES (${invite.codeHash}, ${invite.orgUuid}, ${invite.email}, ${invite.role}, ${invite.createdBy}, ${invite.expiresAt})`
  })
  const acceptInvite = Rows.findOneOption({
    Request: Schema.Struct({ codeHash: Schema.String, email: Schema.String }),
    Result: AcceptedInvite,
    execute: ({ codeHash, email }) =>
      sql`UPDATE invites SET accepted_at = now()
          WHERE code_hash = ${codeHash} AND accepted_at IS NULL AND expires_at > now() AND lower(email) = lower(${email})
          RETURNING org_uuid, role, code_hash`
  })
  const plaintextInviteCodes = Rows.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ invite_code: Schema.String }),
    execute: () => sql`SELECT invite_code FROM invites WHERE invite_code IS NOT NULL`
  })
  const sealInvite = Rows.void({
    Request: Schema.Struct({ code: Schema.String, codeHash: Schema.String }),
    execute: ({ code, codeHash }) => sql`UPDATE invites SET code_hash = ${codeHash}, invite_code = NULL WHERE invite_code = ${code}`
  })

  const audit = (entry: AuditEntry) => insertAudit(sql, entry)

  return sqlDefects({
    sql,
    audit,

    createOrganization: (org: { orgUuid: string; name: string; slug: string; plan: string }) => createOrganization(org),

    organization: (orgUuid: string) => one(organization(orgUuid)),

    /** Whether the organization exists. */
    setPlan: (orgUuid: string, plan: string) => Effect.map(setPlan({ orgUuid, plan }), Option.isSome),

    setDefaultApprovers: (orgUuid: string, emails: ReadonlyArray<string>) => setDefaultApprovers({ orgUuid, emails }),

    /** False when an active user already has this e-mail (the caller's transaction must then roll back). */
    createUser: (user: { userUuid: string; orgUuid: string; email: string; name: string | null; passwordHash: string; role: Role }) =>
      createUser(user).pipe(
        Effect.as(true),
        Effect.catchIf(isUniqueViolation, () => Effect.succeed(false))
      ),

    activeUserByEmail: (email: string) => one(activeUserByEmail(email)),

    userInOrg: credentials.userInOrg,

    members: (orgUuid: string, page: number, perPage: number) =>
      Effect.all([members({ orgUuid, page, perPage }), total(memberCount(orgUuid))]),

    setRole: (orgUuid: string, userUuid: string, role: Role) => one(setRole({ orgUuid, userUuid, role })),

    /** Ownership handed to `to` (who was an admin), the previous owner `from` made an admin, in one transaction. */
    transferOwnership: (orgUuid: string, from: string, to: string, entry: AuditEntry) =>
      sql.withTransaction(
        Effect.all([setRole({ orgUuid, userUuid: to, role: "owner" }), setRole({ orgUuid, userUuid: from, role: "admin" }), audit(entry)], {
          discard: true
        })
      ),

    /** Leaving: personal data replaced, password unusable, account deactivated, keys revoked. */
    anonymizeAndDeactivate: (userUuid: string, entry: AuditEntry) =>
      sql.withTransaction(Effect.all([anonymizeUser(userUuid), revokeUserKeys(userUuid), audit(entry)], { discard: true })),

    /** Every row that names the organization, in every table, so a table added later cannot be forgotten. */
    deleteOrganization: (orgUuid: string, entry: AuditEntry) =>
      sql.withTransaction(
        Effect.gen(function* () {
          for (const table of yield* organizationTables(sql)) yield* deleteOrgRows({ table, orgUuid })
          yield* deleteOrg(orgUuid)
          yield* audit(entry)
        })
      ),

    // INSERT … RETURNING always answers the row.
    createKey: (key: typeof NewKey.Type) => Effect.orDie(createKey(key)),

    keys: (orgUuid: string, page: number, perPage: number) => Effect.all([keys({ orgUuid, page, perPage }), total(keyCount(orgUuid))]),

    keyInOrg: (orgUuid: string, keyId: string) => one(keyInOrg({ orgUuid, keyId })),

    revokeKey: (orgUuid: string, keyId: string) =>
      Effect.map(one(revokeKey({ orgUuid, keyId })), (row) => row && { id: row.id, revoked_at: row.revoked_at, digest: row.key_hash }),

    createInvite: (invite: typeof NewInvite.Type) => createInvite(invite),

    /** Marks an open invite accepted and returns it; undefined when unknown, used, expired or for another address. */
    acceptInvite: (codeHash: string, email: string) =>
      Effect.map(one(acceptInvite({ codeHash, email })), (row) => row && { orgUuid: row.org_uuid, role: row.role, codeHash: row.code_hash }),

    /** Invites whose code is still stored in plain text (written before codes were hashed). */
    plaintextInviteCodes: Effect.map(plaintextInviteCodes(undefined), (rows) => rows.map((row) => row.invite_code)),

    /** Replaces a stored plaintext code by its hash. */
    sealInvite: (code: string, codeHash: string) => sealInvite({ code, codeHash })
  })
})

export type AccountsStore = Effect.Success<typeof makeAccountsStore>

/** SQL for model preferences (one row per organization, created on the first change). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Json } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"

export type Feature = "cases" | "policy" | "sanitize" | "code_review"

const PreferencesRow = Schema.Struct({
  disabled: Json(Schema.Record(Schema.String, Schema.Array(Schema.String)), {}),
  chat_default: Schema.NullOr(Schema.String),
  chat_allowed: Json(Schema.NullOr(Schema.Array(Schema.String)), null),
  code_review_default: Schema.NullOr(Schema.String)
})
export type PreferencesRow = typeof PreferencesRow.Type

const NONE: PreferencesRow = { disabled: {}, chat_default: null, chat_allowed: null, code_review_default: null }

export const makeModelsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const find = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: PreferencesRow,
    execute: (orgUuid) => sql`SELECT disabled, chat_default, chat_allowed, code_review_default FROM model_preferences WHERE org_uuid = ${orgUuid}`
  })

  /** Upserts the organization's row with `set` applied; answers the row after. */
  const change = (orgUuid: string, set: Statement.Fragment) =>
    sql`INSERT INTO model_preferences (org_uuid) VALUES (${orgUuid}) ON CONFLICT (org_uuid) DO NOTHING`.pipe(
      Effect.andThen(sql`UPDATE model_preferences SET ${set}, updated_at = now() WHERE org_uuid = ${orgUuid}`),
      Effect.andThen(Effect.map(find(orgUuid), Option.getOrElse(() => NONE)))
    )

  return {
    get: (orgUuid: string) => Effect.map(find(orgUuid), Option.getOrElse(() => NONE)),
    setDisabled: (orgUuid: string, feature: Feature, ids: ReadonlyArray<string>) =>
      change(orgUuid, sql`disabled = jsonb_set(disabled, ${[feature]}::text[], ${jsonb(ids)})`),
    setChatDefault: (orgUuid: string, id: string) => change(orgUuid, sql`chat_default = ${id}`),
    setChatAllowed: (orgUuid: string, ids: ReadonlyArray<string> | null) => change(orgUuid, sql`chat_allowed = ${ids === null ? null : jsonb(ids)}`),
    setCodeReview: (orgUuid: string, defaultModel: string | null | undefined, disabled: ReadonlyArray<string> | undefined) =>
      change(
        orgUuid,
        sql`code_review_default = ${defaultModel === undefined ? sql`code_review_default` : defaultModel},
            disabled = ${disabled === undefined ? sql`disabled` : sql`jsonb_set(disabled, '{code_review}', ${jsonb(disabled)})`}`
      )
  }
})

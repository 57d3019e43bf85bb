/** SQL for model preferences (one row per organization, created on the first change). */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Json, NullableJson } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

export const Features = ["cases", "policy", "sanitize", "code_review"] as const
export type Feature = (typeof Features)[number]

const ModelIdList = Schema.Array(Schema.String)

const PreferencesRow = Schema.Struct({
  disabled: Json(Schema.Record(Schema.String, ModelIdList)),
  chat_default: Schema.NullOr(Schema.String),
  chat_allowed: NullableJson(ModelIdList),
  code_review_default: Schema.NullOr(Schema.String)
})
export type PreferencesRow = typeof PreferencesRow.Type

/** An organization that never changed anything. */
const NONE: PreferencesRow = { disabled: {}, chat_default: null, chat_allowed: null, code_review_default: null }

export const makeModelsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const returning = sql.literal("RETURNING disabled, chat_default, chat_allowed, code_review_default")

  const find = Rows.findOneOption({
    Request: Schema.String,
    Result: PreferencesRow,
    execute: (orgUuid) => sql`SELECT disabled, chat_default, chat_allowed, code_review_default FROM model_preferences WHERE org_uuid = ${orgUuid}`
  })

  const ensureRow = Rows.void({
    Request: Schema.String,
    execute: (orgUuid) => sql`INSERT INTO model_preferences (org_uuid) VALUES (${orgUuid}) ON CONFLICT (org_uuid) DO NOTHING`
  })

  // Each change runs after `ensureRow`, so its UPDATE always finds the row it returns.
  const updateDisabled = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, feature: Schema.Literals(Features), ids: ModelIdList }),
    Result: PreferencesRow,
    execute: ({ orgUuid, feature, ids }) =>
      sql`UPDATE model_preferences SET disabled = jsonb_set(disabled, ${[feature]}::text[], ${jsonb(ids)}), updated_at = now()
          WHERE org_uuid = ${orgUuid} ${returning}`
  })
  const updateChatDefault = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String }),
    Result: PreferencesRow,
    execute: ({ orgUuid, id }) => sql`UPDATE model_preferences SET chat_default = ${id}, updated_at = now() WHERE org_uuid = ${orgUuid} ${returning}`
  })
  const updateChatAllowed = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, ids: Schema.NullOr(ModelIdList) }),
    Result: PreferencesRow,
    execute: ({ orgUuid, ids }) =>
      sql`UPDATE model_preferences SET chat_allowed = ${ids === null ? null : jsonb(ids)}, updated_at = now() WHERE org_uuid = ${orgUuid} ${returning}`
  })
  const updateCodeReview = Rows.findOne({
    Request: Schema.Struct({
      orgUuid: Schema.String,
      defaultModel: Schema.UndefinedOr(Schema.NullOr(Schema.String)),
      disabled: Schema.UndefinedOr(ModelIdList)
    }),
    Result: PreferencesRow,
    execute: ({ orgUuid, defaultModel, disabled }) =>
      sql`UPDATE model_preferences
          SET code_review_default = ${defaultModel === undefined ? sql`code_review_default` : defaultModel},
              disabled = ${disabled === undefined ? sql`disabled` : sql`jsonb_set(disabled, '{code_review}', ${jsonb(disabled)})`},
              updated_at = now()
          WHERE org_uuid = ${orgUuid} ${returning}`
  })

  /** Creates the organization's row if needed, then applies `update`; answers the row after (there always is one). */
  const change = <E>(orgUuid: string, update: Effect.Effect<PreferencesRow, E | Cause.NoSuchElementError>) =>
    Effect.andThen(ensureRow(orgUuid), Effect.catchTag(update, "NoSuchElementError", Effect.die))

  return sqlDefects({
    get: (orgUuid: string) => Effect.map(find(orgUuid), Option.getOrElse(() => NONE)),
    setDisabled: (orgUuid: string, feature: Feature, ids: ReadonlyArray<string>) => change(orgUuid, updateDisabled({ orgUuid, feature, ids })),
    setChatDefault: (orgUuid: string, id: string) => change(orgUuid, updateChatDefault({ orgUuid, id })),
    setChatAllowed: (orgUuid: string, ids: ReadonlyArray<string> | null) => change(orgUuid, updateChatAllowed({ orgUuid, ids })),
    setCodeReview: (orgUuid: string, defaultModel: string | null | undefined, disabled: ReadonlyArray<string> | undefined) =>
      change(orgUuid, updateCodeReview({ orgUuid, defaultModel, disabled }))
  })
})

export type ModelsStore = Effect.Success<typeof makeModelsStore>

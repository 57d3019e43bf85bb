/**
 * What every part of the actions service shares: its dependencies, its transactions, the
 * live-channel announcements and the road to the agent's actor.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SqlClient, SqlError } from "effect/sql"
import { type DomainEvent, Events } from "../events/service.js"
import { Config } from "../platform/config.js"
import { sha256Tagged } from "../platform/digest.js"
import { Secrets } from "../platform/secrets.js"
import type { TransitionDone, TransitionRequest } from "./agent-messages.js"
import { approvalNotificationItem, reviewUrl } from "./approvals.js"
import { ActionCommits, type CommitUnit } from "./commits.js"
import { ActionObserver, AgentMailbox, type RecordedAction } from "./ports.js"
import { makeActionsStore } from "./store.js"

export const sha256Text = (text: string): string => sha256Tagged(text)

interface Announced {
  readonly org_uuid: string
  readonly action_uuid: string
  readonly action_type: string
  readonly agent_id: string | null
}

export const makeActionsContext = Effect.gen(function* () {
  const config = yield* Config
  const secrets = yield* Secrets
  const events = yield* Events
  const mailbox = yield* AgentMailbox
  const observer = Option.getOrUndefined(yield* Effect.serviceOption(ActionObserver))
  const store = yield* makeActionsStore
  const sql = store.sql
  const commits = yield* ActionCommits

  /**
   * A transaction of the area's statements (store failures are defects already; BEGIN or COMMIT
   * failing is one too), with our SqlClient in scope for the events it records.
   */
  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    sql.withTransaction(effect).pipe(
      Effect.catchIf(SqlError.isSqlError, (error) => Effect.die(error)),
      Effect.provideService(SqlClient.SqlClient, sql)
    ) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, Exclude<R, SqlClient.SqlClient>>

  // The outbox insert fails only with the database, which `record` makes a defect.
  const record = (list: ReadonlyArray<DomainEvent>) => events.record(list)

  const announceStatus = (row: Announced, status: string, extra: Record<string, unknown> = {}) =>
    events.announce(row.org_uuid, "actions", {
      type: "action.status",
      action_uuid: row.action_uuid,
      action_type: row.action_type,
      agent_id: row.agent_id,
      status,
      ...extra
    })

  const announceNotification = (row: Announced & { readonly created_at: string }, state: "pending" | "resolved", status: string, expiresAt: string | null = null) => {
    const item = approvalNotificationItem(row, false)
    return events.announce(row.org_uuid, "notifications", {
      type: state === "pending" ? "notification.created" : "notification.resolved",
      ...(state === "pending" ? { event: "action.approval_requested" } : {}),
      id: item.id,
      notification_type: item.type,
      notification_key: item.notification_key,
      title: state === "pending" ? item.title : `Resolved: ${row.action_type}`,
      description: item.description,
      href: item.href,
      action_uuid: row.action_uuid,
      action_type: row.action_type,
      agent_id: row.agent_id,
      status,
      expires_at: expiresAt,
      review_url: reviewUrl(config.baseUrl, row.action_uuid),
      created_at: row.created_at
    })
  }

  /** Sends one terminal transition to the agent's actor; answers after its transaction committed. */
  const transition = (orgUuid: string, agentId: string | null, request: TransitionRequest) => mailbox.transition(orgUuid, agentId, request)

  /** A transition that must mint (notarize, policy denial): skipping it would be a bug. */
  const mint = (orgUuid: string, agentId: string | null, request: TransitionRequest) =>
    Effect.flatMap(transition(orgUuid, agentId, request), (result) =>
      result._tag === "Done" ? Effect.succeed<TransitionDone>(result) : Effect.die(new Error("a receipt-minting transition was skipped"))
    )

  /** Commits a unit through the process's commit pipeline; a failure is a defect (a new row has nothing to go stale). */
  const commit = (unit: CommitUnit) =>
    Effect.catch(commits.commit(unit), (failure) =>
      Effect.die(failure._tag === "Failed" ? Cause.squash(failure.cause) : new Error("a new action's commit reported a conflict"))
    )

  /** Tells the observer (drift's live counts) of an action whose row committed. */
  const observed = (action: RecordedAction) => (observer === undefined ? Effect.void : observer.recorded(action))

  return { config, secrets, store, sql, transaction, record, commit, announceStatus, announceNotification, transition, mint, observed }
})

export type ActionsContext = Effect.Success<typeof makeActionsContext>

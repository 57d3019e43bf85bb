/**
 * Code review and GitHub (CONTRACT-sdk-beyond §7): the organization's GitHub configuration and the
 * read of a pull request's latest review. The API token and the webhook secret are sealed with the
 * envelope under `github:{org}:<field>` and never answered; a generated webhook secret is answered
 * once, by the request that generated it. The reviews themselves are jobs.ts's.
 */
import { randomBytes } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import {
  type ActionReview,
  AUTO_MERGE_MODES,
  type AutoMerge,
  type GithubConfiguration,
  type GithubConfigurationUpdate,
  MERGE_METHODS,
  type PullRequestViolations,
  RepositoryTaken
} from "../../protocol/code-review.js"
import { pagination } from "../../protocol/common.js"
import { type NotFound, notFound } from "../../protocol/errors.js"
import { Flags } from "../flags/service.js"
import { ModelCalls } from "../models/calls.js"
import { Models } from "../models/service.js"
import { Config } from "../platform/config.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { checkUrl, Outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { type CodeReviewError, refuse } from "./errors.js"
import { makeReviewStore } from "./review-store.js"
import { type ConfigRow, makeCodeReviewStore, type StoredAutoMerge } from "./store.js"

export const AUTO_MERGE_FLAG = "github_auto_merge"
export const MAX_REPOSITORIES = 500
const GENERATED_SECRET_BYTES = 32

/** The envelope's additional data for a GitHub secret: bound to the organization and to the field. */
export const githubSecretAad = (orgUuid: string, field: "api_token" | "webhook_secret") => `github:${orgUuid}:${field}`

/** GitHub's names: an owner of 1-39 letters, digits and inner hyphens; a repository of 1-100 letters, digits, `.`, `-`, `_`. */
const REPOSITORY = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/
const isRepositoryName = (name: string) => REPOSITORY.test(name) && !/\/\.{1,2}$/.test(name)

const DEFAULT_AUTO_MERGE: AutoMerge = { enabled: false, mode: "single", merge_method: "squash", vote_models: [] }

const autoMergeOf = (stored: StoredAutoMerge | undefined): AutoMerge => ({
  enabled: stored?.enabled ?? DEFAULT_AUTO_MERGE.enabled,
  mode: (AUTO_MERGE_MODES as ReadonlyArray<string>).includes(stored?.mode ?? "") ? (stored!.mode as AutoMerge["mode"]) : DEFAULT_AUTO_MERGE.mode,
  merge_method: (MERGE_METHODS as ReadonlyArray<string>).includes(stored?.merge_method ?? "")
    ? (stored!.merge_method as AutoMerge["merge_method"])
    : DEFAULT_AUTO_MERGE.merge_method,
  vote_models: [...(stored?.vote_models ?? [])]
})

export interface AuditContext {
  readonly requestId: string | null
}

export interface PageRequest {
  readonly page: number
  readonly perPage: number
}

export interface CodeReviewService {
  readonly github: (principal: Principal) => Effect.Effect<GithubConfiguration>
  /** Fields sent change; `repositories` replaces the list. */
  readonly putGithub: (principal: Principal, input: GithubConfigurationUpdate, context: AuditContext) => Effect.Effect<GithubConfiguration, CodeReviewError>
  /** Removes the configuration and its repositories; answers the configuration as it now reads. */
  readonly deleteGithub: (principal: Principal, context: AuditContext) => Effect.Effect<GithubConfiguration>
  readonly violations: (principal: Principal, owner: string, repo: string, pullNumber: number, page: PageRequest) => Effect.Effect<PullRequestViolations>
  /** The review an action of the organization (a review's or a merge's) belongs to. */
  readonly actionReview: (principal: Principal, actionUuid: string) => Effect.Effect<ActionReview, NotFound>
}

export const makeCodeReview = Effect.gen(function* () {
  const config = yield* Config
  const { envelope } = yield* Secrets
  const policy = (yield* Outbound).policy
  const flags = yield* Flags
  const models = yield* Models
  const calls = yield* ModelCalls
  const store = yield* makeCodeReviewStore
  const reviews = yield* makeReviewStore
  const webhookUrl = `${config.baseUrl}/api/v1/webhooks/github`

  const view = (orgUuid: string, row: ConfigRow | undefined, repositories: ReadonlyArray<string>, generatedSecret: string | null) =>
    Effect.map(
      flags.isEnabled(orgUuid, AUTO_MERGE_FLAG),
      (flag): GithubConfiguration => ({
        configured: row !== undefined,
        webhook_url: webhookUrl,
        has_api_token: row?.api_token_sealed != null,
        has_webhook_secret: row !== undefined,
        webhook_secret: generatedSecret,
        api_base_url: row?.api_base_url ?? config.githubApiUrl,
        repositories: [...repositories],
        auto_merge: autoMergeOf(row?.auto_merge),
        auto_merge_flag: flag,
        updated_at: row?.updated_at ?? null
      })
    )

  const current = (orgUuid: string) =>
    Effect.gen(function* () {
      const row = yield* store.config(orgUuid)
      return { row, repositories: row === undefined ? [] : yield* store.repositories(orgUuid) }
    })

  const checkApiBaseUrl = (url: string, issues: Array<Issue>) => {
    const path = "api_base_url"
    if (url.length > 2_000) return void issues.push({ path, message: "must be at most 2,000 characters" })
    try {
      const checked = checkUrl(url, policy)
      if (checked.url.search !== "" || checked.url.hash !== "") issues.push({ path, message: "must not carry a query or a fragment" })
    } catch (error) {
      issues.push({ path, message: error instanceof Error ? error.message : "not an allowed URL" })
    }
  }

  const checkRepositories = (names: ReadonlyArray<string>, issues: Array<Issue>) => {
    if (names.length > MAX_REPOSITORIES) issues.push({ path: "repositories", message: `must list at most ${MAX_REPOSITORIES} repositories` })
    const seen = new Set<string>()
    names.forEach((name, index) => {
      const path = `repositories[${index}]`
      if (!isRepositoryName(name)) issues.push({ path, message: "must be owner/repo" })
      else if (seen.has(name.toLowerCase())) issues.push({ path, message: `${name} is listed twice (names are case-insensitive)` })
      seen.add(name.toLowerCase())
    })
  }

  /** 2-3 distinct models the organization can name and has not disabled for code review. */
  const checkVoteModels = Effect.fnUntraced(function* (principal: Principal, ids: ReadonlyArray<string>, issues: Array<Issue>) {
    const path = "auto_merge.vote_models"
    if (ids.length < 2 || ids.length > 3) issues.push({ path, message: "must name 2-3 models" })
    if (new Set(ids).size !== ids.length) issues.push({ path, message: "must not name a model twice" })
    const disabled = new Set((yield* models.codeReview(principal)).disabled_models)
    for (const id of new Set(ids)) {
      if (!(yield* calls.isKnown(principal.orgUuid, id))) issues.push({ path, message: `unknown model id: ${id}` })
      else if (disabled.has(id)) issues.push({ path, message: `${id} is disabled for code review` })
    }
  })

  const github = Effect.fn("CodeReview.github")(function* (principal: Principal) {
    const { row, repositories } = yield* current(principal.orgUuid)
    return yield* view(principal.orgUuid, row, repositories, null)
  })

  const putGithub = Effect.fn("CodeReview.putGithub")(function* (principal: Principal, input: GithubConfigurationUpdate, context: AuditContext) {
    const orgUuid = principal.orgUuid
    const { row } = yield* current(orgUuid)
    const issues: Array<Issue> = []

    if (input.api_token !== undefined && (input.api_token.length < 1 || input.api_token.length > 512 || /\s/.test(input.api_token))) {
      issues.push({ path: "api_token", message: "must be 1-512 characters without spaces or line breaks" })
    }
    if (input.webhook_secret !== undefined && (input.webhook_secret.length < 16 || input.webhook_secret.length > 256)) {
      issues.push({ path: "webhook_secret", message: "must be 16-256 characters" })
    }
    if (input.webhook_secret !== undefined && input.regenerate_webhook_secret === true) {
      issues.push({ path: "regenerate_webhook_secret", message: "cannot be combined with webhook_secret" })
    }
    const apiBaseUrl = typeof input.api_base_url === "string" ? input.api_base_url.replace(/\/+$/, "") : input.api_base_url
    if (typeof apiBaseUrl === "string") checkApiBaseUrl(apiBaseUrl, issues)
    const names = input.repositories?.map((name) => name.trim())
    if (names !== undefined) checkRepositories(names, issues)

    const was = autoMergeOf(row?.auto_merge)
    const asked = input.auto_merge ?? {}
    if (asked.mode !== undefined && !(AUTO_MERGE_MODES as ReadonlyArray<string>).includes(asked.mode)) {
      issues.push({ path: "auto_merge.mode", message: `must be ${AUTO_MERGE_MODES.join(" or ")}` })
    }
    if (asked.merge_method !== undefined && !(MERGE_METHODS as ReadonlyArray<string>).includes(asked.merge_method)) {
      issues.push({ path: "auto_merge.merge_method", message: `must be ${MERGE_METHODS.join(", ")}` })
    }
    const autoMerge: AutoMerge = {
      enabled: asked.enabled ?? was.enabled,
      mode: (asked.mode as AutoMerge["mode"] | undefined) ?? was.mode,
      merge_method: (asked.merge_method as AutoMerge["merge_method"] | undefined) ?? was.merge_method,
      vote_models: asked.vote_models === undefined ? was.vote_models : [...(asked.vote_models ?? [])]
    }
    // Models sent are checked whatever the mode; vote mode needs them.
    if (asked.vote_models != null && asked.vote_models.length > 0) yield* checkVoteModels(principal, asked.vote_models, issues)
    else if (autoMerge.mode === "vote" && autoMerge.vote_models.length === 0) {
      issues.push({ path: "auto_merge.vote_models", message: "2-3 models are required in vote mode" })
    }
    if (issues.length > 0) return yield* refuse(InvalidInput.of(issues))

    // A first configuration without a secret, or a regeneration, makes one and answers it once.
    const generated =
      input.regenerate_webhook_secret === true || (row === undefined && input.webhook_secret === undefined) ? randomBytes(GENERATED_SECRET_BYTES).toString("base64url") : null
    const newSecret = input.webhook_secret ?? generated
    const written = yield* store.replace(
      {
        orgUuid,
        apiTokenSealed: input.api_token === undefined ? (row?.api_token_sealed ?? null) : envelope.seal(input.api_token, githubSecretAad(orgUuid, "api_token")),
        webhookSecretSealed: newSecret === null ? row!.webhook_secret_sealed : envelope.seal(newSecret, githubSecretAad(orgUuid, "webhook_secret")),
        apiBaseUrl: apiBaseUrl === undefined ? (row?.api_base_url ?? null) : apiBaseUrl,
        autoMerge
      },
      names
    )
    if (written.taken !== undefined) return yield* refuse(RepositoryTaken.of(written.taken))

    // What changed, never a secret.
    yield* store.audit(
      principal,
      "code_review.github.configured",
      {
        ...(input.api_token !== undefined ? { api_token: "replaced" } : {}),
        ...(newSecret !== null ? { webhook_secret: generated !== null ? "generated" : "replaced" } : {}),
        ...(apiBaseUrl !== undefined ? { api_base_url: apiBaseUrl } : {}),
        ...(names !== undefined ? { repositories: names.length } : {}),
        ...(input.auto_merge !== undefined ? { auto_merge: autoMerge } : {})
      },
      context.requestId
    )
    const after = yield* current(orgUuid)
    return yield* view(orgUuid, after.row, after.repositories, generated)
  })

  const deleteGithub = Effect.fn("CodeReview.deleteGithub")(function* (principal: Principal, context: AuditContext) {
    if (yield* store.remove(principal.orgUuid)) yield* store.audit(principal, "code_review.github.removed", {}, context.requestId)
    return yield* view(principal.orgUuid, undefined, [], null)
  })

  const violations = Effect.fn("CodeReview.violations")(function* (principal: Principal, owner: string, repo: string, pullNumber: number, page: PageRequest) {
    const fullName = `${owner}/${repo}`
    const repositoryConnected = yield* store.connected(principal.orgUuid, fullName)
    const review = yield* reviews.latest(principal.orgUuid, fullName, pullNumber, { limit: page.perPage, offset: (page.page - 1) * page.perPage })
    const data = [...(review?.violations ?? [])]
    return {
      violations: data,
      data,
      pagination: pagination(page.page, page.perPage, review?.total ?? 0),
      repository_connected: repositoryConnected,
      pull_request: review?.pullRequest ?? null
    }
  })

  const actionReview = Effect.fn("CodeReview.actionReview")(function* (principal: Principal, actionUuid: string) {
    const row = yield* reviews.byAction(principal.orgUuid, actionUuid)
    if (row === undefined) return yield* Effect.fail(notFound("No code review belongs to this action"))
    return {
      review_uuid: row.review_uuid,
      repository: row.repository,
      pull_number: row.pull_number,
      head_sha: row.head_sha,
      status: row.status as ActionReview["status"],
      action_uuid: row.action_uuid,
      merge_action_uuid: row.merge_action_uuid,
      receipt_uuid: row.receipt_uuid,
      critical: row.critical,
      warning: row.warning,
      merged: row.merged,
      auto_merged: row.auto_merged,
      merge_commit_sha: row.merge_commit_sha,
      failure_reason: row.failure_reason
    } satisfies ActionReview
  })

  return CodeReview.of({ github, putGithub, deleteGithub, violations, actionReview })
})

export class CodeReview extends Context.Service<CodeReview, CodeReviewService>()("gateway/CodeReview") {
  static readonly layer = Layer.effect(CodeReview, makeCodeReview)
}

/**
 * Code review and GitHub (CONTRACT-sdk-beyond §7): an organization's GitHub configuration
 * (`/api/v1/code-review/github`) and the read of a pull request's latest review
 * (`/api/v1/webhooks/github/violations/{owner}/{repo}/{pr_number}`), and the review an action
 * belongs to (`/api/v1/code-review/actions/{action_uuid}`, for the dashboard). The webhook GitHub
 * calls is not part of this group (src/code-review/webhook.ts).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, NotFound, refusal } from "./errors.js"

export const AUTO_MERGE_MODES = ["single", "vote"] as const
export const MERGE_METHODS = ["squash", "rebase", "merge"] as const

export const AutoMerge = Schema.Struct({
  enabled: Schema.Boolean,
  mode: Schema.Literals(AUTO_MERGE_MODES),
  merge_method: Schema.Literals(MERGE_METHODS),
  vote_models: Schema.Array(Schema.String).annotate({ description: "2-3 models that must agree (`vote` mode); empty otherwise" })
})
export type AutoMerge = typeof AutoMerge.Type

export const GithubConfiguration = Schema.Struct({
  configured: Schema.Boolean,
  webhook_url: Schema.String.annotate({ description: "`{BASE_URL}/api/v1/webhooks/github`: the payload URL to give GitHub" }),
  has_api_token: Schema.Boolean,
  has_webhook_secret: Schema.Boolean,
  webhook_secret: Schema.NullOr(Schema.String).annotate({
    description: "Only in the answer that generated it (first PUT without one, or `regenerate_webhook_secret`); null otherwise"
  }),
  api_base_url: Schema.String,
  repositories: Schema.Array(Schema.String),
  auto_merge: AutoMerge,
  auto_merge_flag: Schema.Boolean.annotate({ description: "The feature flag `github_auto_merge` resolved for the organization" }),
  updated_at: NullableTimestamp
})
export type GithubConfiguration = typeof GithubConfiguration.Type

/**
 * Fields sent change, the others stay. Types only: the limits are checked by the service, so one
 * 422 lists every issue (lengths, URL, repository names, models).
 */
export const GithubConfigurationUpdate = Schema.Struct({
  api_token: Schema.optionalKey(Schema.String.annotate({ description: "1-512; a GitHub token that may read pull requests and write statuses, reviews and merges; write-only" })),
  webhook_secret: Schema.optionalKey(Schema.String.annotate({ description: "16-256; write-only" })),
  regenerate_webhook_secret: Schema.optionalKey(Schema.Boolean),
  api_base_url: Schema.optionalKey(
    Schema.NullOr(Schema.String).annotate({ description: "https; null: the default (GITHUB_API_URL, else https://api.github.com); Enterprise: https://host/api/v3" })
  ),
  repositories: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "Replaces the list: <= 500 `owner/repo`, case-insensitive, unique across organizations" })),
  auto_merge: Schema.optionalKey(
    Schema.Struct({
      enabled: Schema.optionalKey(Schema.Boolean),
      mode: Schema.optionalKey(Schema.String.annotate({ description: "single | vote" })),
      merge_method: Schema.optionalKey(Schema.String.annotate({ description: "squash | rebase | merge" })),
      vote_models: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
    })
  )
})
export type GithubConfigurationUpdate = typeof GithubConfigurationUpdate.Type

/** A repository another organization already connected (409, `details.repositories`). */
export class RepositoryTaken extends Schema.Error<RepositoryTaken>("RepositoryTaken")(refusal("REPOSITORY_TAKEN"), {
  httpApiStatus: 409,
  description: "A repository is connected to another organization (`details.repositories` names them)"
}) {
  readonly _tag = "RepositoryTaken"
  static of(repositories: ReadonlyArray<string>) {
    return new RepositoryTaken({ message: `Connected to another organization: ${repositories.join(", ")}`, details: { repositories } })
  }
}

export const REVIEW_STATUSES = ["queued", "running", "completed", "failed", "superseded"] as const

export const Violation = Schema.Struct({
  id: Schema.String,
  file: Schema.String,
  line: Schema.NullOr(Schema.Int),
  finding: Schema.String,
  category: Schema.Literals(["security", "data_protection", "error_handling", "performance", "code_quality"]),
  severity: Schema.Literals(["critical", "warning"]),
  description: Schema.String,
  fix: Schema.NullOr(Schema.String),
  blocks_merge: Schema.Boolean,
  head_sha: Schema.String,
  review_uuid: Schema.String,
  created_at: Timestamp
})
export type Violation = typeof Violation.Type

export const ReviewedPullRequest = Schema.Struct({
  repository: Schema.String,
  pull_number: Schema.Int,
  head_sha: Schema.String,
  status: Schema.Literals(REVIEW_STATUSES),
  reviewed_at: NullableTimestamp,
  action_uuid: Schema.NullOr(Schema.String),
  receipt_uuid: Schema.NullOr(Schema.String),
  merged: Schema.Boolean,
  auto_merged: Schema.Boolean
})
export type ReviewedPullRequest = typeof ReviewedPullRequest.Type

export const PullRequestViolations = Schema.Struct({
  violations: Schema.Array(Violation),
  data: Schema.Array(Violation),
  pagination: Pagination,
  repository_connected: Schema.Boolean,
  pull_request: Schema.NullOr(ReviewedPullRequest)
})
export type PullRequestViolations = typeof PullRequestViolations.Type

/** The review an action belongs to (the dashboard's link from an action to its pull request's violations). */
export const ActionReview = Schema.Struct({
  review_uuid: Schema.String,
  repository: Schema.String,
  pull_number: Schema.Int,
  head_sha: Schema.String,
  status: Schema.Literals(REVIEW_STATUSES),
  action_uuid: Schema.NullOr(Schema.String),
  merge_action_uuid: Schema.NullOr(Schema.String),
  receipt_uuid: Schema.NullOr(Schema.String),
  critical: Schema.NullOr(Schema.Int),
  warning: Schema.NullOr(Schema.Int),
  merged: Schema.Boolean,
  auto_merged: Schema.Boolean,
  merge_commit_sha: Schema.NullOr(Schema.String),
  failure_reason: Schema.NullOr(Schema.String)
})
export type ActionReview = typeof ActionReview.Type

const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))
export const ViolationsParams = {
  owner: Name,
  repo: Name,
  pr_number: Schema.String.check(Schema.isPattern(/^[1-9][0-9]{0,9}$/)).annotate({ description: "a positive integer" })
}

export class CodeReviewGroup extends HttpApiGroup.make("codeReview")
  .add(
    HttpApiEndpoint.get("github", "/api/v1/code-review/github", { error: Forbidden, success: GithubConfiguration }),
    HttpApiEndpoint.put("putGithub", "/api/v1/code-review/github", {
      error: [Forbidden, RepositoryTaken, InvalidInput],
      payload: GithubConfigurationUpdate,
      success: GithubConfiguration
    }),
    HttpApiEndpoint.delete("deleteGithub", "/api/v1/code-review/github", { error: Forbidden, success: GithubConfiguration }),
    HttpApiEndpoint.get("violations", "/api/v1/webhooks/github/violations/:owner/:repo/:pr_number", {
      error: Forbidden,
      params: ViolationsParams,
      query: PageQuery,
      success: PullRequestViolations
    }),
    HttpApiEndpoint.get("actionReview", "/api/v1/code-review/actions/:action_uuid", {
      error: [Forbidden, NotFound],
      params: { action_uuid: Schema.String.check(Schema.isMaxLength(100)) },
      success: ActionReview
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Code review",
      description:
        "The organization's GitHub configuration (`code_review:read`, any role; changes `code_review:write`, owner or admin; secrets write-only), the latest review of a pull request, and the review an action (its review or its merge) belongs to."
    })
  )
{}

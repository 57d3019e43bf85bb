/**
 * The pull request a code review action belongs to (a review's or an auto-merge's), with a link to
 * its violations page. Drawn only when the gateway knows the action as a review's or a merge's.
 */
import type { ActionReview } from "../../../protocol/code-review.ts"
import { request } from "../api.ts"
import { Link, useLoad } from "../kit.tsx"

const getActionReview = (token: string, actionUuid: string) => request<ActionReview>("GET", `/api/v1/code-review/actions/${encodeURIComponent(actionUuid)}`, token)

/** Action types the code review agent records; only these ask the gateway for their review. */
export const isCodeReviewAction = (actionType: string) => actionType.startsWith("code_review.github.")

/** The dashboard path of a pull request's violations (`owner/repo` split into two segments). */
export const violationsPath = (repository: string, pullNumber: number) => {
  const [owner = "", repo = ""] = repository.split("/")
  return `code-review/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/${pullNumber}`
}

export const shortSha = (sha: string) => sha.slice(0, 7)

const mergeText = (review: ActionReview) => {
  if (!review.merged) return "not merged"
  const how = review.auto_merged ? "auto-merged" : "merged"
  return review.merge_commit_sha === null ? how : `${how} as `
}

export const CodeReviewPanel = ({ token, actionUuid }: { token: string; actionUuid: string }) => {
  const [loaded] = useLoad(() => getActionReview(token, actionUuid), [token, actionUuid])
  if (loaded.state === "loading") return null
  // 404: the action is not a review's or a merge's (or its review is gone); nothing to show.
  if (loaded.state === "failed")
    return loaded.status === 404 || loaded.status === 403 ? null : (
      <section aria-labelledby="code-review">
        <h2 id="code-review">Code review</h2>
        <p role="alert" class="error">
          The review could not be loaded: {loaded.message}
        </p>
      </section>
    )
  const review = loaded.value
  const name = `${review.repository}#${review.pull_number}`
  return (
    <section aria-labelledby="code-review" data-testid="code-review">
      <h2 id="code-review">Code review</h2>
      <dl class="facts" aria-label="Code review fields">
        <dt>Pull request</dt>
        <dd>{name}</dd>
        <dt>Head commit</dt>
        <dd>
          <code title={review.head_sha}>{shortSha(review.head_sha)}</code>
        </dd>
        <dt>Review status</dt>
        <dd>{review.status}</dd>
        <dt>Violations</dt>
        <dd>{review.critical === null || review.warning === null ? "not counted yet" : `${review.critical} critical, ${review.warning} warning`}</dd>
        <dt>Merge</dt>
        <dd>
          {mergeText(review)}
          {review.merged && review.merge_commit_sha !== null && <code title={review.merge_commit_sha}>{shortSha(review.merge_commit_sha)}</code>}
        </dd>
        {review.failure_reason !== null && (
          <>
            <dt>Failure</dt>
            <dd>{review.failure_reason}</dd>
          </>
        )}
      </dl>
      <p>
        <Link href={violationsPath(review.repository, review.pull_number)}>Violations of {name}</Link>
      </p>
    </section>
  )
}

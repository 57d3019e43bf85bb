/**
 * A pull request's violations as its latest code review found them (CONTRACT-sdk-beyond §7): the
 * review's summary with a link to its action, then one page of findings. The read is scoped to the
 * caller's organization, so another organization's pull request reads as never reviewed.
 */
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, Link, LoadView, Pager, PER_PAGE, pageOf, useLoad } from "../../kit.tsx"
import { type PullRequestViolations, pullRequestViolations } from "./api.ts"
import { yesNo } from "./shared.tsx"

type Review = NonNullable<PullRequestViolations["pull_request"]>
type Violation = PullRequestViolations["data"][number]

const PULL_NUMBER = /^[1-9][0-9]{0,9}$/

const CATEGORY_TEXT: Record<Violation["category"], string> = {
  security: "Security",
  data_protection: "Data protection",
  error_handling: "Error handling",
  performance: "Performance",
  code_quality: "Code quality"
}

/** `path` is what follows `code-review/`: owner, repository, pull request number. */
export const CodeReviewPage = ({ path, search }: { path: ReadonlyArray<string>; search: string }) => {
  const [owner, repo, number, ...rest] = path
  if (owner === undefined || repo === undefined || number === undefined || rest.length > 0 || !PULL_NUMBER.test(number))
    return (
      <>
        <PageHeading>Not found</PageHeading>
        <p role="alert" class="error">
          A pull request's violations live at <code>/dashboard/code-review/owner/repository/number</code>.
        </p>
      </>
    )
  return <Violations owner={owner} repo={repo} pullNumber={Number(number)} search={search} />
}

const Violations = ({ owner, repo, pullNumber, search }: { owner: string; repo: string; pullNumber: number; search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, reload] = useLoad(() => pullRequestViolations(session.token, owner, repo, pullNumber, page, PER_PAGE), [session.token, owner, repo, pullNumber, page])
  const name = `${owner}/${repo}#${pullNumber}`
  return (
    <>
      <PageHeading>Violations of {name}</PageHeading>
      <LoadView loaded={loaded} retry={reload} what="the violations">
        {(answer) => (
          <>
            <p data-testid="repository-connected">
              {answer.repository_connected ? "The repository is connected to your organization's code review." : "The repository is not connected to your organization's code review."}
            </p>
            {answer.pull_request === null ? (
              <Empty>Not reviewed yet.</Empty>
            ) : (
              <>
                <Summary review={answer.pull_request} />
                <section aria-labelledby="violations-title" class="platform-section">
                  <h2 id="violations-title">Violations</h2>
                  {answer.data.length === 0 ? (
                    <Empty>{emptyText(answer.pull_request, answer.pagination.total)}</Empty>
                  ) : (
                    <>
                      <ViolationTable violations={answer.data} name={name} />
                      <Pager pagination={answer.pagination} search={search} label="Violations" />
                    </>
                  )}
                </section>
              </>
            )}
          </>
        )}
      </LoadView>
    </>
  )
}

/** Why the list is empty: a page past the end, a review still under way or ended without findings, or none found. */
const emptyText = (review: Review, total: number) => {
  if (total > 0) return "No violations on this page."
  switch (review.status) {
    case "completed":
      return "No violations."
    case "queued":
    case "running":
      return `No violations yet: the review is ${review.status}.`
    default:
      return `No violations recorded: the review ${review.status === "failed" ? "failed" : "was superseded"}.`
  }
}

const Summary = ({ review }: { review: Review }) => (
  <section aria-labelledby="pull-request-title">
    <h2 id="pull-request-title">Pull request</h2>
    <dl class="facts" aria-label="Pull request review">
      <dt>Review status</dt>
      <dd>{review.status}</dd>
      <dt>Head commit</dt>
      <dd>
        <code title={review.head_sha}>{review.head_sha.slice(0, 7)}</code>
      </dd>
      <dt>Reviewed</dt>
      <dd>{review.reviewed_at === null ? "not yet" : <time dateTime={review.reviewed_at}>{localTime(review.reviewed_at)}</time>}</dd>
      <dt>Merged</dt>
      <dd>{review.merged ? (review.auto_merged ? "yes, automatically" : "yes") : "no"}</dd>
      <dt>Review action</dt>
      <dd>{review.action_uuid === null ? "none yet" : <Link href={`actions/${encodeURIComponent(review.action_uuid)}`}>{review.action_uuid}</Link>}</dd>
    </dl>
  </section>
)

const ViolationTable = ({ violations, name }: { violations: ReadonlyArray<Violation>; name: string }) => (
  <table class="case-table" data-testid="violations">
    <caption class="visually-hidden">Violations of {name}</caption>
    <thead>
      <tr>
        <th scope="col">Severity</th>
        <th scope="col">Category</th>
        <th scope="col">Where</th>
        <th scope="col">Finding</th>
        <th scope="col">Description</th>
        <th scope="col">Fix</th>
        <th scope="col">Blocks merge</th>
      </tr>
    </thead>
    <tbody>
      {violations.map((violation) => (
        <tr key={violation.id} data-violation={violation.id}>
          <td data-label="Severity">
            <span class={`severity-${violation.severity}`}>{violation.severity}</span>
          </td>
          <td data-label="Category">{CATEGORY_TEXT[violation.category] ?? violation.category}</td>
          <td data-label="Where">
            <code>{violation.line === null ? violation.file : `${violation.file}:${violation.line}`}</code>
          </td>
          <td data-label="Finding">{violation.finding}</td>
          <td data-label="Description" class="pre">
            {violation.description}
          </td>
          <td data-label="Fix" class="pre">
            {violation.fix ?? "—"}
          </td>
          <td data-label="Blocks merge">{yesNo(violation.blocks_merge)}</td>
        </tr>
      ))}
    </tbody>
  </table>
)

/**
 * The GitHub REST calls a review makes, through the outbound client (address checks, no
 * redirects, time and size bounds): the pull request, its diff, a commit status, a review with
 * inline comments, the merge. A failure is a `GithubFailure` whose message never holds the token.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { type OutboundPolicy, type OutboundResponse, outboundRequest } from "../platform/outbound/index.js"

/** The diff is read within this time, and at most this many bytes (CONTRACT-sdk-beyond §7). */
export const DIFF_TIMEOUT_MS = 30_000
export const MAX_DIFF_BYTES = 1024 * 1024
const CALL_TIMEOUT_MS = 30_000
const MAX_ANSWER_BYTES = 1024 * 1024

export class GithubFailure extends Data.TaggedError("GithubFailure")<{
  /** `too_large`: the diff is over MAX_DIFF_BYTES; `status`: GitHub answered `status`; `network`: no answer. */
  readonly kind: "too_large" | "status" | "network"
  readonly status: number | null
  readonly message: string
}> {}

export interface PullRequestState {
  readonly draft: boolean
  readonly merged: boolean
  readonly state: string
  readonly mergeableState: string | null
  readonly headSha: string
}

export interface InlineComment {
  readonly path: string
  readonly line: number
  readonly body: string
}

export interface GithubClient {
  readonly pull: (repository: string, pullNumber: number) => Effect.Effect<PullRequestState, GithubFailure>
  readonly diff: (repository: string, pullNumber: number) => Effect.Effect<Buffer, GithubFailure>
  readonly status: (
    repository: string,
    sha: string,
    status: { readonly state: "error" | "failure" | "success" | "pending"; readonly description: string; readonly targetUrl: string }
  ) => Effect.Effect<void, GithubFailure>
  readonly review: (
    repository: string,
    pullNumber: number,
    review: { readonly commitId: string; readonly event: "REQUEST_CHANGES" | "COMMENT"; readonly body: string; readonly comments: ReadonlyArray<InlineComment> }
  ) => Effect.Effect<number, GithubFailure>
  /** The merge commit's sha; a refusal (405 not mergeable, 409 head moved) is a `status` failure. */
  readonly merge: (repository: string, pullNumber: number, mergeMethod: string, sha: string) => Effect.Effect<string, GithubFailure>
}

const STATUS_CONTEXT = "aira/code-review"
const MAX_STATUS_DESCRIPTION = 140

/** GitHub's own message of an error answer, short, never the request. */
const messageOf = (response: OutboundResponse): string => {
  try {
    const body = JSON.parse(response.body.toString("utf8")) as { message?: unknown }
    if (typeof body.message === "string") return `GitHub answered ${response.status}: ${body.message.slice(0, 200)}`
  } catch {
    // Not JSON: the status says enough.
  }
  return `GitHub answered ${response.status}`
}

export const githubClient = (options: { readonly apiBaseUrl: string; readonly token: string; readonly policy: OutboundPolicy; readonly ca?: Buffer }): GithubClient => {
  const headers = (accept: string, json: boolean): Record<string, string> => ({
    accept,
    authorization: `Bearer ${options.token}`,
    "user-agent": "aira-code-review",
    "x-github-api-version": "2022-11-28",
    ...(json ? { "content-type": "application/json" } : {})
  })
  const pathOf = (repository: string, rest: string) => {
    const [owner, repo] = repository.split("/")
    return `${options.apiBaseUrl}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}${rest}`
  }

  const call = (
    url: string,
    init: { readonly method?: string; readonly accept?: string; readonly body?: unknown; readonly timeoutMs?: number; readonly maxBytes?: number }
  ): Effect.Effect<OutboundResponse, GithubFailure> =>
    Effect.tryPromise({
      try: (signal) =>
        outboundRequest(url, {
          method: init.method ?? "GET",
          headers: headers(init.accept ?? "application/vnd.github+json", init.body !== undefined),
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
          timeoutMs: init.timeoutMs ?? CALL_TIMEOUT_MS,
          maxResponseBytes: init.maxBytes ?? MAX_ANSWER_BYTES,
          policy: options.policy,
          ca: options.ca,
          signal
        }),
      catch: (cause) => {
        const kind = (cause as { kind?: string }).kind
        if (kind === "response_too_large") return new GithubFailure({ kind: "too_large", status: null, message: "the answer is too large" })
        const text = cause instanceof Error ? cause.message : String(cause)
        return new GithubFailure({ kind: "network", status: null, message: `GitHub could not be reached: ${text.split(options.token).join("[redacted]").slice(0, 200)}` })
      }
    })

  const ok = (response: OutboundResponse) =>
    response.status >= 200 && response.status < 300 ? Effect.succeed(response) : Effect.fail(new GithubFailure({ kind: "status", status: response.status, message: messageOf(response) }))

  const json = (response: OutboundResponse): Record<string, any> => {
    try {
      const value = JSON.parse(response.body.toString("utf8"))
      return typeof value === "object" && value !== null ? value : {}
    } catch {
      return {}
    }
  }

  return {
    pull: (repository, pullNumber) =>
      call(pathOf(repository, `/pulls/${pullNumber}`), {}).pipe(
        Effect.flatMap(ok),
        Effect.map((response) => {
          const body = json(response)
          return {
            draft: body.draft === true,
            merged: body.merged === true,
            state: typeof body.state === "string" ? body.state : "unknown",
            mergeableState: typeof body.mergeable_state === "string" ? body.mergeable_state : null,
            headSha: typeof body.head?.sha === "string" ? body.head.sha : ""
          }
        })
      ),
    diff: (repository, pullNumber) =>
      call(pathOf(repository, `/pulls/${pullNumber}`), { accept: "application/vnd.github.diff", timeoutMs: DIFF_TIMEOUT_MS, maxBytes: MAX_DIFF_BYTES }).pipe(
        Effect.flatMap(ok),
        Effect.map((response) => response.body)
      ),
    status: (repository, sha, status) =>
      call(pathOf(repository, `/statuses/${encodeURIComponent(sha)}`), {
        method: "POST",
        body: { state: status.state, description: truncate(status.description, MAX_STATUS_DESCRIPTION), target_url: status.targetUrl, context: STATUS_CONTEXT }
      }).pipe(Effect.flatMap(ok), Effect.asVoid),
    review: (repository, pullNumber, review) =>
      call(pathOf(repository, `/pulls/${pullNumber}/reviews`), {
        method: "POST",
        body: {
          commit_id: review.commitId,
          event: review.event,
          body: review.body,
          comments: review.comments.map((comment) => ({ path: comment.path, line: comment.line, side: "RIGHT", body: comment.body }))
        }
      }).pipe(
        Effect.flatMap(ok),
        Effect.map((response) => Number(json(response).id ?? 0))
      ),
    merge: (repository, pullNumber, mergeMethod, sha) =>
      call(pathOf(repository, `/pulls/${pullNumber}/merge`), { method: "PUT", body: { merge_method: mergeMethod, sha } }).pipe(
        Effect.flatMap(ok),
        Effect.map((response) => String(json(response).sha ?? ""))
      )
  }
}

/** At most `max` characters, an ellipsis marking a cut. */
export const truncate = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/**
 * A local stand-in for the parts of GitHub's REST API the code review uses (CONTRACT-sdk-beyond §7):
 * a pull request as JSON or as its unified diff, commit statuses, reviews with inline comments
 * (refused, like GitHub, when a comment's line is not on the new side of the diff) and merges.
 * Repository names match case-insensitively; every request is recorded. Also builds webhook
 * deliveries (signed like GitHub's), their payloads, and unified diffs for tests.
 *
 * Recorded `repository` fields carry the spelling given to `setPull` when the repository is known,
 * else the spelling of the request path. `merges` records every merge attempt on a known pull
 * request, with the HTTP status it was answered.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface FakePull {
  number: number
  head_sha: string
  head_ref: string
  base_ref: string
  author: string
  draft: boolean
  /** GitHub's `mergeable_state`: "clean" by default; "dirty", "blocked", "unstable", "unknown" … */
  mergeable_state: string
  diff: string
  merged: boolean
  merge_commit_sha: string | null
}

export interface RecordedStatus {
  repository: string
  sha: string
  state: string
  context: string
  description: string | null
  target_url: string | null
}

export interface RecordedReview {
  repository: string
  pull_number: number
  id: number
  commit_id: string | null
  event: string
  body: string
  comments: Array<{ path: string; line: number; side: string | null; body: string }>
}

export interface RecordedMerge {
  repository: string
  pull_number: number
  merge_method: string | null
  sha: string | null
  /** The HTTP status the attempt was answered with (200 when merged). */
  status: number
}

export interface RecordedRequest {
  method: string
  path: string
  accept: string | null
  authorization: string | null
  body: unknown
}

export interface GithubFake {
  /** API base, e.g. http://127.0.0.1:PORT (calls go to `${url}/repos/...`). */
  readonly url: string
  /** The only accepted token (`Authorization: Bearer <token>` or `token <token>`). */
  readonly token: string
  /** Creates or updates (merging fields) a pull request; answers a copy of its state. */
  setPull(repository: string, pull: Partial<FakePull> & { number: number }): FakePull
  pull(repository: string, number: number): FakePull | undefined
  readonly statuses: Array<RecordedStatus>
  readonly reviews: Array<RecordedReview>
  readonly merges: Array<RecordedMerge>
  /** Next merge of that pull request answers this status (405 "Pull Request is not mergeable", 409 "Head branch was modified") instead of merging. */
  failMerge(repository: string, number: number, status: 405 | 409): void
  /** Diff requests for that pull request wait until the returned function is called (to move the head mid-review). */
  holdDiff(repository: string, number: number): () => void
  /**
   * Resolves when a diff request for that pull request has arrived: at once when one arrived since
   * the fake started or since the last `holdDiff` of that pull request, else on the next one.
   */
  diffRequested(repository: string, number: number): Promise<void>
  readonly requests: Array<RecordedRequest>
  close(): Promise<void>
}

const hex40 = () => randomBytes(20).toString("hex")

/** One line on the new side of a unified diff: its path, its new-side number, whether it was added, its text. */
export interface NewSideLine {
  readonly file: string
  readonly line: number
  readonly added: boolean
  readonly text: string
}

/** The new-side lines (added and context) of a unified diff, in order; text before the first `diff --git` is skipped. */
export const diffLines = (diff: string): Array<NewSideLine> => {
  const out: Array<NewSideLine> = []
  let file: string | undefined
  let line = 0
  let oldLeft = 0
  let newLeft = 0
  for (const text of diff.split("\n")) {
    const inHunk = oldLeft > 0 || newLeft > 0
    if (inHunk && (text.startsWith("+") || text.startsWith("-") || text.startsWith(" ") || text === "")) {
      if (text.startsWith("-")) {
        oldLeft--
        continue
      }
      // An empty line inside a hunk is a context line whose leading space was stripped.
      const added = text.startsWith("+")
      if (!added) oldLeft--
      if (file !== undefined) out.push({ file, line, added, text: text.slice(1) })
      line++
      newLeft--
      continue
    }
    if (inHunk && text.startsWith("\\")) continue
    oldLeft = 0
    newLeft = 0
    const header = /^diff --git a\/(.*) b\/(.*)$/.exec(text)
    if (header) {
      file = header[2]!
      continue
    }
    if (text.startsWith("+++ ")) {
      const target = text.slice(4).replace(/\t.*$/, "")
      file = target === "/dev/null" ? undefined : target.startsWith("b/") ? target.slice(2) : target
      continue
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(text)
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1])
      line = Number(hunk[2])
      newLeft = hunk[3] === undefined ? 1 : Number(hunk[3])
    }
  }
  return out
}

/** Lines on the new side of a unified diff (added and context lines), per new path. */
export const newSideLines = (diff: string): Map<string, Set<number>> => {
  const files = new Map<string, Set<number>>()
  for (const { file, line } of diffLines(diff)) {
    const lines = files.get(file) ?? new Set<number>()
    lines.add(line)
    files.set(file, lines)
  }
  return files
}

/** A unified diff adding each file whole: new-side line k is the k-th added line. */
export const unifiedDiff = (files: Array<{ path: string; added: Array<string> }>): string =>
  files
    .map(({ path, added }) => {
      const head = [`diff --git a/${path} b/${path}`, "new file mode 100644", `index 0000000..${hex40().slice(0, 7)}`, "--- /dev/null", `+++ b/${path}`]
      const hunk = added.length === 0 ? [] : [`@@ -0,0 +1,${added.length} @@`, ...added.map((line) => `+${line}`)]
      return [...head, ...hunk].join("\n") + "\n"
    })
    .join("")

/** The body and headers of one webhook delivery, signed like GitHub's. */
export const githubDelivery = (secret: string, event: string, payload: unknown, options: { deliveryId?: string; signature?: string | null } = {}): { headers: Record<string, string>; body: string } => {
  const body = JSON.stringify(payload)
  const signature = options.signature === undefined ? `sha256=${createHmac("sha256", secret).update(body).digest("hex")}` : options.signature
  return {
    headers: {
      "X-GitHub-Event": event,
      "X-GitHub-Delivery": options.deliveryId ?? randomUUID(),
      ...(signature === null ? {} : { "X-Hub-Signature-256": signature }),
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/test"
    },
    body
  }
}

const repositoryObject = (repository: string) => {
  const [owner = "", name = ""] = repository.split("/")
  return { id: 1296269, full_name: repository, name, private: false, owner: { login: owner, type: "Organization" }, html_url: `https://github.com/${repository}` }
}

/** A pull_request event payload. */
export const pullRequestEvent = (action: string, repository: string, pull: FakePull): unknown => ({
  action,
  number: pull.number,
  pull_request: {
    number: pull.number,
    title: `Pull request ${pull.number}`,
    draft: pull.draft,
    state: pull.merged || action === "closed" ? "closed" : "open",
    merged: pull.merged,
    head: { sha: pull.head_sha, ref: pull.head_ref, repo: { full_name: repository } },
    base: { ref: pull.base_ref, repo: { full_name: repository } },
    user: { login: pull.author },
    html_url: `https://github.com/${repository}/pull/${pull.number}`
  },
  repository: repositoryObject(repository),
  sender: { login: pull.author }
})

/** A ping payload (sent when a webhook is created); `repository` omitted when not given. */
export const pingEvent = (repository?: string): unknown => ({
  zen: "Keep it logically awesome.",
  hook_id: 424242,
  hook: { type: "Repository", id: 424242, name: "web", active: true, events: ["pull_request"], config: { content_type: "json", insecure_ssl: "0", url: "https://example.invalid/api/v1/webhooks/github" } },
  ...(repository === undefined ? {} : { repository: repositoryObject(repository) })
})

interface PullEntry {
  readonly repository: string
  pull: FakePull
  failNext: 405 | 409 | undefined
  /** Set while diff requests are held; resolved by the release function. */
  hold: { promise: Promise<void>; release: () => void } | undefined
  diffSeen: boolean
  diffWaiters: Array<() => void>
}

const MERGE_FAILURES = { 405: "Pull Request is not mergeable", 409: "Head branch was modified. Review and try the merge again." } as const

export const startGithubFake = async (options: { token?: string } = {}): Promise<GithubFake> => {
  const token = options.token ?? `ghp_${randomBytes(18).toString("hex")}`
  const pulls = new Map<string, PullEntry>()
  const statuses: Array<RecordedStatus> = []
  const reviews: Array<RecordedReview> = []
  const merges: Array<RecordedMerge> = []
  const requests: Array<RecordedRequest> = []
  const known = new Map<string, string>()
  let nextId = 1000

  const keyOf = (repository: string, number: number) => `${repository.toLowerCase()}#${number}`
  const entryOf = (repository: string, number: number) => pulls.get(keyOf(repository, number))
  const nameOf = (repository: string) => known.get(repository.toLowerCase()) ?? repository

  const setPull = (repository: string, patch: Partial<FakePull> & { number: number }): FakePull => {
    if (!known.has(repository.toLowerCase())) known.set(repository.toLowerCase(), repository)
    const existing = entryOf(repository, patch.number)
    if (existing) {
      existing.pull = { ...existing.pull, ...patch }
      return { ...existing.pull }
    }
    const pull: FakePull = {
      head_sha: hex40(),
      head_ref: `feature-${patch.number}`,
      base_ref: "main",
      author: "octocat",
      draft: false,
      mergeable_state: "clean",
      diff: unifiedDiff([{ path: "src/example.ts", added: ["export const example = 1"] }]),
      merged: false,
      merge_commit_sha: null,
      ...patch
    }
    pulls.set(keyOf(repository, patch.number), { repository: nameOf(repository), pull, failNext: undefined, hold: undefined, diffSeen: false, diffWaiters: [] })
    return { ...pull }
  }

  const pullJson = (repository: string, pull: FakePull) => ({
    id: 1_000_000 + pull.number,
    number: pull.number,
    title: `Pull request ${pull.number}`,
    state: pull.merged ? "closed" : "open",
    draft: pull.draft,
    merged: pull.merged,
    merge_commit_sha: pull.merge_commit_sha,
    mergeable_state: pull.mergeable_state,
    // GitHub answers null while it computes mergeability and false on conflicts.
    mergeable: pull.merged || pull.mergeable_state === "unknown" ? null : pull.mergeable_state !== "dirty",
    head: { sha: pull.head_sha, ref: pull.head_ref, repo: { full_name: repository } },
    base: { ref: pull.base_ref, repo: { full_name: repository } },
    user: { login: pull.author },
    html_url: `https://github.com/${repository}/pull/${pull.number}`
  })

  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      void handle(Buffer.concat(chunks).toString("utf8"))
    })

    const send = (status: number, payload: unknown) => {
      if (response.destroyed) return
      response.writeHead(status, { "content-type": "application/json; charset=utf-8" })
      response.end(JSON.stringify(payload))
    }
    const notFound = () => send(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" })
    const invalid = (message: string, errors: Array<unknown> = []) => send(422, { message, errors, documentation_url: "https://docs.github.com/rest" })

    const handle = async (text: string) => {
      const method = request.method ?? "GET"
      const path = (request.url ?? "/").split("?")[0]!
      const accept = request.headers.accept ?? null
      const authorization = request.headers.authorization ?? null
      const isJson = (request.headers["content-type"] ?? "").includes("json") || /^\s*[{[]/.test(text)
      let body: unknown = text === "" ? null : text
      let parsed = true
      if (text !== "" && isJson) {
        try {
          body = JSON.parse(text)
        } catch {
          parsed = false
        }
      }
      requests.push({ method, path, accept, authorization, body })

      const presented = /^(?:bearer|token)\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim()
      if (presented !== token) return send(401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" })

      const route = /^\/repos\/([^/]+)\/([^/]+)\/(.+)$/.exec(path)
      if (!route) return notFound()
      const repository = `${decodeURIComponent(route[1]!)}/${decodeURIComponent(route[2]!)}`
      const rest = route[3]!
      const payload = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as Record<string, any>
      const needsBody = method === "POST" || method === "PUT"
      if (needsBody && (!parsed || (text !== "" && payload !== body))) return send(400, { message: "Problems parsing JSON" })

      const status = /^statuses\/([^/]+)$/.exec(rest)
      if (status && method === "POST") return postStatus(nameOf(repository), decodeURIComponent(status[1]!), payload)

      const pullRoute = /^pulls\/(\d+)(\/reviews|\/merge)?$/.exec(rest)
      if (!pullRoute) return notFound()
      const entry = entryOf(repository, Number(pullRoute[1]))
      if (!entry) return notFound()
      if (pullRoute[2] === undefined && method === "GET") return getPull(entry, accept)
      if (pullRoute[2] === "/reviews" && method === "POST") return postReview(entry, payload)
      if (pullRoute[2] === "/merge" && method === "PUT") return putMerge(entry, payload)
      return notFound()
    }

    const getPull = async (entry: PullEntry, accept: string | null) => {
      if (!/application\/vnd\.github(?:\.v3)?\.diff/i.test(accept ?? "")) return send(200, pullJson(entry.repository, entry.pull))
      entry.diffSeen = true
      for (const wake of entry.diffWaiters.splice(0)) wake()
      if (entry.hold) await entry.hold.promise
      if (response.destroyed) return
      const diff = entry.pull.diff
      response.writeHead(200, { "content-type": "application/vnd.github.diff; charset=utf-8", "content-length": Buffer.byteLength(diff) })
      response.end(diff)
    }

    const postStatus = (repository: string, sha: string, payload: Record<string, any>) => {
      const state = payload.state
      const errors: Array<unknown> = []
      if (!["error", "failure", "pending", "success"].includes(state)) errors.push({ resource: "Status", field: "state", code: "invalid" })
      if (payload.description != null && (typeof payload.description !== "string" || payload.description.length > 140)) {
        errors.push({ resource: "Status", field: "description", code: "custom", message: "description is too long (maximum is 140 characters)" })
      }
      if (errors.length > 0) return invalid("Validation Failed", errors)
      const recorded: RecordedStatus = {
        repository,
        sha,
        state,
        context: typeof payload.context === "string" ? payload.context : "default",
        description: typeof payload.description === "string" ? payload.description : null,
        target_url: typeof payload.target_url === "string" ? payload.target_url : null
      }
      statuses.push(recorded)
      const now = new Date().toISOString()
      send(201, { id: ++nextId, ...recorded, created_at: now, updated_at: now, creator: { login: "aira-bot" } })
    }

    const postReview = (entry: PullEntry, payload: Record<string, any>) => {
      const event = payload.event
      if (!["APPROVE", "REQUEST_CHANGES", "COMMENT"].includes(event)) return invalid("Unprocessable Entity", ["event must be one of APPROVE, REQUEST_CHANGES, COMMENT"])
      const given = payload.comments ?? []
      if (!Array.isArray(given)) return invalid("Unprocessable Entity", ["comments must be an array"])
      const lines = newSideLines(entry.pull.diff)
      const comments: RecordedReview["comments"] = []
      for (const comment of given) {
        if (typeof comment?.path !== "string" || !Number.isInteger(comment?.line) || typeof comment?.body !== "string") {
          return invalid("Unprocessable Entity", ["Each comment needs path, line and body"])
        }
        const side = typeof comment.side === "string" ? comment.side : null
        if ((side !== null && side !== "RIGHT") || !lines.get(comment.path)?.has(comment.line)) return invalid("Unprocessable Entity", ["Line could not be resolved"])
        comments.push({ path: comment.path, line: comment.line, side, body: comment.body })
      }
      const id = ++nextId
      const commitId = typeof payload.commit_id === "string" ? payload.commit_id : null
      reviews.push({ repository: entry.repository, pull_number: entry.pull.number, id, commit_id: commitId, event, body: typeof payload.body === "string" ? payload.body : "", comments })
      const state = event === "APPROVE" ? "APPROVED" : event === "REQUEST_CHANGES" ? "CHANGES_REQUESTED" : "COMMENTED"
      send(200, {
        id,
        state,
        commit_id: commitId ?? entry.pull.head_sha,
        body: typeof payload.body === "string" ? payload.body : "",
        user: { login: "aira-bot" },
        html_url: `https://github.com/${entry.repository}/pull/${entry.pull.number}#pullrequestreview-${id}`,
        submitted_at: new Date().toISOString()
      })
    }

    const putMerge = (entry: PullEntry, payload: Record<string, any>) => {
      const method = typeof payload.merge_method === "string" ? payload.merge_method : null
      const sha = typeof payload.sha === "string" ? payload.sha : null
      const answer = (status: number, body: unknown) => {
        merges.push({ repository: entry.repository, pull_number: entry.pull.number, merge_method: method, sha, status })
        send(status, body)
      }
      if (method !== null && !["merge", "squash", "rebase"].includes(method)) return answer(422, { message: "Validation Failed", errors: [{ field: "merge_method", code: "invalid" }] })
      if (entry.failNext !== undefined) {
        const status = entry.failNext
        entry.failNext = undefined
        return answer(status, { message: MERGE_FAILURES[status] })
      }
      if (sha !== null && sha !== entry.pull.head_sha) return answer(409, { message: MERGE_FAILURES[409] })
      if (entry.pull.merged) return answer(405, { message: MERGE_FAILURES[405] })
      const merged = hex40()
      entry.pull = { ...entry.pull, merged: true, merge_commit_sha: merged }
      answer(200, { sha: merged, merged: true, message: "Pull Request successfully merged" })
    }
  })

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  const mustExist = (repository: string, number: number) => {
    const entry = entryOf(repository, number)
    if (!entry) throw new Error(`github fake: no pull request ${repository}#${number} (setPull first)`)
    return entry
  }

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    setPull,
    pull: (repository, number) => {
      const entry = entryOf(repository, number)
      return entry ? { ...entry.pull } : undefined
    },
    statuses,
    reviews,
    merges,
    requests,
    failMerge: (repository, number, status) => {
      mustExist(repository, number).failNext = status
    },
    holdDiff: (repository, number) => {
      const entry = mustExist(repository, number)
      entry.diffSeen = false
      let release = () => {}
      const promise = new Promise<void>((resolve) => (release = resolve))
      const hold = { promise, release }
      entry.hold = hold
      return () => {
        if (entry.hold === hold) entry.hold = undefined
        hold.release()
      }
    },
    diffRequested: (repository, number) => {
      const entry = mustExist(repository, number)
      if (entry.diffSeen) return Promise.resolve()
      return new Promise<void>((resolve) => entry.diffWaiters.push(resolve))
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const entry of pulls.values()) entry.hold?.release()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

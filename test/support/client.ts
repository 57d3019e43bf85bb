/** A small HTTP client for end-to-end tests, and account fixtures. */
export interface Reply<T = any> {
  readonly status: number
  readonly headers: Headers
  readonly body: T
  readonly text: string
}

export interface CallOptions {
  readonly token?: string
  readonly body?: unknown
  /** Sent as it is, instead of `body` as JSON. */
  readonly raw?: string | Uint8Array
  readonly headers?: Record<string, string>
}

export const call = async <T = any>(base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  let body: string | Uint8Array | undefined
  if (options.raw !== undefined) body = options.raw
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json"
  const response = await fetch(base + path, { method, headers, body })
  const text = await response.text()
  let parsed: any = text
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    // Not JSON (metrics, docs): keep the text.
  }
  return { status: response.status, headers: response.headers, body: parsed, text }
}

export interface Org {
  readonly orgUuid: string
  readonly userUuid: string
  readonly email: string
  readonly password: string
  /** Dashboard JWT of the owner. */
  readonly token: string
  /** The owner's first API key. */
  readonly key: string
  readonly keyId: string
}

let counter = 0
export const uniqueEmail = (label = "user") => `${label}.${Date.now().toString(36)}.${process.pid}.${++counter}@example.test`

export const registerOrg = async (base: string, name = "Acme"): Promise<Org> => {
  const email = uniqueEmail("owner")
  const password = "correct horse battery staple"
  const reply = await call(base, "POST", "/api/v1/auth/register", { body: { email, password, org_name: name } })
  if (reply.status !== 201) throw new Error(`register failed: ${reply.status} ${reply.text}`)
  return {
    orgUuid: reply.body.org_uuid,
    userUuid: reply.body.user_uuid,
    email,
    password,
    token: reply.body.token,
    key: reply.body.api_key.key,
    keyId: reply.body.api_key.id
  }
}

/** Invites and registers a teammate with `role`; returns their JWT and user id. */
export const addMember = async (base: string, owner: Org, role: "admin" | "member") => {
  const email = uniqueEmail(role)
  const invite = await call(base, "POST", "/api/v1/team/invites", { token: owner.token, body: { email, role } })
  if (invite.status !== 201) throw new Error(`invite failed: ${invite.status} ${invite.text}`)
  const password = "another long password"
  const joined = await call(base, "POST", "/api/v1/auth/register", { body: { email, password, invite_code: invite.body.invite_code } })
  if (joined.status !== 201) throw new Error(`join failed: ${joined.status} ${joined.text}`)
  return { email, password, token: joined.body.token as string, key: joined.body.api_key.key as string, userUuid: joined.body.user_uuid as string }
}

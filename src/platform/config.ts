/**
 * Service configuration, read once from the environment (CONTRACT.md "Running it")
 * through Effect `Config`; the secrets (ADMIN_KEY, MASTER_KEY) stay `Redacted`.
 */
import * as EffectConfig from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { parseCidrList } from "./outbound/policy.js"
import { Outbound } from "./outbound/service.js"

export type DeploymentMode = "selfhosted" | "cloud"

/** The configuration, as `appConfig` below reads it (the type is derived from it, so the two cannot drift apart). */
export type AppConfig = EffectConfig.Success<typeof appConfig> & {
  /** Every `ENABLE_*` variable as given: self-hosted resolution of a flag absent from storage reads `ENABLE_<KEY>`. */
  readonly flagEnvironment?: Readonly<Record<string, string>>
}

export class Config extends Context.Service<Config, AppConfig>()("gateway/Config") {}

/*
 * The environment contract, as Effect `Config`s. An empty variable counts as unset
 * (`ConfigProvider.fromEnvRecord` drops empty strings), so `X=` means the default.
 */

/** A failure naming the variable and the value, in the service's own words. */
const invalid = (message: string) => new EffectConfig.ConfigError(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message })))

const optional = (name: string): EffectConfig.Config<string | undefined> => EffectConfig.String(name).pipe(EffectConfig.withDefault(undefined))
const string = (name: string, fallback: string): EffectConfig.Config<string> => EffectConfig.String(name).pipe(EffectConfig.withDefault(fallback))
/** A secret: kept `Redacted` so it never prints with the configuration. */
const secret = (name: string): EffectConfig.Config<Redacted.Redacted<string> | undefined> =>
  EffectConfig.Redacted(name).pipe(EffectConfig.withDefault(undefined))

/** An integer in [min, max]; as `Number()` reads it (so `1e3` and `0x10` pass, as they always did). */
const optionalInt = (name: string, min = 0, max = Number.MAX_SAFE_INTEGER): EffectConfig.Config<number | undefined> =>
  EffectConfig.String(name).pipe(
    EffectConfig.mapEffect((value) => {
      const parsed = Number(value)
      if (Number.isInteger(parsed) && parsed >= min && parsed <= max) return Effect.succeed(parsed)
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `between ${min} and ${max}`
      return Effect.fail(invalid(`${name} must be an integer ${range}, got "${value}"`))
    }),
    EffectConfig.withDefault(undefined)
  )
const int = (name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): EffectConfig.Config<number> =>
  EffectConfig.map(optionalInt(name, min, max), (value) => value ?? fallback)

/** One of `choices`, or a start-up failure naming them. */
const oneOf = <const C extends string>(name: string, choices: readonly [C, ...Array<C>]): EffectConfig.Config<C> =>
  EffectConfig.String(name).pipe(
    EffectConfig.mapEffect((value) =>
      (choices as ReadonlyArray<string>).includes(value)
        ? Effect.succeed(value as C)
        : Effect.fail(invalid(`${name} must be ${choices.join(" or ")}, got "${value}"`))
    ),
    EffectConfig.withDefault(choices[0])
  )

const truthy = /^(1|true|yes|on)$/i
const falsy = /^(0|false|no|off)$/i

/**
 * The one reading of a yes/no variable (CI, OUTBOUND_ALLOW_HTTP, ENABLE_*): 1/true/yes/on or
 * 0/false/no/off in any case; anything else stops the start naming the variable.
 */
export const parseBoolean = (name: string, value: string): Result.Result<boolean, string> => {
  const text = value.trim()
  if (truthy.test(text)) return Result.succeed(true)
  if (falsy.test(text)) return Result.succeed(false)
  return Result.fail(`${name} must be true or false (1/0, yes/no, on/off), got "${value}"`)
}

const boolean = (name: string, fallback: boolean): EffectConfig.Config<boolean> =>
  EffectConfig.String(name).pipe(
    EffectConfig.mapEffect((value) => Result.match(parseBoolean(name, value), { onSuccess: Effect.succeed, onFailure: (message) => Effect.fail(invalid(message)) })),
    EffectConfig.withDefault(fallback)
  )

/** Without APPROVAL_TTL_MS (tests), APPROVAL_TTL_HOURS, read only then. */
const approvalTtlMs = EffectConfig.flatMap(optionalInt("APPROVAL_TTL_MS", 1), (millis) =>
  millis !== undefined ? EffectConfig.succeed(millis) : EffectConfig.map(int("APPROVAL_TTL_HOURS", 72, 1), (hours) => hours * 3_600_000)
)

/** The whole configuration; the port in a did:web / URL host is written as `host%3Aport`, BASE_URL keeps the plain form. */
export const appConfig = EffectConfig.all({
  port: int("PORT", 8080),
  host: string("HOST", "127.0.0.1"),
  deploymentMode: oneOf("DEPLOYMENT_MODE", ["selfhosted", "cloud"]),
  logLevel: oneOf("LOG_LEVEL", ["info", "debug", "warn", "error", "silent"]),
  /** Where the actors run: one in-memory runner, or SQL-backed sharding over the shared Postgres. */
  clusterMode: oneOf("CLUSTER_MODE", ["memory", "sql"]),
  databaseUrl: optional("DATABASE_URL"),
  /** Postgres pool size, external or embedded. */
  databaseMaxConnections: int("DATABASE_MAX_CONNECTIONS", 10, 1, 1_000),
  baseUrl: optional("BASE_URL"),
  dataDir: string("DATA_DIR", "./data"),
  /** The built dashboard (`vite build` output) served under `/dashboard`. */
  dashboardDir: string("DASHBOARD_DIR", "./dist/dashboard"),
  redisUrl: optional("REDIS_URL"),
  /** Prefix of every Redis key and channel (several deployments, or test runs, on one Redis). */
  redisKeyPrefix: string("REDIS_KEY_PREFIX", ""),
  adminKey: secret("ADMIN_KEY"),
  rateLimitPerMinute: int("RATE_LIMIT_PER_MINUTE", 60, 1),
  publicRateLimitPerMinute: optionalInt("PUBLIC_RATE_LIMIT_PER_MINUTE", 1),
  /** Failed authentications per minute per client address, and per API key prefix, before 429s. */
  authFailuresPerMinute: int("AUTH_FAILURES_PER_MINUTE", 20, 1),
  /** Port of the separate `/metrics` listener; undefined = no metrics listener (0 = a port the system chooses). */
  metricsPort: optionalInt("METRICS_PORT", 0, 65_535),
  metricsHost: string("METRICS_HOST", "127.0.0.1"),
  outboundAllowPrivate: optional("OUTBOUND_ALLOW_PRIVATE"),
  outboundAllowHttp: boolean("OUTBOUND_ALLOW_HTTP", false),
  /** Extra CA certificates (a PEM file) trusted by outbound HTTPS calls, e.g. a private CA's. */
  outboundCaFile: optional("OUTBOUND_CA_FILE"),
  masterKey: secret("MASTER_KEY"),
  maxJsonBodyBytes: int("MAX_BODY_BYTES", 1024 * 1024, 1024),
  maxMultipartBodyBytes: int("MAX_MULTIPART_BYTES", 50 * 1024 * 1024, 1024),
  bodyTimeoutMs: int("BODY_TIMEOUT_MS", 30_000, 100),
  /** A body with less than 160 KB of progress within this window is 408 (below uWS's own 8–12 s cut-off). */
  // uWS may drop a stalled body 8 s after its last progress; ours must answer first.
  bodyIdleTimeoutMs: int("BODY_IDLE_TIMEOUT_MS", 6_000, 100, 7_000),
  maxConnections: int("MAX_CONNECTIONS", 0),
  shutdownGraceMs: int("SHUTDOWN_GRACE_MS", 10_000),
  /** Lifetime of pending approvals and approval codes (APPROVAL_TTL_HOURS, or APPROVAL_TTL_MS for tests). */
  approvalTtlMs,
  /** How long a mutual-signing request stays open (24 h; tests shorten it). */
  mutualSignTtlMs: int("MUTUAL_SIGN_TTL_MS", 24 * 3_600_000, 1),
  /** Fee of an escrow release in basis points of its amount (0-10 000; default 0), rounded half up to the minor unit. */
  escrowFeeBasisPoints: int("ESCROW_FEE_BASIS_POINTS", 0, 0, 10_000),
  /** Time budget of the model calls of one ai or consensus policy on authorize and dry-run. */
  aiPolicyTimeoutMs: int("AI_POLICY_TIMEOUT_MS", 10_000, 100, 120_000),
  /** How long a model answer to an ai or consensus policy is reused for the same action (per policy version). */
  aiPolicyCacheMs: int("AI_POLICY_CACHE_MS", 60_000, 0, 3_600_000),
  /** Time budget of the AI second pass of one sanitize request; past it the rule-based result stands. */
  sanitizeAiTimeoutMs: int("SANITIZE_AI_TIMEOUT_MS", 20_000, 100, 120_000),
  /** How often pending approvals are checked for expiry. */
  approvalSweepMs: int("APPROVAL_SWEEP_MS", 30_000, 10),
  /** OCR worker threads for file sanitize (0: one per core), images allowed to wait beyond them, and each image's time limit. */
  sanitizeOcrWorkers: int("SANITIZE_OCR_WORKERS", 0, 0, 64),
  sanitizeOcrQueue: int("SANITIZE_OCR_QUEUE", 16, 0, 10_000),
  sanitizeOcrTimeoutMs: int("SANITIZE_OCR_TIMEOUT_MS", 60_000, 100, 600_000),
  /** How long a cleaned file waits for its one download (1 h; tests shorten it), and how often expired ones are swept. */
  sanitizeFileTtlMs: int("SANITIZE_FILE_TTL_MS", 3_600_000, 1, 3_600_000),
  sanitizeSweepMs: int("SANITIZE_SWEEP_MS", 60_000, 10),
  /** Receipts one Article 12 report may list; a larger period gives a `failed` report that says so. */
  complianceMaxReportReceipts: int("COMPLIANCE_MAX_REPORT_RECEIPTS", 100_000, 1),
  /** Receipts one compliance bundle may seal; a larger period is refused (422 BUNDLE_TOO_LARGE), nothing stored. */
  complianceMaxBundleReceipts: int("COMPLIANCE_MAX_BUNDLE_RECEIPTS", 50_000, 1),
  /** How often every active drift baseline is checked (alerts pushed to `notifications` and webhooks). */
  driftCheckIntervalMs: int("DRIFT_CHECK_INTERVAL_MS", 15 * 60_000, 100),
  /** Chat (CONTRACT-sdk-beyond §5): one answer's whole time budget, tool steps included. */
  chatTimeoutMs: int("CHAT_TIMEOUT_MS", 60_000, 100, 600_000),
  /** LLM gateway (CONTRACT-sdk-beyond §6): where `/gateway/openai/v1` and `/gateway/anthropic/v1` forward. */
  openaiUpstreamUrl: string("OPENAI_UPSTREAM_URL", "https://api.openai.com/v1"),
  anthropicUpstreamUrl: string("ANTHROPIC_UPSTREAM_URL", "https://api.anthropic.com"),
  gatewayMaxBodyBytes: int("GATEWAY_MAX_BODY_BYTES", 32 * 1024 * 1024, 1024),
  gatewayConnectTimeoutMs: int("GATEWAY_CONNECT_TIMEOUT_MS", 10_000, 10),
  gatewayHeadersTimeoutMs: int("GATEWAY_HEADERS_TIMEOUT_MS", 600_000, 10),
  gatewayIdleTimeoutMs: int("GATEWAY_IDLE_TIMEOUT_MS", 300_000, 10),
  gatewayTotalTimeoutMs: int("GATEWAY_TOTAL_TIMEOUT_MS", 3_600_000, 10),
  /** Calls per minute per key on `/gateway/*` (default RATE_LIMIT_PER_MINUTE). */
  gatewayRateLimitPerMinute: optionalInt("GATEWAY_RATE_LIMIT_PER_MINUTE", 1),
  /** How often calls a crash left open are notarized `failed` (5 min; tests shorten it). */
  gatewaySweepMs: int("GATEWAY_SWEEP_MS", 300_000, 10),
  /** Code review (CONTRACT-sdk-beyond §7): GitHub's API when a configuration names none (Enterprise: https://host/api/v3). */
  githubApiUrl: string("GITHUB_API_URL", "https://api.github.com"),
  /** The model's budget for one pull request review. */
  codeReviewTimeoutMs: int("CODE_REVIEW_TIMEOUT_MS", 120_000, 10),
  /** How often the review jobs look for work (queued reviews, approvals decided). */
  codeReviewPollMs: int("CODE_REVIEW_POLL_MS", 1_000, 10),
  /** A review whose process has not renewed its lease this long is taken over (a crashed process's). */
  codeReviewLeaseMs: int("CODE_REVIEW_LEASE_MS", 60_000, 100),
  tsaUrl: optional("TSA_URL"),
  smtpUrl: optional("SMTP_URL"),
  /** Sender of approval e-mails (default `approvals@<host of BASE_URL>`). */
  smtpFrom: optional("SMTP_FROM"),
  /** Feature flags with an environment default (`ENABLE_<KEY>`, on unless "false"), as self-hosted flag resolution reads them. */
  features: EffectConfig.all({
    outputFiltering: boolean("ENABLE_OUTPUT_FILTERING", true),
    slackIntegration: boolean("ENABLE_SLACK_INTEGRATION", true),
    teamsIntegration: boolean("ENABLE_TEAMS_INTEGRATION", true)
  }),
  ci: boolean("CI", false),
  /** This runner's address for its peers (CLUSTER_MODE=sql). */
  runnerHost: optional("RUNNER_HOST"),
  runnerPort: int("RUNNER_PORT", 34431, 1),
  /** Agent/org actors resident at once (idle ones are passivated). */
  maxResidentEntities: int("MAX_RESIDENT_ENTITIES", 100_000, 1)
}).pipe(
  EffectConfig.mapEffect((read) => {
    if (read.clusterMode === "sql" && read.databaseUrl === undefined) return Effect.fail(invalid("CLUSTER_MODE=sql needs DATABASE_URL (the runners share Postgres)"))
    const baseUrl = (read.baseUrl ?? `http://${read.host}:${read.port}`).replace(/\/+$/, "")
    if (!/^https?:\/\/[^/]/.test(baseUrl)) return Effect.fail(invalid(`BASE_URL must be an absolute http(s) URL, got "${read.baseUrl}"`))
    const allowPrivate = Result.try(() => parseCidrList(read.outboundAllowPrivate))
    if (Result.isFailure(allowPrivate)) return Effect.fail(invalid(String((allowPrivate.failure as Error).message ?? allowPrivate.failure)))
    return Effect.succeed({
      ...read,
      baseUrl,
      publicRateLimitPerMinute: read.publicRateLimitPerMinute ?? read.rateLimitPerMinute,
      gatewayRateLimitPerMinute: read.gatewayRateLimitPerMinute ?? read.rateLimitPerMinute,
      githubApiUrl: read.githubApiUrl.replace(/\/+$/, ""),
      runnerHost: read.runnerHost ?? read.host
    })
  })
)

/**
 * The configuration of an environment record (`process.env` by default; tests
 * pass their own). Throws at start with the variable and value at fault.
 */
export const loadConfig = (env: Record<string, string | undefined> = process.env): AppConfig => {
  const result = Effect.runSync(Effect.result(appConfig.parse(ConfigProvider.fromEnvRecord(env))))
  if (Result.isFailure(result)) throw new Error(result.failure.cause.message)
  const flagEnvironment = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[0].startsWith("ENABLE_") && entry[1] !== undefined && entry[1] !== "")
  )
  // Every ENABLE_* is read as the one yes/no: an unreadable value stops the start, not a silent default.
  for (const [name, value] of Object.entries(flagEnvironment)) {
    const parsed = parseBoolean(name, value)
    if (Result.isFailure(parsed)) throw new Error(parsed.failure)
  }
  return { ...result.success, flagEnvironment }
}

/** The configuration, and the outbound policy parsed from it once. */
export const configLayer = (config: AppConfig) => Layer.merge(Layer.succeed(Config)(config), Layer.succeed(Outbound)(Outbound.ofConfig(config)))

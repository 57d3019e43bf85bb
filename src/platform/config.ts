/**
 * Service configuration, read once from the environment (CONTRACT.md "Running it").
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

export type DeploymentMode = "selfhosted" | "cloud"

export interface AppConfig {
  readonly port: number
  readonly host: string
  readonly baseUrl: string
  readonly dataDir: string
  readonly databaseUrl: string | undefined
  readonly redisUrl: string | undefined
  /** Prefix of every Redis key and channel (several deployments, or test runs, on one Redis). */
  readonly redisKeyPrefix: string
  readonly adminKey: string | undefined
  readonly deploymentMode: DeploymentMode
  readonly rateLimitPerMinute: number
  readonly publicRateLimitPerMinute: number
  readonly outboundAllowPrivate: string | undefined
  readonly outboundAllowHttp: boolean
  readonly masterKey: string | undefined
  readonly maxJsonBodyBytes: number
  readonly maxMultipartBodyBytes: number
  readonly bodyTimeoutMs: number
  /** A body with less than 160 KB of progress within this window is 408 (below uWS's own 8–12 s cut-off). */
  readonly bodyIdleTimeoutMs: number
  readonly maxConnections: number
  readonly shutdownGraceMs: number
  /** Lifetime of pending approvals and approval codes (APPROVAL_TTL_HOURS, or APPROVAL_TTL_MS for tests). */
  readonly approvalTtlMs: number
  /** How often pending approvals are checked for expiry. */
  readonly approvalSweepMs: number
  readonly tsaUrl: string | undefined
  readonly smtpUrl: string | undefined
  /** Sender of approval e-mails (default `approvals@<host of BASE_URL>`). */
  readonly smtpFrom: string | undefined
  /** Feature flags with an environment default (`ENABLE_<KEY>`, on unless "false"), as self-hosted flag resolution reads them. */
  readonly features: {
    readonly outputFiltering: boolean
    readonly slackIntegration: boolean
    readonly teamsIntegration: boolean
  }
  readonly logLevel: "debug" | "info" | "warn" | "error" | "silent"
  readonly ci: boolean
  /** Where the actors run: one in-memory runner, or SQL-backed sharding over the shared Postgres. */
  readonly clusterMode: "memory" | "sql"
  /** This runner's address for its peers (CLUSTER_MODE=sql). */
  readonly runnerHost: string
  readonly runnerPort: number
  /** Agent/org actors resident at once (idle ones are passivated). */
  readonly maxResidentEntities: number
}

export class Config extends Context.Service<Config, AppConfig>()("gateway/Config") {}

const int = (value: string | undefined, fallback: number, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
  if (value === undefined || value === "") return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `between ${min} and ${max}`
    throw new Error(`${name} must be an integer ${range}, got "${value}"`)
  }
  return parsed
}

const bool = (value: string | undefined): boolean => value !== undefined && /^(1|true|yes|on)$/i.test(value)

/** A default-on feature flag: only an explicit false/0/no/off turns it off. */
const featureOn = (value: string | undefined): boolean => value === undefined || !/^(0|false|no|off)$/i.test(value.trim())

/** The port in a did:web / URL host is written as `host%3Aport`; BASE_URL keeps the plain form. */
export const loadConfig = (env: NodeJS.ProcessEnv = process.env): AppConfig => {
  const port = int(env.PORT, 8080, "PORT")
  const host = env.HOST || "127.0.0.1"
  const mode = env.DEPLOYMENT_MODE || "selfhosted"
  if (mode !== "selfhosted" && mode !== "cloud") throw new Error(`DEPLOYMENT_MODE must be selfhosted or cloud, got "${mode}"`)
  const level = (env.LOG_LEVEL || "info") as AppConfig["logLevel"]
  const clusterMode = env.CLUSTER_MODE || "memory"
  if (clusterMode !== "memory" && clusterMode !== "sql") throw new Error(`CLUSTER_MODE must be memory or sql, got "${clusterMode}"`)
  if (clusterMode === "sql" && !env.DATABASE_URL) throw new Error("CLUSTER_MODE=sql needs DATABASE_URL (the runners share Postgres)")
  const baseUrl = (env.BASE_URL || `http://${host}:${port}`).replace(/\/+$/, "")
  if (!/^https?:\/\/[^/]/.test(baseUrl)) throw new Error(`BASE_URL must be an absolute http(s) URL, got "${env.BASE_URL}"`)
  return {
    port,
    host,
    baseUrl,
    dataDir: env.DATA_DIR || "./data",
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || "",
    adminKey: env.ADMIN_KEY || undefined,
    deploymentMode: mode,
    rateLimitPerMinute: int(env.RATE_LIMIT_PER_MINUTE, 60, "RATE_LIMIT_PER_MINUTE", 1),
    publicRateLimitPerMinute: int(env.PUBLIC_RATE_LIMIT_PER_MINUTE, env.RATE_LIMIT_PER_MINUTE ? int(env.RATE_LIMIT_PER_MINUTE, 60, "RATE_LIMIT_PER_MINUTE", 1) : 60, "PUBLIC_RATE_LIMIT_PER_MINUTE", 1),
    outboundAllowPrivate: env.OUTBOUND_ALLOW_PRIVATE || undefined,
    outboundAllowHttp: bool(env.OUTBOUND_ALLOW_HTTP),
    masterKey: env.MASTER_KEY || undefined,
    maxJsonBodyBytes: int(env.MAX_BODY_BYTES, 1024 * 1024, "MAX_BODY_BYTES", 1024),
    maxMultipartBodyBytes: int(env.MAX_MULTIPART_BYTES, 50 * 1024 * 1024, "MAX_MULTIPART_BYTES", 1024),
    bodyTimeoutMs: int(env.BODY_TIMEOUT_MS, 30_000, "BODY_TIMEOUT_MS", 100),
    // uWS may drop a stalled body 8 s after its last progress; ours must answer first.
    bodyIdleTimeoutMs: int(env.BODY_IDLE_TIMEOUT_MS, 6_000, "BODY_IDLE_TIMEOUT_MS", 100, 7_000),
    maxConnections: int(env.MAX_CONNECTIONS, 0, "MAX_CONNECTIONS"),
    shutdownGraceMs: int(env.SHUTDOWN_GRACE_MS, 10_000, "SHUTDOWN_GRACE_MS"),
    approvalTtlMs: env.APPROVAL_TTL_MS
      ? int(env.APPROVAL_TTL_MS, 0, "APPROVAL_TTL_MS", 1)
      : int(env.APPROVAL_TTL_HOURS, 72, "APPROVAL_TTL_HOURS", 1) * 3_600_000,
    approvalSweepMs: int(env.APPROVAL_SWEEP_MS, 30_000, "APPROVAL_SWEEP_MS", 10),
    tsaUrl: env.TSA_URL || undefined,
    smtpUrl: env.SMTP_URL || undefined,
    smtpFrom: env.SMTP_FROM || undefined,
    features: {
      outputFiltering: featureOn(env.ENABLE_OUTPUT_FILTERING),
      slackIntegration: featureOn(env.ENABLE_SLACK_INTEGRATION),
      teamsIntegration: featureOn(env.ENABLE_TEAMS_INTEGRATION)
    },
    logLevel: ["debug", "info", "warn", "error", "silent"].includes(level) ? level : "info",
    ci: bool(env.CI),
    clusterMode,
    runnerHost: env.RUNNER_HOST || host,
    runnerPort: int(env.RUNNER_PORT, 34431, "RUNNER_PORT", 1),
    maxResidentEntities: int(env.MAX_RESIDENT_ENTITIES, 100_000, "MAX_RESIDENT_ENTITIES", 1)
  }
}

export const configLayer = (config: AppConfig) => Layer.succeed(Config)(config)

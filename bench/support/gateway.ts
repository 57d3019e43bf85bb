/**
 * The gateway as a separate process for benchmarks: started from the sources
 * (tsx) or from a build, waited for until `/health` answers, stopped with
 * SIGINT (so `--cpu-prof` can write its profile); plus the org and policy set
 * the authorize benchmarks load against.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { freePort } from "../../test/support/server.js"
import { startEnv } from "./build.js"

export interface GatewayProcess {
  readonly url: string
  readonly pid: number
  readonly stop: () => Promise<void>
}

export const startGateway = async (options: {
  readonly env: Record<string, string>
  /** A build directory (`npm run build` output); the sources through tsx otherwise. */
  readonly dist?: string | undefined
  readonly nodeArgs?: ReadonlyArray<string>
  readonly timeoutMs?: number
}): Promise<GatewayProcess> => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const entry = options.dist ? [`${options.dist}/src/main.js`] : ["--import", "tsx", "src/main.ts"]
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry], {
    env: {
      ...process.env,
      ...startEnv(),
      HOST: "127.0.0.1",
      PORT: String(port),
      BASE_URL: url,
      REDIS_URL: "",
      MASTER_KEY: "3333333333333333333333333333333333333333333333333333333333333333",
      RATE_LIMIT_PER_MINUTE: "1000000000",
      PUBLIC_RATE_LIMIT_PER_MINUTE: "1000000000",
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error",
      ...options.env
    },
    stdio: ["ignore", "inherit", "inherit"]
  })
  for (const deadline = Date.now() + (options.timeoutMs ?? 60_000); ; ) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("gateway did not start")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGINT")
        setTimeout(() => child.kill("SIGKILL"), 15_000).unref()
      })
  }
}

export const post = async (url: string, path: string, token: string, body: unknown) => {
  const reply = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body)
  })
  const parsed = (await reply.json()) as any
  if (reply.status >= 300) throw new Error(`${path} answered ${reply.status}: ${JSON.stringify(parsed)}`)
  return parsed
}

export const AGENTS = 100
export const POLICIES = 10

/** Registers an organization with POLICIES active rules policies of 3 conditions that the load never meets; its key. */
export const benchOrganization = async (url: string): Promise<string> => {
  const registered = await fetch(`${url}/api/v1/auth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.test", password: "benchmark password", org_name: "Bench" })
  }).then((r) => r.json() as Promise<any>)
  const token: string = registered.api_key.key
  for (let index = 0; index < POLICIES; index++) {
    await post(url, "/api/v1/policies", token, {
      name: `guard ${index}`,
      mode: "rules",
      decision: index % 2 === 0 ? "deny" : "require_approval",
      activate: true,
      conditions: [
        { field: "action_type", op: "eq", value: `forbidden.${index}` },
        { field: "context.amount", op: "gt", value: 1_000_000 + index },
        { field: "agent_id", op: "eq", value: `rogue-${index}` }
      ]
    })
  }
  return token
}

let counter = 0
/** An authorize body that every policy of `benchOrganization` allows, spread over AGENTS agents. */
export const authorizeBody = () =>
  JSON.stringify({
    action_type: "payment.transfer",
    details: `transfer ${++counter} EUR to supplier`,
    agent_id: `agent-${Math.floor(Math.random() * AGENTS)}`,
    context: { amount: counter % 500 }
  })

/** Resident and proportional set size of a process, in KB (PSS shares pages fairly among processes). */
export const memoryOf = (pid: number): { rss_kb: number; pss_kb: number } => {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0)
    return { rss_kb: field("Rss"), pss_kb: field("Pss") }
  } catch {
    return { rss_kb: 0, pss_kb: 0 }
  }
}

/** A process and its descendants (from /proc), for a server that forks (Postgres). */
export const processTree = (root: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      const list = children.get(ppid) ?? []
      list.push(Number(entry))
      children.set(ppid, list)
    } catch {
      // gone meanwhile
    }
  }
  const out: Array<number> = []
  const walk = (pid: number) => {
    out.push(pid)
    for (const child of children.get(pid) ?? []) walk(child)
  }
  walk(root)
  return out
}

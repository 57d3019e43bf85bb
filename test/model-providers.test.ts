/**
 * Every provider SDK calls only through the fetch it is given (the outbound client in the
 * gateway), at the vendor's own host, with the organization's credentials: with the process
 * environment pointing every SDK fallback (base URLs, AWS and Google credentials) at a loopback
 * listener and the global fetch refusing, no connection reaches the listener, the global fetch is
 * never used and no request carries a value from the environment. Vertex gets its token from
 * Google's fixed endpoint through the same fetch, signed with the organization's key.
 */
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generateText } from "ai"
import fc from "fast-check"
import { importSPKI, jwtVerify } from "jose"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import type { ProviderSlug } from "../protocol/provider-credentials.js"
import { providerModel } from "../src/models/providers.js"
import type { FetchLike } from "../src/platform/outbound/index.js"
import { storedFieldsProblem } from "../src/provider-credentials/fields.js"
import { parseServiceAccount } from "../src/provider-credentials/service-account.js"

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
const PRIVATE_PEM = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
const PUBLIC_PEM = publicKey.export({ type: "spki", format: "pem" }).toString()
const SERVICE_ACCOUNT = JSON.stringify({
  type: "service_account",
  project_id: "tenant-project",
  private_key_id: "abc123",
  private_key: PRIVATE_PEM,
  client_email: "agent@tenant-project.iam.gserviceaccount.com",
  client_id: "1234567890",
  auth_uri: "https://accounts.google.com/o/oauth2/auth",
  token_uri: "https://oauth2.googleapis.com/token",
  auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs",
  client_x509_cert_url: "https://www.googleapis.com/robot/v1/metadata/x509/agent%40tenant-project.iam.gserviceaccount.com",
  universe_domain: "googleapis.com"
})

interface Recorded {
  readonly url: string
  readonly method: string
  readonly headers: Record<string, string>
  readonly body: string
}

/** Records each request; answers Google's token endpoint with a token and everything else with a 500. */
const recordingFetch = (): { fetch: FetchLike; calls: Array<Recorded> } => {
  const calls: Array<Recorded> = []
  const fetch: FetchLike = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    calls.push({ url, method: init?.method ?? "GET", headers, body: typeof init?.body === "string" ? init.body : "" })
    if (url === "https://oauth2.googleapis.com/token") return Response.json({ access_token: "ya29.tenant-token", expires_in: 3600, token_type: "Bearer" })
    return Response.json({ error: { message: "recorded, not answered" } }, { status: 500 })
  }
  return { fetch, calls }
}

let listener: Server
let connections = 0
let directory: string
const savedEnv = { ...process.env }

beforeAll(async () => {
  listener = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
  const port = (listener.address() as { port: number }).port
  const trap = `http://127.0.0.1:${port}`
  directory = mkdtempSync(join(tmpdir(), "provider-env-"))
  const adcFile = join(directory, "adc.json")
  writeFileSync(adcFile, JSON.stringify({ type: "external_account", audience: "x", subject_token_type: "x", token_url: `${trap}/token`, credential_source: { url: `${trap}/source` } }))
  Object.assign(process.env, {
    OPENAI_BASE_URL: `${trap}/v1`,
    OPENAI_API_KEY: "env-openai-key",
    ANTHROPIC_BASE_URL: `${trap}/v1`,
    ANTHROPIC_API_KEY: "env-anthropic-key",
    GOOGLE_GENERATIVE_AI_API_KEY: "env-google-key",
    AWS_ENDPOINT_URL: trap,
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: trap,
    AWS_BEARER_TOKEN_BEDROCK: "env-bedrock-bearer",
    AWS_SESSION_TOKEN: "env-session-token",
    AWS_ACCESS_KEY_ID: "env-access-key",
    AWS_SECRET_ACCESS_KEY: "env-secret-key",
    AWS_REGION: "env-region-1",
    AZURE_API_KEY: "env-azure-key",
    GOOGLE_VERTEX_API_KEY: "env-vertex-key",
    GOOGLE_VERTEX_PROJECT: "env-project",
    GOOGLE_VERTEX_LOCATION: "env-location",
    GOOGLE_APPLICATION_CREDENTIALS: adcFile
  })
  vi.stubGlobal("fetch", () => Promise.reject(new Error("the global fetch must not be used")))
})

afterAll(async () => {
  vi.unstubAllGlobals()
  for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name]
  Object.assign(process.env, savedEnv)
  rmSync(directory, { recursive: true, force: true })
  await new Promise<void>((resolve) => listener.close(() => resolve()))
})

const FIELDS: Record<ProviderSlug, Record<string, string>> = {
  direct_a: { api_key: "sk-ant-tenant" },
  direct_b: { api_key: "sk-openai-tenant" },
  direct_c: { api_key: "google-tenant-key" },
  cloud_a: { access_key_id: "AKIATENANT", secret_access_key: "tenant-secret", region: "eu-west-1" },
  cloud_b: { endpoint: "https://tenant.openai.azure.com", api_key: "azure-tenant-key", api_version: "2025-04-01-preview" },
  cloud_c: { project_id: "tenant-project", region: "europe-west4", service_account_json: SERVICE_ACCOUNT }
}

const EXPECTED_ORIGIN: Record<ProviderSlug, string> = {
  direct_a: "https://api.anthropic.com",
  direct_b: "https://api.openai.com",
  direct_c: "https://generativelanguage.googleapis.com",
  cloud_a: "https://bedrock-runtime.eu-west-1.amazonaws.com",
  cloud_b: "https://tenant.openai.azure.com",
  cloud_c: "https://europe-west4-aiplatform.googleapis.com"
}

const ask = async (slug: ProviderSlug, fields: Record<string, string>) => {
  const recorder = recordingFetch()
  const built = await providerModel(slug, fields, "some-model", recorder.fetch)
  if ("problem" in built) throw new Error(built.problem)
  await expect(generateText({ model: built.model, prompt: "hello", maxRetries: 0 })).rejects.toThrow()
  return recorder.calls
}

describe("provider SDKs and the outbound fetch", () => {
  for (const slug of Object.keys(FIELDS) as Array<ProviderSlug>) {
    it(`${slug}: only the given fetch, at the vendor's host, with the organization's credentials`, async () => {
      expect(storedFieldsProblem(slug, FIELDS[slug])).toBeUndefined()
      const calls = await ask(slug, FIELDS[slug])
      const modelCalls = calls.filter((recorded) => !recorded.url.startsWith("https://oauth2.googleapis.com/"))
      expect(modelCalls.length).toBeGreaterThan(0)
      for (const recorded of modelCalls) expect(new URL(recorded.url).origin).toBe(EXPECTED_ORIGIN[slug])
      for (const recorded of calls) expect(JSON.stringify(recorded.headers)).not.toMatch(/env-/)
      expect(connections).toBe(0)
    })
  }

  it("cloud_a signs with the organization's keys and sends no session token", async () => {
    const [call] = await ask("cloud_a", FIELDS.cloud_a)
    expect(call!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIATENANT\//)
    expect(call!.headers["x-amz-security-token"]).toBeUndefined()
  })

  it("cloud_c mints its token at Google's endpoint with a JWT signed by the organization's key, and uses it", async () => {
    // Another key id: not in the token cache the loop above filled.
    const key = JSON.stringify({ ...JSON.parse(SERVICE_ACCOUNT), private_key_id: "fresh456" })
    const calls = await ask("cloud_c", { ...FIELDS.cloud_c, service_account_json: key })
    const tokenCalls = calls.filter((recorded) => recorded.url === "https://oauth2.googleapis.com/token")
    expect(tokenCalls).toHaveLength(1)
    const form = new URLSearchParams(tokenCalls[0]!.body)
    expect(form.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer")
    const { payload, protectedHeader } = await jwtVerify(form.get("assertion")!, await importSPKI(PUBLIC_PEM, "RS256"), { audience: "https://oauth2.googleapis.com/token" })
    expect(payload.iss).toBe("agent@tenant-project.iam.gserviceaccount.com")
    expect(payload.scope).toBe("https://www.googleapis.com/auth/cloud-platform")
    expect(protectedHeader.kid).toBe("fresh456")
    const modelCall = calls.find((recorded) => recorded.url.startsWith(EXPECTED_ORIGIN.cloud_c))!
    expect(modelCall.headers.authorization).toBe("Bearer ya29.tenant-token")
    expect(modelCall.url).toContain("/projects/tenant-project/locations/europe-west4/")
  })

  it("cloud_c without a service-account key, or with another credential type, is not called at all", async () => {
    const recorder = recordingFetch()
    const { service_account_json: _, ...withoutKey } = FIELDS.cloud_c
    expect(await providerModel("cloud_c", withoutKey, "gemini-2.5-pro", recorder.fetch)).toMatchObject({ problem: expect.stringContaining("service_account_json") })
    const external = JSON.stringify({ type: "external_account", token_url: "http://127.0.0.1/", credential_source: { file: "/proc/self/environ" } })
    expect(await providerModel("cloud_c", { ...withoutKey, service_account_json: external }, "gemini-2.5-pro", recorder.fetch)).toMatchObject({ problem: expect.stringContaining("service_account") })
    expect(recorder.calls).toEqual([])
  })
})

describe("the service-account parser", () => {
  const genuine = JSON.parse(SERVICE_ACCOUNT) as Record<string, unknown>
  const URL_FIELDS = ["token_uri", "universe_domain", "auth_uri", "auth_provider_x509_cert_url", "client_x509_cert_url"]

  it("accepts a key file as Google issues it", () => {
    expect(parseServiceAccount(SERVICE_ACCOUNT)).toMatchObject({ key: { clientEmail: "agent@tenant-project.iam.gserviceaccount.com", privateKeyId: "abc123" } })
  })

  it("refuses any other type, any field a key file does not have, and any URL field that is not Google's", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string().filter((type) => type !== "service_account").map((type) => ({ ...genuine, type })),
          fc.string({ minLength: 1 }).filter((name) => !(name in genuine) && !["project_id", "client_id", "private_key_id"].includes(name)).map((name) => ({ ...genuine, [name]: "x" })),
          fc.tuple(fc.constantFrom(...URL_FIELDS), fc.webUrl()).map(([name, url]) => ({ ...genuine, [name]: url }))
        ),
        (candidate) => {
          expect(parseServiceAccount(JSON.stringify(candidate))).toHaveProperty("problem")
        }
      )
    )
  })

  it("refuses text that is not a JSON object, and keys that are not RSA", () => {
    const { privateKey: ecKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    for (const text of ["", "[]", "null", '"service_account"', "{", JSON.stringify({ ...genuine, private_key: ecKey.export({ type: "pkcs8", format: "pem" }) })]) {
      expect(parseServiceAccount(text)).toHaveProperty("problem")
    }
  })
})

/**
 * Custom models: the organization's own OpenAI-compatible endpoints. The list (paged in the page,
 * the API answers it whole), a form that registers one (the Authorization value is write-only:
 * the API answers only `has_auth`), "Test" (the API calls the endpoint and answers the verdict or
 * the failure inside a 200) and delete with a confirmation. Each model has its page, where it is
 * edited; another organization's id shows the not-found state.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { ConfirmButton } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, ErrorLine, Link, LoadView, Pager, pageOf, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import {
  type CustomModel,
  type CustomModelPatch,
  type CustomModelTest,
  createCustomModel,
  deleteCustomModel,
  getCustomModel,
  listCustomModels,
  type NewCustomModel,
  testCustomModel,
  updateCustomModel
} from "./api.ts"
import { pageSlice, yesNo } from "./shared.tsx"

const modelPath = (id: string) => `${BASE}/custom-models/${encodeURIComponent(id)}`

const StatusBadge = ({ model }: { model: CustomModel }) => <span class={`status test-${model.status}`}>{model.status}</span>

export const CustomModelsSection = ({ search }: { search: string }) => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => listCustomModels(session.token), [session.token])
  return (
    <>
      <PageHeading>Custom models</PageHeading>
      <p class="hint">
        Your own OpenAI-compatible endpoints (HTTPS), used in cases and policies as <code>custom:&lt;model id&gt;</code>.
      </p>
      <section aria-labelledby="custom-list-title">
        <h2 id="custom-list-title" tabIndex={-1}>
          Registered models
        </h2>
        <LoadView loaded={loaded} retry={reload} what="the custom models">
          {({ data }) => {
            const { items, pagination } = pageSlice(data, pageOf(search))
            return items.length === 0 ? (
              <Empty>No custom models yet.</Empty>
            ) : (
              <>
                <div class="table-scroll">
                  <table class="case-table">
                    <caption class="visually-hidden">Custom models</caption>
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col">Model id</th>
                        <th scope="col">Endpoint</th>
                        <th scope="col">Authorization</th>
                        <th scope="col">Last test</th>
                        <th scope="col">Actions</th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((model) => (
                        <CustomModelRow key={model.id} model={model} onChanged={reload} />
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager pagination={pagination} search={search} label="Custom models" />
              </>
            )
          }}
        </LoadView>
      </section>
      <NewCustomModelForm />
    </>
  )
}

const CustomModelRow = ({ model, onChanged }: { model: CustomModel; onChanged: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [result, setResult] = useState<CustomModelTest | undefined>()
  return (
    <tr data-custom-model={model.id}>
      <td data-label="Name" class="wrap">
        <Link href={modelPath(model.id)}>{model.name}</Link>
      </td>
      <td data-label="Model id">
        <code class="wrap">custom:{model.model_id}</code>
      </td>
      <td data-label="Endpoint" class="wrap">
        {model.endpoint_url}
      </td>
      <td data-label="Authorization">{model.has_auth ? "set (hidden)" : "none"}</td>
      <td data-label="Last test">
        <StatusBadge model={model} /> {model.last_tested === null ? "" : <time dateTime={model.last_tested}>{localTime(model.last_tested)}</time>}
      </td>
      <td data-label="Actions">
        <span class="actions-row">
          <button
            type="button"
            disabled={busy}
            aria-label={`Test ${model.name}`}
            onClick={() => {
              setResult(undefined)
              void submit(async () => {
                const answer = await testCustomModel(session.token, model.id)
                setResult(answer)
                announce(`Test of ${model.name}: ${answer.status}.`)
                onChanged()
              })
            }}
          >
            Test
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete ${model.name}? Cases and policies naming it stop using it.`}
            busy={busy}
            onConfirm={() =>
              void submit(async () => {
                await deleteCustomModel(session.token, model.id)
                announce(`${model.name} deleted.`)
                onChanged()
                document.getElementById("custom-list-title")?.focus()
              })
            }
          />
        </span>
        {busy && (
          <p role="status" class="loading">
            Working…
          </p>
        )}
        <ErrorLine message={error} />
        {result !== undefined && <TestResult result={result} />}
      </td>
    </tr>
  )
}

/** What the endpoint answered to the test: the verdict it gave, or why it failed. */
const TestResult = ({ result }: { result: CustomModelTest }) => (
  <div class={`test-result test-${result.status}`} role="status" data-test-status={result.status}>
    <p>
      <strong>{result.status === "ok" ? "The endpoint answered as expected" : "The test failed"}</strong> in {result.latency_ms} ms; answer in the expected shape:{" "}
      {yesNo(result.response_valid)}.
    </p>
    {result.error !== null && <p class="error">{result.error}</p>}
    {result.structured_output !== null && (
      <dl class="facts">
        <dt>Decision</dt>
        <dd>{result.structured_output.decision}</dd>
        <dt>Confidence</dt>
        <dd>{result.structured_output.confidence}</dd>
        <dt>Key factors</dt>
        <dd>{result.structured_output.key_factors.join("; ") || "none"}</dd>
        <dt>Reasoning</dt>
        <dd class="pre">{result.structured_output.reasoning}</dd>
      </dl>
    )}
  </div>
)

const NewCustomModelForm = () => {
  const { session, announce } = useApp()
  const [name, setName] = useState("")
  const [modelId, setModelId] = useState("")
  const [endpoint, setEndpoint] = useState("")
  const [auth, setAuth] = useState("")
  const [timeout, setTimeoutMs] = useState("")
  const [contentPath, setContentPath] = useState("")
  const [problem, setProblem] = useState<string | undefined>()
  const { busy, error, submit } = useSubmit()
  return (
    <section aria-labelledby="new-custom-title" class="new-case platform-section">
      <h2 id="new-custom-title">Register a model</h2>
      <form
        class="settings-form"
        autocomplete="off"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          if (name.trim() === "" || modelId.trim() === "" || endpoint.trim() === "") {
            setProblem("Fill in the name, the model id and the endpoint URL.")
            return
          }
          if (!/^https?:\/\/\S+$/i.test(endpoint.trim())) {
            setProblem("The endpoint must be a URL such as https://models.example.com/v1.")
            return
          }
          const ms = timeout.trim() === "" ? undefined : Number(timeout)
          if (ms !== undefined && !(Number.isInteger(ms) && ms >= 1_000 && ms <= 120_000)) {
            setProblem("The timeout is a whole number of milliseconds from 1,000 to 120,000.")
            return
          }
          setProblem(undefined)
          const body: NewCustomModel = {
            name: name.trim(),
            model_id: modelId.trim(),
            endpoint_url: endpoint.trim(),
            ...(auth === "" ? {} : { auth_header: auth }),
            ...(ms === undefined ? {} : { timeout_ms: ms }),
            ...(contentPath.trim() === "" ? {} : { response_schema: { content_path: contentPath.trim() } })
          }
          void submit(async () => {
            try {
              const created = await createCustomModel(session.token, body)
              announce(`${created.name} registered.`)
              navigate(modelPath(created.id))
            } finally {
              // The Authorization value leaves the page whatever the answer.
              setAuth("")
            }
          })
        }}
      >
        <div class="stack">
          <label for="custom-name">Name</label>
          <input id="custom-name" maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="custom-model-id">Model id</label>
          <input id="custom-model-id" maxLength={100} value={modelId} aria-describedby="custom-model-id-hint" onInput={(event) => setModelId(event.currentTarget.value)} />
          <p id="custom-model-id-hint" class="hint">
            Unique in your organization; named <code>custom:&lt;model id&gt;</code> elsewhere.
          </p>
        </div>
        <div class="stack">
          <label for="custom-endpoint">Endpoint URL</label>
          <input id="custom-endpoint" type="url" value={endpoint} placeholder="https://models.example.com/v1" onInput={(event) => setEndpoint(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="custom-auth">Authorization header value (optional)</label>
          <input
            id="custom-auth"
            class="secret-field"
            type="password"
            autocomplete="off"
            value={auth}
            aria-describedby="custom-auth-hint"
            onInput={(event) => setAuth(event.currentTarget.value)}
          />
          <p id="custom-auth-hint" class="hint">
            Sent as the Authorization value, for example <code>Bearer …</code>. Stored encrypted, never shown again.
          </p>
        </div>
        <div class="stack">
          <label for="custom-timeout">Timeout in milliseconds (optional)</label>
          <input id="custom-timeout" class="short" inputMode="numeric" value={timeout} placeholder="30000" onInput={(event) => setTimeoutMs(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="custom-content-path">Answer path in the reply (optional)</label>
          <input id="custom-content-path" value={contentPath} placeholder="choices.0.message.content" onInput={(event) => setContentPath(event.currentTarget.value)} />
        </div>
        <ErrorLine message={problem ?? error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Register model
          </button>
        </div>
      </form>
    </section>
  )
}

export const CustomModelPage = ({ modelId }: { modelId: string }) => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => getCustomModel(session.token, modelId), [session.token, modelId])
  return (
    <>
      {loaded.state === "ready" ? (
        <PageHeading>{loaded.value.name}</PageHeading>
      ) : (
        <PageHeading>{loaded.state === "failed" && loaded.status === 404 ? "Custom model not found" : "Custom model"}</PageHeading>
      )}
      <p>
        <Link href="custom-models">All custom models</Link>
      </p>
      <LoadView loaded={loaded} retry={reload} what="the custom model">
        {(model) => <CustomModelDetail model={model} onChanged={reload} />}
      </LoadView>
    </>
  )
}

const CustomModelDetail = ({ model, onChanged }: { model: CustomModel; onChanged: () => void }) => {
  const { session, announce } = useApp()
  const tester = useSubmit()
  const remover = useSubmit()
  const [result, setResult] = useState<CustomModelTest | undefined>()
  const resultRef = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (result !== undefined) resultRef.current?.focus()
  }, [result])
  return (
    <>
      <dl class="facts" data-custom-model={model.id}>
        <dt>Model id</dt>
        <dd>
          <code>custom:{model.model_id}</code>
        </dd>
        <dt>Endpoint</dt>
        <dd class="wrap">{model.endpoint_url}</dd>
        <dt>Authorization</dt>
        <dd>{model.has_auth ? "set (hidden)" : "none"}</dd>
        <dt>Timeout</dt>
        <dd>{model.timeout_ms.toLocaleString()} ms</dd>
        <dt>Answer path</dt>
        <dd>
          <code>{String(model.response_schema.content_path ?? "choices.0.message.content")}</code>
        </dd>
        <dt>Last test</dt>
        <dd>
          <StatusBadge model={model} /> {model.last_tested === null ? "never" : <time dateTime={model.last_tested}>{localTime(model.last_tested)}</time>}
        </dd>
        <dt>Registered</dt>
        <dd>
          <time dateTime={model.created_at}>{localTime(model.created_at)}</time>
        </dd>
      </dl>
      <div class="actions-row">
        <button
          type="button"
          class="primary"
          disabled={tester.busy}
          onClick={() =>
            void tester.submit(async () => {
              setResult(undefined)
              const answer = await testCustomModel(session.token, model.id)
              setResult(answer)
              announce(`Test of ${model.name}: ${answer.status}.`)
              onChanged()
            })
          }
        >
          Test
        </button>
        <ConfirmButton
          label="Delete"
          question={`Delete ${model.name}? Cases and policies naming it stop using it.`}
          busy={remover.busy}
          onConfirm={() =>
            void remover.submit(async () => {
              await deleteCustomModel(session.token, model.id)
              announce(`${model.name} deleted.`)
              navigate(`${BASE}/custom-models`)
            })
          }
        />
      </div>
      {tester.busy && (
        <p role="status" class="loading">
          Calling the endpoint…
        </p>
      )}
      <ErrorLine message={tester.error ?? remover.error} />
      {result !== undefined && (
        <div tabIndex={-1} ref={resultRef} class="platform-section">
          <h2>Test result</h2>
          <TestResult result={result} />
        </div>
      )}
      <EditCustomModel model={model} onSaved={onChanged} />
    </>
  )
}

const EditCustomModel = ({ model, onSaved }: { model: CustomModel; onSaved: () => void }) => {
  const { session, announce } = useApp()
  const [name, setName] = useState(model.name)
  const [endpoint, setEndpoint] = useState(model.endpoint_url)
  const [timeout, setTimeoutMs] = useState(String(model.timeout_ms))
  const [auth, setAuth] = useState("")
  const [removeAuth, setRemoveAuth] = useState(false)
  const [problem, setProblem] = useState<string | undefined>()
  const [saved, setSaved] = useState<string | undefined>()
  const { busy, error, submit } = useSubmit()
  return (
    <section aria-labelledby="edit-custom-title" class="new-case platform-section">
      <h2 id="edit-custom-title">Change</h2>
      <form
        class="settings-form"
        autocomplete="off"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          setSaved(undefined)
          const ms = Number(timeout)
          if (!(Number.isInteger(ms) && ms >= 1_000 && ms <= 120_000)) {
            setProblem("The timeout is a whole number of milliseconds from 1,000 to 120,000.")
            return
          }
          setProblem(undefined)
          const patch: CustomModelPatch = {
            ...(name.trim() !== model.name ? { name: name.trim() } : {}),
            ...(endpoint.trim() !== model.endpoint_url ? { endpoint_url: endpoint.trim() } : {}),
            ...(ms !== model.timeout_ms ? { timeout_ms: ms } : {}),
            ...(removeAuth ? { auth_header: null } : auth !== "" ? { auth_header: auth } : {})
          }
          void submit(async () => {
            try {
              await updateCustomModel(session.token, model.id, patch)
            } finally {
              setAuth("")
              setRemoveAuth(false)
            }
            setSaved("Saved. A change resets the test status.")
            announce(`${name.trim()} saved.`)
            onSaved()
          })
        }}
      >
        <div class="stack">
          <label for="edit-custom-name">Name</label>
          <input id="edit-custom-name" maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="edit-custom-endpoint">Endpoint URL</label>
          <input id="edit-custom-endpoint" type="url" value={endpoint} onInput={(event) => setEndpoint(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="edit-custom-timeout">Timeout in milliseconds</label>
          <input id="edit-custom-timeout" class="short" inputMode="numeric" value={timeout} onInput={(event) => setTimeoutMs(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="edit-custom-auth">New Authorization header value</label>
          <input
            id="edit-custom-auth"
            class="secret-field"
            type="password"
            autocomplete="off"
            value={auth}
            disabled={removeAuth}
            aria-describedby="edit-custom-auth-hint"
            onInput={(event) => setAuth(event.currentTarget.value)}
          />
          <p id="edit-custom-auth-hint" class="hint">
            Empty keeps the stored value.
          </p>
        </div>
        {model.has_auth && (
          <label class="check">
            <input type="checkbox" checked={removeAuth} onChange={(event) => setRemoveAuth(event.currentTarget.checked)} />
            Remove the stored Authorization value
          </label>
        )}
        <ErrorLine message={problem ?? error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Save changes
          </button>
          <span role="status">{saved ?? ""}</span>
        </div>
      </form>
    </section>
  )
}

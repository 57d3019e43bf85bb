/** DORA resilience tests (Arts. 24-26): the list (type filter in the URL), logging one, and a test's page (tests are immutable). */
import { useEffect, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, ErrorLine, FilterSelect, Link, LoadView, Pager, PER_PAGE, pageOf, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import { type CreateResilienceTest, createTest, getTest, listTests, type ResilienceTest, TEST_STATUSES, TEST_TYPES, words } from "./api.ts"
import { ComplianceTabs, DetailHeading, doraProblem, Field, typed } from "./parts.tsx"

/** A date stays a date; a date-time is shown in local time. */
const when = (value: string | null) => (value === null ? "—" : /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : localTime(value))

export const TestList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const query = queryOf(search)
  const page = pageOf(search)
  const [type, setType] = useState(query.test_type ?? "")
  useEffect(() => setType(query.test_type ?? ""), [query.test_type])
  const [loaded, reload] = useLoad(
    () =>
      listTests(session.token, { test_type: query.test_type }, page, PER_PAGE).catch((cause) => {
        throw new Error(doraProblem(cause))
      }),
    [session.token, query.test_type, page]
  )
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>Resilience tests</PageHeading>
      <p>
        <Link href="resilience-tests/new" class="button-link">
          Log a test
        </Link>
      </p>
      <form
        class="filters"
        aria-label="Filter tests"
        onSubmit={(event) => {
          event.preventDefault()
          setQuery(search, { test_type: type })
        }}
      >
        <FilterSelect id="test-type-filter" label="Test type" value={type} choices={[...new Set([...TEST_TYPES, ...(type === "" ? [] : [type])])]} onChange={setType} text={words} />
        <button type="submit">Filter</button>
      </form>
      <LoadView loaded={loaded} retry={reload} what="resilience tests">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No tests match.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Resilience tests</caption>
                  <thead>
                    <tr>
                      <th scope="col">Test</th>
                      <th scope="col">Type</th>
                      <th scope="col">Result</th>
                      <th scope="col">Conducted</th>
                      <th scope="col">By</th>
                      <th scope="col">Remediation due</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((test) => (
                      <tr key={test.uuid}>
                        <td class="wrap">
                          <Link href={`resilience-tests/${encodeURIComponent(test.uuid)}`}>{test.title}</Link>
                        </td>
                        <td>{words(test.test_type)}</td>
                        <td>
                          <span class={`status test-${test.status}`}>{test.status}</span>
                        </td>
                        <td>{when(test.conducted_at)}</td>
                        <td class="wrap">{test.conducted_by}</td>
                        <td>{when(test.remediation_due_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={list.pagination} search={search} label="Tests" />
            </>
          )
        }
      </LoadView>
    </main>
  )
}

export const NewTest = () => {
  const { session, announce } = useApp()
  const [type, setType] = useState<string>("vulnerability_scan")
  const [title, setTitle] = useState("")
  const [scope, setScope] = useState("")
  const [conductedAt, setConductedAt] = useState(new Date().toISOString().slice(0, 10))
  const [conductedBy, setConductedBy] = useState("")
  const [status, setStatus] = useState<string>("passed")
  const [findings, setFindings] = useState("")
  const [plan, setPlan] = useState("")
  const [due, setDue] = useState("")
  const { busy, error, submit, setError } = useSubmit()
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    if (title.trim() === "" || scope.trim() === "" || conductedBy.trim() === "" || conductedAt === "") return setError("Give the title, scope, date and who conducted the test.")
    const body: CreateResilienceTest = {
      test_type: type,
      title: title.trim(),
      scope: scope.trim(),
      conducted_at: conductedAt,
      conducted_by: conductedBy.trim(),
      status: status as CreateResilienceTest["status"],
      findings_summary: findings.trim() === "" ? null : findings,
      remediation_plan: plan.trim() === "" ? null : plan,
      remediation_due_at: due === "" ? null : due
    }
    let created: ResilienceTest | undefined
    if (
      await submit(async () => {
        created = await createTest(session.token, body)
      })
    ) {
      announce(`Test ${created!.title} logged.`)
      navigate(`${BASE}/resilience-tests/${encodeURIComponent(created!.uuid)}`)
    }
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>Log a resilience test</PageHeading>
      <p>
        <Link href="resilience-tests">Back to resilience tests</Link>
      </p>
      <section class="new-case" aria-label="New test">
        <form onSubmit={onSubmit} noValidate>
          <div class="compliance-pair">
            <Field id="test-type" label="Test type">
              <select id="test-type" value={type} onChange={typed(setType)}>
                {TEST_TYPES.map((key) => (
                  <option key={key} value={key}>
                    {words(key)}
                  </option>
                ))}
              </select>
            </Field>
            <Field id="test-status" label="Result">
              <select id="test-status" value={status} onChange={typed(setStatus)}>
                {TEST_STATUSES.map((key) => (
                  <option key={key} value={key}>
                    {key}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <Field id="test-title" label="Title">
            <input id="test-title" required maxLength={200} value={title} onInput={typed(setTitle)} />
          </Field>
          <Field id="test-scope" label="Scope">
            <textarea id="test-scope" required rows={2} maxLength={2000} value={scope} onInput={typed(setScope)} />
          </Field>
          <div class="compliance-pair">
            <Field id="test-date" label="Conducted on">
              <input id="test-date" type="date" required value={conductedAt} onInput={typed(setConductedAt)} />
            </Field>
            <Field id="test-by" label="Conducted by">
              <input id="test-by" required maxLength={200} value={conductedBy} onInput={typed(setConductedBy)} />
            </Field>
          </div>
          <Field id="test-findings" label="Findings (optional)">
            <textarea id="test-findings" rows={3} maxLength={10_000} value={findings} onInput={typed(setFindings)} />
          </Field>
          <Field id="test-plan" label="Remediation plan (optional)" hint="Art. 24(5): a failed or partial test should have one.">
            <textarea id="test-plan" rows={3} maxLength={10_000} value={plan} aria-describedby="test-plan-hint" onInput={typed(setPlan)} />
          </Field>
          <Field id="test-due" label="Remediation due (optional)">
            <input id="test-due" type="date" value={due} onInput={typed(setDue)} />
          </Field>
          <ErrorLine message={error} />
          <div>
            <button type="submit" class="primary" disabled={busy}>
              {busy ? "Logging…" : "Log test"}
            </button>
          </div>
        </form>
      </section>
    </main>
  )
}

export const TestDetail = ({ testId }: { testId: string }) => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => getTest(session.token, testId), [session.token, testId])
  return (
    <main class="compliance">
      <ComplianceTabs />
      <DetailHeading loaded={loaded} what="Resilience test" title={(value) => value.title} />
      <p>
        <Link href="resilience-tests">Back to resilience tests</Link>
      </p>
      <LoadView loaded={loaded} retry={reload} what="the test">
        {(test) => (
          <>
            {test.warnings.length > 0 && (
              <ul class="notice compliance-warnings" aria-label="Warnings">
                {test.warnings.map((warning) => (
                  <li key={warning}>{warning}</li>
                ))}
              </ul>
            )}
            <dl class="facts">
              <dt>Type</dt>
              <dd>{words(test.test_type)}</dd>
              <dt>Result</dt>
              <dd>
                <span class={`status test-${test.status}`}>{test.status}</span>
              </dd>
              <dt>Scope</dt>
              <dd class="pre">{test.scope}</dd>
              <dt>Conducted</dt>
              <dd>{when(test.conducted_at)}</dd>
              <dt>Conducted by</dt>
              <dd>{test.conducted_by}</dd>
              <dt>Findings</dt>
              <dd class="pre">{test.findings_summary ?? "—"}</dd>
              <dt>Remediation plan</dt>
              <dd class="pre">{test.remediation_plan ?? "—"}</dd>
              <dt>Remediation due</dt>
              <dd>{when(test.remediation_due_at)}</dd>
              <dt>Logged</dt>
              <dd>{localTime(test.created_at)}</dd>
              <dt>Id</dt>
              <dd>
                <code class="hash">{test.uuid}</code>
              </dd>
            </dl>
            <p class="hint">Tests are immutable once logged.</p>
          </>
        )}
      </LoadView>
    </main>
  )
}

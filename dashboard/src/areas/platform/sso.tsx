/**
 * Single sign-on (owner only; configuring needs the Business plan or higher): the organization's
 * configuration as the API answers it, configuring SAML (the identity provider's metadata) or OIDC
 * (issuer, client id and a write-only client secret cleared after sending), enforcing it for the
 * organization's domains, and removing it, each change behind a confirmation where it locks
 * people out or undoes the set-up.
 */
import { useRef, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { ConfirmButton } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { ErrorLine, LoadView, useLoad, useSubmit } from "../../kit.tsx"
import { configureOidc, configureSaml, deleteSso, enforceSso, getSso, type SsoConfiguration } from "./api.ts"
import { listOf, yesNo } from "./shared.tsx"

export const SsoSection = () => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => getSso(session.token), [session.token])
  return (
    <>
      <PageHeading>Single sign-on</PageHeading>
      <p class="hint">Only the organization's owner sees and changes single sign-on; configuring it needs the Business plan or higher.</p>
      <LoadView loaded={loaded} retry={reload} what="the single sign-on configuration">
        {(config) => <SsoView config={config} onChanged={reload} />}
      </LoadView>
    </>
  )
}

const Value = ({ value }: { value: string | null }) => (value === null ? <span>—</span> : <span class="wrap">{value}</span>)

const SsoView = ({ config, onChanged }: { config: SsoConfiguration; onChanged: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [message, setMessage] = useState<string | undefined>()
  const messageRef = useRef<HTMLParagraphElement>(null)
  const done = (text: string) => {
    setMessage(text)
    announce(text)
    onChanged()
    messageRef.current?.focus()
  }
  return (
    <>
      <section aria-labelledby="sso-now-title">
        <h2 id="sso-now-title">Now</h2>
        <dl class="facts" data-sso-enabled={String(config.enabled)}>
          <dt>Enabled</dt>
          <dd>{yesNo(config.enabled)}</dd>
          <dt>Enforced</dt>
          <dd>{yesNo(config.enforced)}</dd>
          <dt>Protocol</dt>
          <dd>{config.protocol === null ? "—" : config.protocol.toUpperCase()}</dd>
          <dt>Domains</dt>
          <dd>{config.domains.length === 0 ? "—" : config.domains.join(", ")}</dd>
          <dt>Identity provider entity id</dt>
          <dd>
            <Value value={config.idp_entity_id} />
          </dd>
          <dt>Our entity id</dt>
          <dd>
            <Value value={config.sp_entity_id} />
          </dd>
          <dt>Our assertion consumer URL</dt>
          <dd>
            <Value value={config.sp_acs_url} />
          </dd>
          <dt>Our metadata</dt>
          <dd>{config.sp_metadata_url === null ? "—" : <a href={config.sp_metadata_url}>{config.sp_metadata_url}</a>}</dd>
          <dt>OIDC issuer</dt>
          <dd>
            <Value value={config.oidc_issuer_url} />
          </dd>
          <dt>OIDC client id</dt>
          <dd>
            <Value value={config.oidc_client_id} />
          </dd>
          <dt>OIDC client secret</dt>
          <dd>{config.protocol === "oidc" ? "stored (never shown)" : "—"}</dd>
        </dl>
        {config.enabled && (
          <div class="actions-row">
            {config.enforced ? (
              <button type="button" disabled={busy} onClick={() => void submit(() => enforceSso(session.token, false)).then((ok) => ok && done("Single sign-on is no longer enforced."))}>
                Stop enforcing
              </button>
            ) : (
              <ConfirmButton
                label="Enforce"
                question="Enforce single sign-on? Users of your domains can then only sign in through the identity provider."
                busy={busy}
                onConfirm={() => void submit(() => enforceSso(session.token, true)).then((ok) => ok && done("Single sign-on is now enforced."))}
              />
            )}
            <ConfirmButton
              label="Remove"
              question="Remove single sign-on? Enforcement ends too, and users sign in with passwords again."
              busy={busy}
              onConfirm={() =>
                void submit(() => deleteSso(session.token)).then((ok) => ok && done("Single sign-on removed."))
              }
            />
          </div>
        )}
        <ErrorLine message={error} />
        <p role="status" tabIndex={-1} ref={messageRef}>
          {message ?? ""}
        </p>
      </section>
      <Configure config={config} onConfigured={done} />
    </>
  )
}

const Configure = ({ config, onConfigured }: { config: SsoConfiguration; onConfigured: (message: string) => void }) => {
  const { session } = useApp()
  const [protocol, setProtocol] = useState<"saml" | "oidc">(config.protocol ?? "saml")
  const [metadata, setMetadata] = useState("")
  const [issuer, setIssuer] = useState(config.oidc_issuer_url ?? "")
  const [clientId, setClientId] = useState(config.oidc_client_id ?? "")
  const [secret, setSecret] = useState("")
  const [domains, setDomains] = useState(config.domains.join("\n"))
  const [problem, setProblem] = useState<string | undefined>()
  const { busy, error, submit } = useSubmit()
  return (
    <section aria-labelledby="sso-configure-title" class="new-case platform-section">
      <h2 id="sso-configure-title">{config.enabled ? "Replace the configuration" : "Configure"}</h2>
      <form
        class="settings-form"
        autocomplete="off"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          const list = listOf(domains)
          const extra = list.length === 0 ? {} : { domains: list }
          if (protocol === "saml") {
            if (metadata.trim() === "") {
              setProblem("Paste the identity provider's metadata XML.")
              document.getElementById("sso-metadata")?.focus()
              return
            }
            setProblem(undefined)
            void submit(() => configureSaml(session.token, { idp_metadata_xml: metadata.trim(), ...extra })).then((ok) => {
              if (!ok) return
              setMetadata("")
              onConfigured("SAML single sign-on configured.")
            })
            return
          }
          if (issuer.trim() === "" || clientId.trim() === "" || secret === "") {
            setProblem("Fill in the issuer URL, the client id and the client secret.")
            return
          }
          setProblem(undefined)
          const body = { issuer_url: issuer.trim(), client_id: clientId.trim(), client_secret: secret, ...extra }
          // The secret leaves the page as it is sent, whatever the answer.
          setSecret("")
          void submit(() => configureOidc(session.token, body)).then((ok) => ok && onConfigured("OIDC single sign-on configured."))
        }}
      >
        <fieldset class="models-choice">
          <legend>Protocol</legend>
          <label class="check">
            <input type="radio" name="sso-protocol" checked={protocol === "saml"} onChange={() => setProtocol("saml")} />
            SAML 2.0
          </label>
          <label class="check">
            <input type="radio" name="sso-protocol" checked={protocol === "oidc"} onChange={() => setProtocol("oidc")} />
            OpenID Connect
          </label>
        </fieldset>
        {protocol === "saml" ? (
          <div class="stack">
            <label for="sso-metadata">Identity provider metadata (XML)</label>
            <textarea id="sso-metadata" rows={6} spellcheck={false} value={metadata} onInput={(event) => setMetadata(event.currentTarget.value)} />
          </div>
        ) : (
          <>
            <div class="stack">
              <label for="sso-issuer">Issuer URL</label>
              <input id="sso-issuer" type="url" value={issuer} onInput={(event) => setIssuer(event.currentTarget.value)} />
            </div>
            <div class="stack">
              <label for="sso-client-id">Client id</label>
              <input id="sso-client-id" value={clientId} spellcheck={false} onInput={(event) => setClientId(event.currentTarget.value)} />
            </div>
            <div class="stack">
              <label for="sso-client-secret">Client secret</label>
              <input
                id="sso-client-secret"
                class="secret-field"
                type="password"
                autocomplete="off"
                value={secret}
                aria-describedby="sso-client-secret-hint"
                onInput={(event) => setSecret(event.currentTarget.value)}
              />
              <p id="sso-client-secret-hint" class="hint">
                Sent once, stored encrypted and never shown again.
              </p>
            </div>
          </>
        )}
        <div class="stack">
          <label for="sso-domains">E-mail domains (one per line, optional)</label>
          <textarea id="sso-domains" rows={2} spellcheck={false} value={domains} aria-describedby="sso-domains-hint" onInput={(event) => setDomains(event.currentTarget.value)} />
          <p id="sso-domains-hint" class="hint">
            Your own domain is added for you.
          </p>
        </div>
        <ErrorLine message={problem ?? error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            {protocol === "saml" ? "Configure SAML" : "Configure OIDC"}
          </button>
        </div>
      </form>
    </section>
  )
}

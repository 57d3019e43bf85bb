/**
 * The platform area: the model catalogue and preferences, provider credentials, custom models,
 * feature flags, single sign-on and the sanitize playground (spec part 002). Each section is a
 * first path segment; a custom model has its own page under its id, and a pull request's code
 * review violations a page under `code-review/owner/repo/number`.
 */
import "./platform.css"
import type { AreaProps } from "../../areas.tsx"
import { PageHeading } from "../../components.tsx"
import { AreaTabs, Link } from "../../kit.tsx"
import { CodeReviewPage } from "./code-review.tsx"
import { CredentialsSection } from "./credentials.tsx"
import { CustomModelPage, CustomModelsSection } from "./custom-models.tsx"
import { FlagsSection } from "./flags.tsx"
import { ModelsSection } from "./models.tsx"
import { SanitizeSection } from "./sanitize.tsx"
import { SsoSection } from "./sso.tsx"

const TABS = [
  { href: "models", label: "Models" },
  { href: "provider-credentials", label: "Provider credentials" },
  { href: "custom-models", label: "Custom models" },
  { href: "flags", label: "Feature flags" },
  { href: "sso", label: "SSO" },
  { href: "sanitize", label: "Sanitize" }
]

const NotFound = () => (
  <>
    <PageHeading>Not found</PageHeading>
    <p role="alert" class="error">
      This page does not exist. <Link href="models">Back to models</Link>
    </p>
  </>
)

const Section = ({ path, search }: AreaProps) => {
  const [first, second, ...rest] = path
  if (first === "code-review") return <CodeReviewPage path={path.slice(1)} search={search} />
  if (rest.length > 0) return <NotFound />
  if (first === "custom-models" && second !== undefined) return <CustomModelPage modelId={second} />
  if (second !== undefined) return <NotFound />
  switch (first) {
    case "models":
      return <ModelsSection search={search} />
    case "provider-credentials":
      return <CredentialsSection search={search} />
    case "custom-models":
      return <CustomModelsSection search={search} />
    case "flags":
      return <FlagsSection search={search} />
    case "sso":
      return <SsoSection />
    case "sanitize":
      return <SanitizeSection search={search} />
    default:
      return <NotFound />
  }
}

export default function Page({ path, search }: AreaProps) {
  return (
    <main class="platform">
      <AreaTabs label="Platform" tabs={TABS} />
      <Section path={path} search={search} />
    </main>
  )
}

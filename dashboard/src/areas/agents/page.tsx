/** The agents area: its pages land in the next commits. */
import type { AreaProps } from "../../areas.tsx"
import { PageHeading } from "../../components.tsx"

export default function Page({ path }: AreaProps) {
  return (
    <main>
      <PageHeading>{path[0]}</PageHeading>
    </main>
  )
}

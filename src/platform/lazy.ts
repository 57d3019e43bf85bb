/**
 * Libraries only some requests need (OCR, PDF, DICOM, NLP, the AI SDK, SSO, VC suites, mail) are
 * imported when the first such request comes, not at start: every module loaded stays in memory
 * for the life of the process (its source text included), and most processes never need them.
 * docs/decisions.md "What is loaded at start" lists what stays eager and why.
 */
import * as Effect from "effect/Effect"

/**
 * `load` runs once, at the first call; later calls share its promise. A failed load is not kept,
 * so the next call tries again.
 */
export const loadOnce = <A>(load: () => Promise<A>): (() => Promise<A>) => {
  let loading: Promise<A> | undefined
  return () => {
    if (loading === undefined) {
      const attempt = load()
      loading = attempt
      attempt.catch(() => {
        if (loading === attempt) loading = undefined
      })
    }
    return loading
  }
}

/** `loadOnce` as an Effect; a failed load is a defect of the request that met it. */
export const lazyImport = <A>(load: () => Promise<A>): Effect.Effect<A> => {
  const get = loadOnce(load)
  return Effect.promise(get)
}

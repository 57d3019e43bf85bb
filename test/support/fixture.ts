/**
 * A value the whole test file shares: made before its first test, released
 * after its last. The returned object forwards to the value once it exists, so
 * a file declares its fixtures in one line each, in the order they are made:
 *
 *   const inbox = useInbox()
 *   const server = useServer(() => ({ SMTP_URL: inbox.url }))
 *   const org = useFixture(() => registerOrg(server.url, "Acme"))
 */
import { afterAll, beforeAll } from "vitest"

export const useFixture = <T extends object>(make: () => Promise<T>, release?: (value: T) => Promise<void>): T => {
  let value: T | undefined
  beforeAll(async () => {
    value = await make()
  })
  afterAll(async () => {
    if (value !== undefined && release !== undefined) await release(value)
  })
  const current = (): T => {
    if (value === undefined) throw new Error("fixture used before beforeAll made it (or after it failed)")
    return value
  }
  return new Proxy({} as T, {
    get: (_target, key) => {
      const real = current()
      const member = Reflect.get(real, key, real)
      return typeof member === "function" ? member.bind(real) : member
    },
    has: (_target, key) => Reflect.has(current(), key),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), key)
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true }
    }
  })
}

/**
 * Checks handlers make on the caller: JWT-only routes, roles and key scopes.
 * Scopes narrow what the creating user's role allows (`*` = everything the role
 * allows); `<area>:write` includes `<area>:read`.
 */
import * as Effect from "effect/Effect"
import { CurrentPrincipal, type Principal, type Role } from "../../protocol/auth.js"
import { forbidden, unauthorized } from "../../protocol/errors.js"

export const hasScope = (principal: Principal, scope: string): boolean => {
  if (principal.kind === "jwt") return true
  const [area, access] = scope.split(":")
  for (const granted of principal.scopes) {
    if (granted === "*" || granted === scope || granted === `${area}:*`) return true
    if (access === "read" && granted === `${area}:write`) return true
  }
  return false
}

export const requireScope = (scope: string) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    if (!hasScope(principal, scope)) return yield* Effect.fail(forbidden(`This key lacks the ${scope} scope`))
    return principal
  })

export const requireJwt = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  if (principal.kind !== "jwt") return yield* Effect.fail(unauthorized("This endpoint requires a dashboard JWT, not an API key"))
  return principal
})

export const isAdmin = (principal: Principal) => principal.role === "owner" || principal.role === "admin"

export const requireRole = (roles: ReadonlyArray<Role>, what = "this operation") => (principal: Principal) =>
  roles.includes(principal.role) ? Effect.succeed(principal) : Effect.fail(forbidden(`Role ${roles.join(" or ")} is required for ${what}`))

export const requireAdmin = (what?: string) =>
  Effect.gen(function* () {
    return yield* requireRole(["owner", "admin"], what)(yield* CurrentPrincipal)
  })

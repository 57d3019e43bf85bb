/** Dashboard JWTs signed with a running test server's own key, for cases `login` cannot produce (another issuer, a short life). */
import * as Effect from "effect/Effect"
import { SignJWT } from "jose"
import { Secrets } from "../../src/platform/secrets.js"
import type { TestServer } from "./server.js"

export const signTestJwt = (
  server: TestServer,
  org: { readonly userUuid: string; readonly orgUuid: string; readonly email: string },
  options: { readonly issuer?: string; readonly expiresAt?: number | string } = {}
): Promise<string> =>
  server.run(
    Effect.gen(function* () {
      const secrets = yield* Secrets
      return yield* Effect.promise(() =>
        new SignJWT({ org: org.orgUuid, role: "owner", email: org.email })
          .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
          .setSubject(org.userUuid)
          .setIssuer(options.issuer ?? secrets.jwtIssuer)
          .setIssuedAt()
          .setExpirationTime(options.expiresAt ?? "1h")
          .sign(secrets.jwtPrivateKey)
      )
    })
  )

/**
 * OpenID Connect through openid-client: discovery, the authorization address with PKCE, state
 * and nonce, and the code grant with ID-token validation. Every request to the provider goes
 * through the outbound client (address checks, time and size bounds, no redirects).
 */
import * as client from "openid-client"
import { type OutboundPolicy, outboundFetch } from "../platform/outbound/index.js"

export interface OidcSettings {
  readonly issuerUrl: string
  readonly clientId: string
  readonly clientSecret: string
}

export interface Reach {
  readonly policy: OutboundPolicy
  readonly ca: Buffer | undefined
}

const fetchVia = (reach: Reach) =>
  outboundFetch({ policy: reach.policy, timeoutMs: 10_000, ...(reach.ca === undefined ? {} : { ca: reach.ca }) }) as unknown as client.CustomFetch

/** Discovers the provider; plain http is only allowed when the outbound policy allows it (tests, private networks). */
export const discover = (settings: OidcSettings, reach: Reach) =>
  client.discovery(new URL(settings.issuerUrl), settings.clientId, settings.clientSecret, undefined, {
    [client.customFetch]: fetchVia(reach),
    ...(reach.policy.allowHttp ? { execute: [client.allowInsecureRequests] } : {}),
    timeout: 10
  })

/**
 * Whether the provider accepts the client's credentials: a token request with a code that cannot
 * exist is answered `invalid_client` when the credentials are wrong, `invalid_grant` when right.
 */
export const credentialsAccepted = async (configuration: client.Configuration, redirectUri: string) => {
  try {
    await client.genericGrantRequest(configuration, "authorization_code", { code: "credential-probe", redirect_uri: redirectUri })
    return true
  } catch (error) {
    return !(error instanceof client.ResponseBodyError && error.error === "invalid_client")
  }
}

export const authorizationUrl = async (configuration: client.Configuration, redirectUri: string, state: string, nonce: string, verifier: string) =>
  client.buildAuthorizationUrl(configuration, {
    redirect_uri: redirectUri,
    scope: "openid email profile",
    response_type: "code",
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256"
  }).href

/** Redeems the code; openid-client checks the state, the ID token's signature, issuer, audience, expiry and nonce. */
export const redeem = async (configuration: client.Configuration, callbackUrl: URL, expected: { state: string; nonce: string; verifier: string }) => {
  const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
    pkceCodeVerifier: expected.verifier,
    expectedState: expected.state,
    expectedNonce: expected.nonce,
    idTokenExpected: true
  })
  const claims = tokens.claims()
  if (claims === undefined) throw new Error("no ID token")
  if (typeof claims.email === "string") return claims
  // Many providers put the e-mail only in UserInfo; its subject must be the ID token's.
  const userInfo = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub)
  return { ...claims, email: userInfo.email, email_verified: userInfo.email_verified, name: userInfo.name ?? claims.name }
}

export const randomSecret = () => client.randomState()
export const randomVerifier = () => client.randomPKCECodeVerifier()

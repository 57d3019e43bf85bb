/**
 * SAML 2.0 through @node-saml/node-saml: the IdP's metadata read into what node-saml needs, the
 * SP's own signing certificate, and the checks node-saml leaves to us (assertion id for the
 * replay cache, SubjectConfirmation Recipient). node-saml and xmldom are required at their first
 * use (src/platform/lazy.ts says why); both are CommonJS, so that stays synchronous.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import * as asn1js from "asn1js"
import * as pkijs from "pkijs"

const MD = "urn:oasis:names:tc:SAML:2.0:metadata"
const DS = "http://www.w3.org/2000/09/xmldsig#"
const ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion"
const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
const POST_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"

/** Assertions are accepted up to this far outside their validity window (clocks of IdP and SP differ). */
export const CLOCK_SKEW_MS = 2 * 60 * 1000
/** However long the IdP lets an assertion live, we take it for at most this long after IssueInstant. */
export const MAX_ASSERTION_AGE_MS = 10 * 60 * 1000

export interface IdpMetadata {
  readonly entityId: string
  readonly ssoUrl: string
  /** Base64 DER of each signing certificate. */
  readonly certs: ReadonlyArray<string>
}

/** The few DOM calls used here; @xmldom/xmldom's own typings pull the browser DOM library into the whole build. */
interface XmlElement {
  getAttribute(name: string): string | null
  getElementsByTagNameNS(namespace: string, name: string): ArrayLike<XmlElement>
  readonly textContent: string | null
}
type ErrorHandler = { warning: (message: string) => void; error: (message: string) => void; fatalError: (message: string) => void }
type DomParser = new (options: { errorHandler: ErrorHandler }) => { parseFromString(xml: string, type: string): XmlElement }
const require = createRequire(import.meta.url)
let domParser: DomParser | undefined
const DOMParserClass = (): DomParser => (domParser ??= (require("@xmldom/xmldom") as { DOMParser: DomParser }).DOMParser)
let nodeSaml: typeof import("@node-saml/node-saml") | undefined
const loadNodeSaml = () => (nodeSaml ??= require("@node-saml/node-saml") as typeof import("@node-saml/node-saml"))

const parseXml = (xml: string): XmlElement => {
  const errors: Array<string> = []
  const DOMParser = DOMParserClass()
  const document = new DOMParser({ errorHandler: { warning: () => {}, error: (message: string) => void errors.push(message), fatalError: (message: string) => void errors.push(message) } }).parseFromString(xml, "text/xml")
  if (errors.length > 0) throw new Error(`not well-formed XML (${errors[0]})`)
  return document
}

/** Reads entity id, SSO address and signing certificates; throws with a short reason. */
export const readIdpMetadata = (xml: string): IdpMetadata => {
  if (/<!DOCTYPE/i.test(xml)) throw new Error("DOCTYPE is not allowed")
  const document = parseXml(xml)
  const entity = document.getElementsByTagNameNS(MD, "EntityDescriptor")[0] as XmlElement | undefined
  const idp = document.getElementsByTagNameNS(MD, "IDPSSODescriptor")[0] as XmlElement | undefined
  if (entity === undefined || idp === undefined) throw new Error("no EntityDescriptor with an IDPSSODescriptor")
  const entityId = entity.getAttribute("entityID") ?? ""
  if (entityId === "") throw new Error("EntityDescriptor has no entityID")
  const services = Array.from(idp.getElementsByTagNameNS(MD, "SingleSignOnService"))
  const service = services.find((s) => s.getAttribute("Binding") === REDIRECT_BINDING) ?? services.find((s) => s.getAttribute("Binding") === POST_BINDING)
  const ssoUrl = service?.getAttribute("Location") ?? ""
  if (!/^https?:\/\//.test(ssoUrl)) throw new Error("no SingleSignOnService with an http(s) Location")
  const certs = Array.from(idp.getElementsByTagNameNS(MD, "KeyDescriptor"))
    .filter((key) => (key.getAttribute("use") ?? "signing") === "signing")
    .flatMap((key) => Array.from(key.getElementsByTagNameNS(DS, "X509Certificate")).map((cert) => (cert.textContent ?? "").replace(/\s+/g, "")))
    .filter((cert) => cert !== "")
  if (certs.length === 0) throw new Error("no signing certificate in the IdP metadata")
  return { entityId, ssoUrl, certs }
}

/** The assertion's ID and the Recipient and NotOnOrAfter of its bearer confirmation. */
export const assertionFacts = (assertionXml: string) => {
  const document = parseXml(assertionXml)
  const assertion = document.getElementsByTagNameNS(ASSERTION, "Assertion")[0] as XmlElement | undefined
  const confirmation = document.getElementsByTagNameNS(ASSERTION, "SubjectConfirmationData")[0] as XmlElement | undefined
  return {
    id: assertion?.getAttribute("ID") ?? "",
    recipient: confirmation?.getAttribute("Recipient") ?? null,
    notOnOrAfter: confirmation?.getAttribute("NotOnOrAfter") ?? null
  }
}

const pem = (label: string, der: Uint8Array | string) =>
  `-----BEGIN ${label}-----\n${(typeof der === "string" ? der : Buffer.from(der).toString("base64")).match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`

export const certificatePem = (base64Der: string) => pem("CERTIFICATE", base64Der)

/**
 * The certificate serial from 16 random bytes: a positive INTEGER that is already minimal DER. The
 * encoder writes the bytes as given, and a leading 0x00 before a byte below 0x80 is padding that
 * OpenSSL refuses ("illegal padding"), so the top byte is kept within 0x40..0x7f.
 */
const serialFrom = (random: Uint8Array): asn1js.Integer => {
  const serial = Uint8Array.from(random)
  serial[0] = (serial[0]! & 0x3f) | 0x40
  return new asn1js.Integer({ valueHex: serial })
}

/**
 * A fresh RSA-2048 key pair and a self-signed certificate naming the organization (PEM both), valid
 * from an hour before `now` for ten years. `serialRandom` (16 bytes) is only given by tests.
 */
export const makeSpKeyPair = async (commonName: string, now: number, serialRandom: Uint8Array = randomBytes(16)): Promise<{ certPem: string; keyPem: string }> => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const subtle = globalThis.crypto.subtle
  const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
  const signingKey = await subtle.importKey("pkcs8", privateKey.export({ format: "der", type: "pkcs8" }), algorithm, false, ["sign"])
  const verifyKey = await subtle.importKey("spki", publicKey.export({ format: "der", type: "spki" }), algorithm, true, ["verify"])
  const certificate = new pkijs.Certificate()
  certificate.version = 2
  certificate.serialNumber = serialFrom(serialRandom)
  const name = new pkijs.AttributeTypeAndValue({ type: "2.5.4.3", value: new asn1js.Utf8String({ value: commonName.slice(0, 64) }) })
  certificate.issuer.typesAndValues.push(name)
  certificate.subject.typesAndValues.push(name)
  certificate.notBefore.value = new Date(now - 3600_000)
  certificate.notAfter.value = new Date(now + 10 * 365 * 24 * 3600_000)
  await certificate.subjectPublicKeyInfo.importKey(verifyKey)
  await certificate.sign(signingKey, "SHA-256")
  return { certPem: pem("CERTIFICATE", new Uint8Array(certificate.toSchema(true).toBER(false))), keyPem: privateKey.export({ format: "pem", type: "pkcs8" }).toString() }
}

export interface SpSettings {
  readonly entityId: string
  readonly acsUrl: string
  readonly certPem: string
  readonly keyPem: string
}

/** A node-saml instance for one organization; signed assertions required, audience our entity id. */
export const samlFor = (sp: SpSettings, idp: { entityId: string | null; ssoUrl: string; certs: ReadonlyArray<string> }) => {
  const { SAML, ValidateInResponseTo } = loadNodeSaml()
  return new SAML({
    callbackUrl: sp.acsUrl,
    entryPoint: idp.ssoUrl,
    issuer: sp.entityId,
    audience: sp.entityId,
    idpIssuer: idp.entityId ?? undefined,
    idpCert: idp.certs.map(certificatePem),
    privateKey: sp.keyPem,
    publicCert: sp.certPem,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    maxAssertionAgeMs: MAX_ASSERTION_AGE_MS,
    validateInResponseTo: ValidateInResponseTo.never,
    disableRequestedAuthnContext: true,
    signatureAlgorithm: "sha256",
    digestAlgorithm: "sha256"
  })
}

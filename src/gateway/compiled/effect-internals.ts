/**
 * The parts of Effect's HttpApi that the compiled routes need and that Effect marks
 * `@internal` (present in its JavaScript, left out of its type declarations).
 *
 * They are read here, in one place, with the types Effect's sources give them, so an
 * Effect upgrade that renames one fails at startup (`assertInternals`) and in
 * test/compiled-routes.test.ts rather than on a request. `effect` is pinned to an
 * exact version in package.json for the same reason.
 */
import type * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as HttpRouter from "effect/http/HttpRouter"
import { HttpApi, HttpApiEndpoint, HttpApiSchema } from "effect/http-api"
import type * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"

export type AnyEndpoint = HttpApiEndpoint.Top
export type AnyGroup = { readonly identifier: string; readonly key: string; readonly annotations: Context.Context<never>; readonly endpoints: Record<string, AnyEndpoint> }
export type AnyApi = { readonly annotations: Context.Context<never>; readonly groups: Record<string, AnyGroup> }

/** One registered handler, as `HttpApiBuilder.group` keeps it. */
export interface HandlerRuntime {
  readonly endpoint: AnyEndpoint
  readonly handler: (request: any) => Effect.Effect<any, any, any>
  readonly isRaw: boolean
  readonly uninterruptible: boolean
}

/** What `HttpApiBuilder.group` puts in the context under the group's key. */
export interface GroupService {
  readonly routes: ReadonlyArray<HttpRouter.Route<any, any>>
  readonly handlers: ReadonlyMap<string, HandlerRuntime>
}

export interface SlotParseOptions {
  readonly params: SchemaAST.ParseOptions | undefined
  readonly headers: SchemaAST.ParseOptions | undefined
  readonly query: SchemaAST.ParseOptions | undefined
  readonly payload: SchemaAST.ParseOptions | undefined
  readonly success: SchemaAST.ParseOptions | undefined
  readonly error: SchemaAST.ParseOptions | undefined
}

export type ResponseEncoding =
  | { readonly _tag: "Json"; readonly contentType: string }
  | { readonly _tag: "Text"; readonly contentType: string }
  | { readonly _tag: "Uint8Array"; readonly contentType: string }
  | { readonly _tag: "FormUrlEncoded"; readonly contentType: string }

interface Internals {
  readonly getSlotParseOptions: (annotations: Context.Context<never>) => SlotParseOptions
  readonly getSuccessSchemas: (endpoint: AnyEndpoint) => ReadonlyArray<Schema.Top>
  readonly getErrorSchemas: (endpoint: AnyEndpoint) => ReadonlyArray<Schema.Top>
  readonly getStatusSuccessSchema: (schema: Schema.Top) => number
  readonly getStatusErrorSchema: (schema: Schema.Top) => number
  readonly getResponseEncodingSchema: (schema: Schema.Top) => ResponseEncoding
  readonly isNoContent: (ast: SchemaAST.AST) => boolean
  readonly getWithHeadersAnnotation: (ast: SchemaAST.AST) => unknown
  readonly isStreamSchema: (schema: unknown) => boolean
  readonly isUpgrade: (schema: unknown) => boolean
}

const api = HttpApi as any
const endpoint = HttpApiEndpoint as any
const schema = HttpApiSchema as any

export const internals: Internals = {
  getSlotParseOptions: api.getSlotParseOptions,
  getSuccessSchemas: endpoint.getSuccessSchemas,
  getErrorSchemas: endpoint.getErrorSchemas,
  getStatusSuccessSchema: schema.getStatusSuccessSchema,
  getStatusErrorSchema: schema.getStatusErrorSchema,
  getResponseEncodingSchema: schema.getResponseEncodingSchema,
  isNoContent: schema.isNoContent,
  getWithHeadersAnnotation: schema.getWithHeadersAnnotation,
  isStreamSchema: schema.isStreamSchema,
  isUpgrade: schema.isUpgrade
}

/** Names of the internals Effect no longer provides (empty when all are there). */
export const missingInternals = (): ReadonlyArray<string> =>
  Object.entries(internals)
    .filter(([, value]) => typeof value !== "function")
    .map(([name]) => name)

export const assertInternals = () => {
  const missing = missingInternals()
  if (missing.length > 0) {
    throw new Error(`effect no longer provides ${missing.join(", ")}: the compiled routes (src/gateway/compiled) must be updated for this Effect version`)
  }
}

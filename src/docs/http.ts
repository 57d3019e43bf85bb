/**
 * `GET /docs`: the API reference (Scalar) for the HttpApi. Scalar's bundled script is ~3 MB of
 * JavaScript that would sit in the heap from start (about 13 MB as strings); the page is rendered at
 * the first request instead and kept.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiScalar from "effect/http-api/HttpApiScalar"
import { lazyImport } from "../platform/lazy.js"

export const DOCS_PATH = "/docs"

/** Renders the page once, through Scalar's own route, outside any request. */
const renderPage = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => async () => {
  const { handler, dispose } = HttpRouter.toWebHandler(HttpApiScalar.layer(api, { path: DOCS_PATH }), { disableLogger: true })
  try {
    const response = await handler(new Request(`http://docs.local${DOCS_PATH}`))
    return { status: response.status, body: await response.text(), contentType: response.headers.get("content-type") ?? "text/html; charset=utf-8" }
  } finally {
    await dispose()
  }
}

export const docsRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const page = lazyImport(renderPage(api))
  return HttpRouter.add(
    "GET",
    DOCS_PATH,
    Effect.map(page, (rendered) => HttpServerResponse.text(rendered.body, { status: rendered.status, contentType: rendered.contentType }))
  )
}

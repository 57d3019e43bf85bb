/**
 * Preloaded into a gateway process (`--import`): appends the URL of every module file it loads to
 * the file named by MODULE_LOG, one a line. ES modules through an in-thread load hook; CommonJS
 * `require()` through its diagnostics channel too, because under tsx (which loads CommonJS itself)
 * the load hook does not see it.
 */
import { tracingChannel } from "node:diagnostics_channel"
import { appendFileSync } from "node:fs"
import { createRequire, registerHooks } from "node:module"
import { pathToFileURL } from "node:url"

const log = process.env.MODULE_LOG
const record = (url) => {
  if (url.startsWith("file:")) appendFileSync(log, `${url}\n`)
}

if (log) {
  registerHooks({
    load(url, context, nextLoad) {
      record(url)
      return nextLoad(url, context)
    }
  })
  const ignore = () => {}
  tracingChannel("module.require").subscribe({
    start: ignore,
    error: ignore,
    asyncStart: ignore,
    asyncEnd: ignore,
    // After a successful require: where `id` resolved from the requiring file.
    end({ id, parentFilename }) {
      try {
        const resolved = createRequire(parentFilename ?? `${process.cwd()}/`).resolve(id)
        if (resolved.startsWith("/")) record(pathToFileURL(resolved).href)
      } catch {
        // Not resolvable from here (a built-in, a virtual module): not a package file.
      }
    }
  })
}

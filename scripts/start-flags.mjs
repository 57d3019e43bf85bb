// The node flags the service runs with: `npm start`, the benchmarks and the deploy/ examples.
// A memory budget (docs/decisions.md "Speed", and "One commit pipeline for all agents" for the
// semi-space): a 160 MB old generation and 8 MB semi-spaces; GATEWAY_HEAP_MB moves the cap. And
// source maps for our own code only (source-maps.mjs): --enable-source-maps would also read every
// dependency's maps, ~35 MB resident for stack traces that name library internals. And two glibc
// malloc arenas instead of one per thread (startEnv): native memory freed after a burst (socket
// buffers, TLS, libuv threads) stayed resident in the extra arenas, ~15-20 MB after bench:live's load.
import { fileURLToPath } from "node:url"

const sourceMaps = fileURLToPath(new URL("./source-maps.mjs", import.meta.url))

export const startFlags = (env = process.env) => [`--max-old-space-size=${env.GATEWAY_HEAP_MB || "160"}`, "--max-semi-space-size=8", "--import", sourceMaps]

/** Environment the service's process starts with (what is already set wins). */
export const startEnv = (env = process.env) => ({ MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX || "2" })

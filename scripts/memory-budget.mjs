// The memory budget `npm start` runs the service with (docs/decisions.md "Speed"): a 160 MB old
// generation and 2 MB semi-spaces keep one process near 190 MB RSS with 19k idle sockets after
// load; GATEWAY_HEAP_MB moves the cap. Benchmarks start the server with the same flags.
export const memoryBudgetFlags = (env = process.env) => [`--max-old-space-size=${env.GATEWAY_HEAP_MB || "160"}`, "--max-semi-space-size=2"]

// The memory budget `npm start` runs the service with (docs/decisions.md "Speed", and "One commit
// pipeline for all agents" for the semi-space): a 160 MB old generation and 8 MB semi-spaces;
// GATEWAY_HEAP_MB moves the cap. Benchmarks start the server with the same flags.
export const memoryBudgetFlags = (env = process.env) => [`--max-old-space-size=${env.GATEWAY_HEAP_MB || "160"}`, "--max-semi-space-size=8"]

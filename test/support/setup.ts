import { inject } from "vitest"

// vitest exposes Vite's base path as process.env.BASE_URL ("/"); the gateway reads BASE_URL as its
// public address, so tests start without it and each server derives its own from HOST and PORT.
delete process.env.BASE_URL

// The run's embedded PostgreSQL (test/support/global-setup.ts) when DATABASE_URL is unset.
const embedded = inject("databaseServerUrl")
if (embedded) process.env.TEST_DATABASE_SERVER_URL = embedded

// vitest exposes Vite's base path as process.env.BASE_URL ("/"); the gateway reads BASE_URL as its
// public address, so tests start without it and each server derives its own from HOST and PORT.
delete process.env.BASE_URL

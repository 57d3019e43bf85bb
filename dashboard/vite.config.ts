// Builds the dashboard into dist/dashboard/, served by the gateway under /dashboard (src/dashboard/).
import { fileURLToPath } from "node:url"
import preact from "@preact/preset-vite"
import { defineConfig } from "vite"

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/dashboard/",
  publicDir: false,
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL("../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // Files only: a data: URI would need a CSP exception, an inline script or style would too.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: "es2022",
    sourcemap: false
  },
  // `npx vite dashboard` during development: the API and socket of a gateway on the default port.
  server: { proxy: { "/api": { target: "http://127.0.0.1:8080", ws: true } } }
})

// Builds the dashboard into dist/dashboard/, served by the gateway under /dashboard (src/dashboard/).
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import preact from "@preact/preset-vite"
import { defineConfig } from "vite"

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/dashboard/",
  publicDir: false,
  plugins: [preact()],
  build: {
    // DASHBOARD_DIR as the gateway reads it (relative to the project), so a build and the server agree.
    outDir: process.env.DASHBOARD_DIR === undefined ? fileURLToPath(new URL("../dist/dashboard", import.meta.url)) : resolve(fileURLToPath(new URL("..", import.meta.url)), process.env.DASHBOARD_DIR),
    emptyOutDir: true,
    assetsDir: "assets",
    // Files only: a data: URI would need a CSP exception, an inline script or style would too.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    // Chunks named for what they hold (area-ledgers-…, chart-…), so a network panel or a size report reads plainly.
    rollupOptions: {
      output: {
        chunkFileNames: (chunk) => {
          const area = /\/areas\/([^/]+)\/page\.tsx$/.exec(chunk.facadeModuleId ?? "")?.[1]
          if (area !== undefined) return `assets/area-${area}-[hash].js`
          if (/\/chart\/draw\.ts$/.test(chunk.facadeModuleId ?? "")) return "assets/chart-[hash].js"
          return "assets/[name]-[hash].js"
        }
      }
    },
    target: "es2022",
    sourcemap: false
  },
  // `npx vite dashboard` during development: the API and socket of a gateway on the default port.
  server: { proxy: { "/api": { target: "http://127.0.0.1:8080", ws: true } } }
})

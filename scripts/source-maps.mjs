// Preloaded with --import (start-flags.mjs): stack traces point into src/*.ts, not dist/*.js. Only
// our own build's maps are read; dependencies' maps (node_modules) and eval'd code are skipped.
import { setSourceMapsSupport } from "node:module"

setSourceMapsSupport(true, { nodeModules: false, generatedCode: false })

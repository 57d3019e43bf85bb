/**
 * Imports point one way: `protocol` ← `src/platform` (and the transport in `src/gateway`) ← areas
 * (`src/<area>/`) ← `actors` ← the app (`src/app.ts`, `src/main.ts`). Areas may use one another but
 * not in a circle, and no module imports itself back through others.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "..")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

const files = ["protocol", "src", "actors"].flatMap(sourceFiles)

/** Relative imports and re-exports of a file, as repository paths (type-only ones included: a type cycle is a cycle). */
const importsOf = (file: string, text = readFileSync(join(root, file), "utf8")): Array<string> =>
  [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+["'](\.{1,2}\/[^"']+)["']/gms)].map((match) =>
    relative(root, resolve(root, dirname(file), match[1]!)).replace(/\.js$/, ".ts")
  )

const APP = new Set(["src/app.ts", "src/main.ts"])

const layerOf = (file: string): number => {
  if (file.startsWith("protocol/")) return 0
  if (file.startsWith("src/platform/") || file.startsWith("src/gateway/")) return 1
  if (file.startsWith("actors/")) return 3
  if (APP.has(file)) return 4
  return 2
}

const LAYER_NAMES = ["protocol", "platform", "area", "actors", "app"]

/** `src/<area>` for area files, else the layer's name. */
const groupOf = (file: string) => (layerOf(file) === 2 ? file.split("/").slice(0, 2).join("/") : LAYER_NAMES[layerOf(file)]!)

/** Every circle a depth-first walk meets, as `a → b → … → a`. */
const cyclesOf = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<string> => {
  const cycles: Array<string> = []
  const state = new Map<string, "open" | "done">()
  const path: Array<string> = []
  const visit = (node: string) => {
    state.set(node, "open")
    path.push(node)
    for (const target of graph.get(node) ?? []) {
      if (state.get(target) === "open") cycles.push([...path.slice(path.indexOf(target)), target].join(" → "))
      else if (!state.has(target)) visit(target)
    }
    path.pop()
    state.set(node, "done")
  }
  for (const node of graph.keys()) if (!state.has(node)) visit(node)
  return cycles
}

const edges = files.flatMap((file) => importsOf(file).map((target) => ({ file, target })))

describe("layers", () => {
  it("the checker sees imports (a fixture with an upward import is caught)", () => {
    const text = 'import { x } from "../../actors/agent.js"\nexport { y } from "./y.js"\nimport type {\n  Z\n} from "../events/service.js"'
    expect(importsOf("src/actions/service.ts", text)).toEqual(["actors/agent.ts", "src/actions/y.ts", "src/events/service.ts"])
    expect(layerOf("actors/agent.ts")).toBeGreaterThan(layerOf("src/actions/service.ts"))
  })

  it("no import points back up the layers", () => {
    const upward = edges.filter(({ file, target }) => layerOf(target) > layerOf(file)).map(({ file, target }) => `${file} → ${target}`)
    expect(upward).toEqual([])
  })

  it("the cycle finder sees circles of any length (a fixture of three areas is caught)", () => {
    const fixture = new Map([
      ["src/actions", ["src/policies"]],
      ["src/policies", ["src/cases"]],
      ["src/cases", ["src/actions"]],
      ["src/webhooks", ["src/actions"]]
    ])
    expect(cyclesOf(fixture)).toEqual(["src/actions → src/policies → src/cases → src/actions"])
  })

  it("areas do not import one another in a circle, of any length", () => {
    const graph = new Map<string, Array<string>>()
    for (const { file, target } of edges) {
      const [from, to] = [groupOf(file), groupOf(target)]
      if (from !== to && !graph.get(from)?.includes(to)) graph.set(from, [...(graph.get(from) ?? []), to])
    }
    expect(cyclesOf(graph)).toEqual([])
  })

  it("no module imports itself back through others", () => {
    const graph = new Map<string, Array<string>>()
    for (const { file, target } of edges) graph.set(file, [...(graph.get(file) ?? []), target])
    expect(cyclesOf(graph)).toEqual([])
  })

  it("the dashboard reaches protocol/ for types only (its plain lists in protocol/lists.ts and the browser verifier in protocol/verifier/), uPlot only in the chart chunk, and nothing on the server imports the dashboard", () => {
    const dashboard = sourceFiles("dashboard/src").concat(
      readdirSync(join(root, "dashboard/src"), { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".tsx")).map((name) => join("dashboard/src", name))
    )
    const wrong = dashboard.flatMap((file) =>
      [...readFileSync(join(root, file), "utf8").matchAll(/^\s*(import|export)\b([^;]*?)\bfrom\s+["']([^"']+)["']/gms)].flatMap(([, , clause, target]) => {
        if (target!.startsWith(".")) {
          const path = relative(root, resolve(root, dirname(file), target!))
          if (path.startsWith("dashboard/")) return []
          if (path.startsWith("protocol/") && /^\s*type\b/.test(clause!)) return []
          // The contract's vocabularies, plain lists with no imports, are the dashboard's too.
          if (path === "protocol/lists.ts") return []
          // The portable receipt verifier is made for browsers (noble and canonicalize only).
          if (path.startsWith("protocol/verifier/")) return []
        } else if (target === "preact" || target!.startsWith("preact/")) return []
        // The chart library, only in the chart chunk (dashboard/src/chart/draw.ts).
        else if ((target === "uplot" || target!.startsWith("uplot/")) && file === "dashboard/src/chart/draw.ts") return []
        return [`${file} → ${target}`]
      })
    )
    expect(dashboard.length).toBeGreaterThan(5)
    expect(wrong).toEqual([])
    // What the dashboard may run from protocol/verifier/ stays browser-only: its own files, noble, canonicalize.
    const verifierImports = sourceFiles("protocol/verifier").flatMap((file) =>
      [...readFileSync(join(root, file), "utf8").matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/gms)]
        .map(([, target]) => target!)
        .filter((target) => !/^\.\/[\w-]+\.js$/.test(target) && !target.startsWith("@noble/") && target !== "canonicalize")
        .map((target) => `${file} → ${target}`)
    )
    expect(verifierImports).toEqual([])
    // protocol/lists.ts stays a file of plain lists: nothing it imports could reach the browser.
    expect(importsOf("protocol/lists.ts")).toEqual([])
    expect(readFileSync(join(root, "protocol/lists.ts"), "utf8")).not.toMatch(/^\s*import\b/m)
    expect(edges.filter(({ target }) => target.startsWith("dashboard/")).map(({ file }) => file)).toEqual([])
  })
})

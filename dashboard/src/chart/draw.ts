/** Draws a ChartSpec with uPlot (this module and uPlot form a chunk of their own, fetched with the first chart). */
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import { type ChartSpec, xText } from "./chart.tsx"

/** Colours told apart with the common colour blindnesses (Okabe–Ito), dark enough on white. */
const PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"]

export const draw = (target: HTMLElement, spec: ChartSpec, width: number) => {
  const count = spec.series.length
  const bars = spec.kind === "bars"
  const series: Array<uPlot.Series> = [
    { label: spec.xLabel, value: (_u, _v, _s, index) => (index === null || index === undefined ? "" : xText(spec, index)) },
    ...spec.series.map((item, index): uPlot.Series => {
      const colour = PALETTE[index % PALETTE.length]!
      const base: uPlot.Series = { label: item.label, stroke: colour, width: 2, value: (_u, value) => (value === null ? "—" : `${value}${spec.unit === undefined ? "" : ` ${spec.unit}`}`) }
      if (bars) {
        // Side by side: each series a slice of the slot, shifted by its position.
        const size = 0.8 / count
        return {
          ...base,
          fill: colour,
          paths: uPlot.paths.bars!({ size: [size, 60], align: count === 1 ? 0 : index < count / 2 ? -1 : 1, gap: 1 }),
          points: { show: false }
        }
      }
      if (spec.kind === "step") return { ...base, paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false } }
      return { ...base, points: { show: spec.x.length < 40 } }
    })
  ]
  const axisX: uPlot.Axis =
    spec.xKind === "category"
      ? { values: (_u, splits) => splits.map((split) => (Number.isInteger(split) ? (spec.categories?.[split] ?? "") : "")) }
      : {}
  const options: uPlot.Options = {
    width: Math.max(240, width),
    height: spec.height ?? 260,
    series,
    scales: { x: { time: spec.xKind === "time", ...(spec.xKind === "category" ? { range: [-0.5, spec.x.length - 0.5] as uPlot.Range.MinMax } : {}) } },
    axes: [axisX, { label: spec.unit, size: 60 }],
    legend: { show: true },
    cursor: { drag: { x: false, y: false } }
  }
  const data = [Float64Array.from(spec.x), ...spec.series.map((item) => item.values.map((value) => value ?? null))] as unknown as uPlot.AlignedData
  const chart = new uPlot(options, data, target)
  return {
    destroy: () => chart.destroy(),
    resize: (next: number) => chart.setSize({ width: Math.max(240, next), height: spec.height ?? 260 })
  }
}

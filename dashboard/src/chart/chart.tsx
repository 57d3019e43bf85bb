/**
 * A chart with its table view. The figure's caption names it; the canvas is drawn by uPlot, which is
 * fetched with the first chart a page shows (never part of the first page's script); the same numbers
 * are always in a table under "Table view", which is what screen readers and keyboard users read.
 */
import { useEffect, useRef, useState } from "preact/hooks"

export interface ChartSeries {
  readonly label: string
  readonly values: ReadonlyArray<number | null>
}

export interface ChartSpec {
  /** The figure's caption. */
  readonly title: string
  /**
   * `time`: x holds Unix seconds; `number`: plain numbers; `category`: x is 0..n-1 and `categories`
   * names each (bins of a distribution, policy names).
   */
  readonly xKind: "time" | "number" | "category"
  readonly x: ReadonlyArray<number>
  readonly categories?: ReadonlyArray<string>
  /** The x column's heading in the table view. */
  readonly xLabel: string
  readonly series: ReadonlyArray<ChartSeries>
  /** `bars` draws the series side by side per x (distributions, counts per category). */
  readonly kind: "line" | "bars" | "step"
  /** Appended to values in the table and the axis ("ms", "EUR"). */
  readonly unit?: string
  readonly height?: number
}

/** How an x value reads in the table view. */
export const xText = (spec: ChartSpec, index: number): string => {
  const value = spec.x[index]!
  if (spec.xKind === "category") return spec.categories?.[index] ?? String(value)
  if (spec.xKind === "time") return new Date(value * 1000).toLocaleString()
  return String(value)
}

const valueText = (value: number | null | undefined, unit: string | undefined) =>
  value === null || value === undefined ? "—" : `${Number.isInteger(value) ? value : value.toFixed(3)}${unit === undefined ? "" : ` ${unit}`}`

type Drawn = { readonly destroy: () => void; readonly resize: (width: number) => void }

export const Chart = ({ spec, id }: { spec: ChartSpec; id: string }) => {
  const canvas = useRef<HTMLDivElement>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    const target = canvas.current
    if (target === null || spec.x.length === 0) return
    let drawn: Drawn | undefined
    let stopped = false
    const observer = new ResizeObserver(() => drawn?.resize(target.clientWidth))
    import("./draw.ts").then(
      ({ draw }) => {
        if (stopped) return
        drawn = draw(target, spec, target.clientWidth)
        observer.observe(target)
      },
      () => !stopped && setFailed(true)
    )
    return () => {
      stopped = true
      observer.disconnect()
      drawn?.destroy()
    }
  }, [spec])
  const summary = `${spec.title}: ${spec.series.map((series) => series.label).join(", ")} over ${spec.x.length} ${spec.xLabel.toLowerCase()} values`
  return (
    <figure class="chart" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`}>{spec.title}</figcaption>
      {spec.x.length === 0 ? (
        <p class="empty">No data for this period yet.</p>
      ) : (
        <>
          <div ref={canvas} class="chart-canvas" role="img" aria-label={summary} />
          {failed && <p class="error">The chart could not be drawn; its numbers are in the table view.</p>}
          <details class="chart-table">
            <summary>Table view</summary>
            <table>
              <caption class="visually-hidden">{spec.title}</caption>
              <thead>
                <tr>
                  <th scope="col">{spec.xLabel}</th>
                  {spec.series.map((series) => (
                    <th key={series.label} scope="col">
                      {series.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {spec.x.map((_, index) => (
                  <tr key={index}>
                    <th scope="row">{xText(spec, index)}</th>
                    {spec.series.map((series) => (
                      <td key={series.label}>{valueText(series.values[index], spec.unit)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </figure>
  )
}

/**
 * A minimal Prometheus registry (counters and histograms with labels), rendered
 * in the text exposition format at `/metrics`.
 */
interface Metric {
  render(): string
}

const registry: Metric[] = []
const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
const labelText = (names: readonly string[], values: readonly string[]) =>
  names.length === 0 ? "" : `{${names.map((n, i) => `${n}="${escapeLabel(values[i] ?? "")}"`).join(",")}}`

export const metrics = {
  counter(name: string, help: string, labels: readonly string[]) {
    const series = new Map<string, { values: readonly string[]; count: number }>()
    registry.push({
      render: () =>
        [`# HELP ${name} ${help}`, `# TYPE ${name} counter`, ...[...series.values()].map((s) => `${name}${labelText(labels, s.values)} ${s.count}`)].join("\n")
    })
    return {
      inc(values: readonly string[], by = 1) {
        const key = values.join("\u0000")
        const entry = series.get(key)
        if (entry) entry.count += by
        else series.set(key, { values, count: by })
      }
    }
  },
  gauge(name: string, help: string, read: () => number) {
    registry.push({ render: () => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${read()}` })
  },
  histogram(name: string, help: string, labels: readonly string[], buckets: readonly number[]) {
    const series = new Map<string, { values: readonly string[]; counts: number[]; sum: number; total: number }>()
    registry.push({
      render: () => {
        const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`]
        for (const s of series.values()) {
          let cumulative = 0
          buckets.forEach((bound, i) => {
            cumulative += s.counts[i]!
            lines.push(`${name}_bucket${labelText([...labels, "le"], [...s.values, String(bound)])} ${cumulative}`)
          })
          lines.push(`${name}_bucket${labelText([...labels, "le"], [...s.values, "+Inf"])} ${s.total}`)
          lines.push(`${name}_sum${labelText(labels, s.values)} ${s.sum}`)
          lines.push(`${name}_count${labelText(labels, s.values)} ${s.total}`)
        }
        return lines.join("\n")
      }
    })
    return {
      observe(values: readonly string[], value: number) {
        const key = values.join("\u0000")
        let entry = series.get(key)
        if (!entry) series.set(key, (entry = { values, counts: buckets.map(() => 0), sum: 0, total: 0 }))
        const index = buckets.findIndex((bound) => value <= bound)
        if (index !== -1) entry.counts[index]!++
        entry.sum += value
        entry.total++
      }
    }
  }
}

export const renderMetrics = (): string => `${registry.map((m) => m.render()).join("\n")}\n`

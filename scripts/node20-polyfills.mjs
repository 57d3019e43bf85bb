// vitest 5 prints failures with Map.groupBy / Object.groupBy, which Node 20 lacks.
if (typeof Map.groupBy !== "function") {
  Map.groupBy = (items, key) => {
    const map = new Map()
    let i = 0
    for (const item of items) {
      const k = key(item, i++)
      const list = map.get(k)
      if (list) list.push(item)
      else map.set(k, [item])
    }
    return map
  }
}
if (typeof Object.groupBy !== "function") {
  Object.groupBy = (items, key) => {
    const out = Object.create(null)
    let i = 0
    for (const item of items) {
      const k = key(item, i++)
      ;(out[k] ??= []).push(item)
    }
    return out
  }
}

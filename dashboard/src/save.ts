/** Saves bytes as a file through a temporary object URL (a download, so the CSP does not apply). */
export const saveBlob = (blob: Blob, filename: string) => {
  const url = URL.createObjectURL(blob)
  const anchor = document.createElement("a")
  anchor.href = url
  anchor.download = filename
  document.body.append(anchor)
  anchor.click()
  anchor.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export const saveJson = (value: unknown, filename: string) =>
  saveBlob(new Blob([`${JSON.stringify(value, null, 2)}\n`], { type: "application/json" }), filename)

/** Display helpers. */

export const timeLeft = (expiresAt: string | null, now: number): string => {
  if (expiresAt === null) return "no deadline"
  const millis = Date.parse(expiresAt) - now
  if (Number.isNaN(millis)) return "unknown"
  if (millis <= 0) return "expired"
  const minutes = Math.floor(millis / 60_000)
  if (minutes < 1) return "less than a minute"
  const hours = Math.floor(minutes / 60)
  const days = Math.floor(hours / 24)
  if (days >= 1) return `${days} d ${hours % 24} h`
  if (hours >= 1) return `${hours} h ${minutes % 60} min`
  return `${minutes} min`
}

export const localTime = (iso: string | null): string => (iso === null ? "—" : new Date(iso).toLocaleString())

export const statusLabel = (status: string): string => status.replaceAll("_", " ")

/** Rules-policy condition values as typed in the editor and shown back (no imports: the unit test loads it directly). */

/**
 * A condition's value as typed: JSON when it reads as a number, an array, a boolean or null
 * (`5`, `["a","b"]`, `true`), otherwise the text itself (`wire`, or `"5"` to force a string).
 */
export const parseConditionValue = (text: string): unknown => {
  const trimmed = text.trim()
  if (/^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null|\[[\s\S]*\]|"[\s\S]*")$/.test(trimmed)) {
    try {
      return JSON.parse(trimmed)
    } catch {
      return text
    }
  }
  return text
}

/** How a stored condition value is shown back in the editor: strings as typed, the rest as JSON. */
export const showConditionValue = (value: unknown): string => (typeof value === "string" && parseConditionValue(value) === value ? value : JSON.stringify(value))

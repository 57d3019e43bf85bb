/** A destructive button that asks first, in the page (no browser dialog): Delete → "Delete …? Yes / Cancel". */
import { useEffect, useRef, useState } from "preact/hooks"

export const ConfirmButton = ({ label, question, busy, onConfirm }: { label: string; question: string; busy: boolean; onConfirm: () => void }) => {
  const [asking, setAsking] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  const opener = useRef<HTMLButtonElement>(null)
  const wasAsking = useRef(false)
  useEffect(() => {
    if (asking) yes.current?.focus()
    else if (wasAsking.current) opener.current?.focus()
    wasAsking.current = asking
  }, [asking])
  if (!asking)
    return (
      <button type="button" class="deny" ref={opener} disabled={busy} onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  return (
    <span class="confirm">
      <span>{question}</span>{" "}
      <button
        type="button"
        class="deny"
        ref={yes}
        disabled={busy}
        onClick={() => {
          setAsking(false)
          onConfirm()
        }}
      >
        Yes, {label.toLowerCase()}
      </button>{" "}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}

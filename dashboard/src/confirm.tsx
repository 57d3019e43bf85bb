/**
 * Destructive changes ask first, in the page (no browser dialog): a button (Delete → "Delete …? Yes /
 * Cancel"), or a form whose fields are checked before it asks. Focus goes to "Yes", and back to the
 * button on Cancel.
 */
import type { ComponentChildren } from "preact"
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

/** A destructive change with fields (a reason, a target, an amount). */
export const ConfirmForm = ({
  id,
  label,
  question,
  busy,
  check,
  onConfirm,
  children,
  formClass,
  labelledBy
}: {
  id: string
  /** The button ("Revoke credential"); "Yes, <label lower-cased>" confirms. */
  label: string
  question: string
  busy: boolean
  /** Checks the fields: true when they may be sent (the form shows its own field errors). */
  check: () => boolean
  onConfirm: () => void
  children: ComponentChildren
  formClass?: string
  /** The id of the form's heading, when it has one. */
  labelledBy?: string
}) => {
  const [asking, setAsking] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  const opener = useRef<HTMLButtonElement>(null)
  const wasAsking = useRef(false)
  useEffect(() => {
    if (asking) yes.current?.focus()
    else if (wasAsking.current) opener.current?.focus()
    wasAsking.current = asking
  }, [asking])
  return (
    <form
      id={id}
      class={formClass}
      aria-labelledby={labelledBy}
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        if (!asking && check()) setAsking(true)
      }}
    >
      {children}
      <div class="actions-row">
        {asking ? (
          <span class="confirm">
            <span id={`${id}-question`}>{question}</span>
            <button
              type="button"
              class="deny"
              ref={yes}
              disabled={busy}
              aria-describedby={`${id}-question`}
              onClick={() => {
                // Focus goes back to the button; the caller moves it to the outcome once it is known.
                setAsking(false)
                onConfirm()
              }}
            >
              Yes, {label.toLowerCase()}
            </button>
            <button type="button" onClick={() => setAsking(false)}>
              Cancel
            </button>
          </span>
        ) : (
          <button type="submit" class="deny" ref={opener} disabled={busy}>
            {label}
          </button>
        )}
      </div>
    </form>
  )
}

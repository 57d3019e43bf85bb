/**
 * The approval page's HTML: small, self-contained (inline CSS, no scripts, no
 * external resources) and accessible (lang, labels, real buttons). Every
 * interpolated value goes through `escapeHtml`.
 */
import type { ApprovalReview } from "../actions/ports.js"

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }

export const escapeHtml = (value: unknown): string => String(value ?? "").replace(/[&<>"']/g, (char) => entities[char]!)

const style = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;background:#fff;line-height:1.5}
h1{font-size:1.5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.75rem;border-radius:4px}
code{overflow-wrap:anywhere}
form{margin-top:1.5rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
textarea{box-sizing:border-box;width:100%;min-height:5rem;font:inherit}
button{font:inherit;padding:.5rem 1.25rem;margin-right:.5rem;border-radius:4px;border:1px solid #555;cursor:pointer}
button:focus,textarea:focus{outline:3px solid #1d4ed8;outline-offset:2px}
.approve{background:#166534;color:#fff;border-color:#166534}
.deny{background:#991b1b;color:#fff;border-color:#991b1b}
.notice{padding:1rem;border-radius:4px;background:#f4f4f4}
`

export const page = (title: string, body: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`

const row = (label: string, value: string) => `<dt>${escapeHtml(label)}</dt><dd>${value}</dd>`

/** The pending action with Approve and Deny forms posting back to the same path. */
export const reviewPage = (code: string, review: ApprovalReview): string => {
  const action = `/approve/${encodeURIComponent(code)}`
  const details = review.details === null ? "" : `<h2>Details</h2>\n<pre>${escapeHtml(review.details)}</pre>`
  return page(
    `Approve ${review.action_type}?`,
    `<h1>Approval requested: ${escapeHtml(review.action_type)}</h1>
<p>An agent asks to perform this action. Approve it only if you expected it.</p>
<dl>
${row("Action type", escapeHtml(review.action_type))}
${row("Agent", escapeHtml(review.agent_id ?? "unknown"))}
${row("Status", escapeHtml(review.status))}
${row("Action", `<code>${escapeHtml(review.action_uuid)}</code>`)}
${row("Details hash", `<code>${escapeHtml(review.action_details_hash)}</code>`)}
${row("Instruction hash", review.instruction_hash === null ? "none" : `<code>${escapeHtml(review.instruction_hash)}</code>`)}
${row("Requested", `<time datetime="${escapeHtml(review.created_at)}">${escapeHtml(review.created_at)}</time>`)}
${row("Expires", `<time datetime="${escapeHtml(review.expires_at)}">${escapeHtml(review.expires_at)}</time>`)}
</dl>
${details}
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="decision" value="approve">
<button type="submit" class="approve">Approve</button>
</form>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="decision" value="deny">
<label for="reason">Reason for denying (optional)</label>
<textarea id="reason" name="reason" maxlength="2000"></textarea>
<p><button type="submit" class="deny">Deny</button></p>
</form>`
  )
}

export const resultPage = (result: { status: string; action_uuid: string; approver_email: string | null }): string => {
  const approved = result.status === "approved"
  return page(
    approved ? "Action approved" : "Action denied",
    `<h1>${approved ? "Action approved" : "Action denied"}</h1>
<p class="notice" role="status">Action <code>${escapeHtml(result.action_uuid)}</code> is now <strong>${escapeHtml(result.status)}</strong>${
      result.approver_email ? ` (decided by ${escapeHtml(result.approver_email)})` : ""
    }. You can close this page.</p>`
  )
}

export const messagePage = (title: string, message: string): string =>
  page(title, `<h1>${escapeHtml(title)}</h1>\n<p class="notice" role="alert">${escapeHtml(message)}</p>`)

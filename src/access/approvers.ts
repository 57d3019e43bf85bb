/**
 * Who may decide on something waiting for a human: the organization's owner and admins, and the
 * people named as its approvers. Actions (approvals) and cases (human review) both ask; it lives
 * here, below both, so neither imports the other.
 */

/** Who decides on a pending action or case besides its organization's owner and admins (the dashboard, and who gets a code). */
export const mayApprove = (caller: { readonly role: string; readonly email: string }, approvers: ReadonlyArray<string>): boolean => {
  if (caller.role === "owner" || caller.role === "admin") return true
  const email = caller.email.toLowerCase()
  return approvers.some((entry) => entry.toLowerCase() === email)
}

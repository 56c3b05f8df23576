/**
 * @module Business outcomes: what `Sandbox-Outcome` may ask of issue that the operation answers
 * itself, where the real case arises (an insurer's decline, a price change at bind, a late
 * certificate). The header itself, and the failures answered before the body is read, are the
 * request's (http/forced-outcome.ts); the words that end a forced outcome's message are errors.ts's (`FORCED`).
 */

/** Outcomes of issue that the operation answers itself (policies/issue.ts). */
export const BUSINESS_OUTCOMES = ['insurer_declined', 'price_changed', 'document_pending'] as const
export type BusinessOutcome = (typeof BUSINESS_OUTCOMES)[number]

export function isBusinessOutcome(header: string | null): header is BusinessOutcome {
  return (BUSINESS_OUTCOMES as readonly (string | null)[]).includes(header)
}

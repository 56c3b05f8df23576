/**
 * @module The generic insurer UAT protocol the gateway speaks (documented in the README): the
 * answers it accepts, as TypeBox schemas. Anything else from the insurer is `upstream_invalid`.
 */
import { t } from 'elysia'

const Code = t.String({ minLength: 1, maxLength: 64 })
const Minor = t.Integer({ minimum: 0, maximum: 1e12 })

export const QuotesAnswer = t.Object({
  quotes: t.Array(
    t.Object({
      quote_ref: Code,
      product_code: Code,
      product_label: t.String(),
      tier_code: t.String(),
      cover_code: Code,
      currency: t.String({ pattern: '^[A-Z]{3}$' }),
      sum_insured_minor: Minor,
      premium_minor: Minor,
      benefit_codes: t.Array(t.String()),
    }),
    { maxItems: 100 },
  ),
})

export const PolicyAnswer = t.Object({
  policy_number: Code,
  status: t.Literal('BOUND'),
  currency: t.String({ pattern: '^[A-Z]{3}$' }),
  premium_minor: Minor,
})

/** An endorsement; with `dry_run`, its price only (nothing applied, no endorsement number). */
export const EndorsementAnswer = t.Object({
  endorsement_no: t.Optional(Code),
  premium_minor: Minor,
})

/** A cancellation; with `dry_run`, its refund only (nothing cancelled, no cancellation number). */
export const CancellationAnswer = t.Object({
  cancellation_no: t.Optional(Code),
  refund_minor: Minor,
})

/** The trip and travellers as the insurer wants them. */
export function journey(trip: { origin_country: string; destination_country: string; start_date: string; end_date: string }, ages: number[]) {
  return {
    journey: { from: trip.origin_country, to: trip.destination_country, departs: trip.start_date, returns: trip.end_date },
    insured: ages.map((age) => ({ age })),
  }
}

/** Our scenarios in the insurer's words. */
export const CHANGE_OF = {
  extend_end_date: 'END_DATE',
  shorten_end_date: 'END_DATE',
  correct_destination: 'DESTINATION',
  correct_partner_reference: 'REFERENCE',
} as const

/** @module The four correction scenarios and the one body field each takes (spec 3.3). */

export const SCENARIOS = ['extend_end_date', 'shorten_end_date', 'correct_destination', 'correct_partner_reference'] as const
export type Scenario = (typeof SCENARIOS)[number]

/** The one body field each scenario uses. */
export const FIELD_OF: Record<Scenario, 'new_end_date' | 'destination_country' | 'partner_reference'> = {
  extend_end_date: 'new_end_date',
  shorten_end_date: 'new_end_date',
  correct_destination: 'destination_country',
  correct_partner_reference: 'partner_reference',
}

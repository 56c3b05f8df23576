/** @module Schemas of policy issue and modify. */
import { t } from 'elysia'
import { CalendarDate, CountryCode, TravellersModel, TripModel } from '../trip/model'

export const PartnerReference = t.String({
  pattern: '^[ -~]{1,64}$',
  description: "The partner's own booking reference: 1 to 64 printable ASCII characters, never an e-mail address.",
  issue: 'must be 1 to 64 printable ASCII characters',
})

export const IssueBody = t.Object(
  {
    plan_id: t.String({ minLength: 1, maxLength: 128, description: 'A plan_id returned by plan search in this session.', issue: 'must be a plan_id from plan search' }),
    trip: TripModel,
    travellers: TravellersModel,
    partner_reference: t.Optional(PartnerReference),
  },
  { additionalProperties: false, issue: 'must be an object' },
)

export const SCENARIOS = ['extend_end_date', 'shorten_end_date', 'correct_destination', 'correct_partner_reference'] as const

export const ModifyBody = t.Object(
  {
    scenario: t.UnionEnum(SCENARIOS, { issue: `must be one of: ${SCENARIOS.join(', ')}` }),
    new_end_date: t.Optional(CalendarDate),
    destination_country: t.Optional(CountryCode),
    partner_reference: t.Optional(PartnerReference),
  },
  { additionalProperties: false, issue: 'must be an object' },
)

export const ModifyParams = t.Object({ policy_ref: t.String() })

export type IssueRequest = typeof IssueBody.static
export type ModifyRequest = typeof ModifyBody.static
export type Scenario = (typeof SCENARIOS)[number]

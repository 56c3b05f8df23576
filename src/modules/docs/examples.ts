/**
 * @module Examples for the OpenAPI document: one flow a partner can run exactly as shown (session,
 * search, issue, modify, read-back, certificate, a cancellation's preview) on dates relative to today, priced by the real
 * catalogue, so the issue example names a `plan_id` the search example really returns; and an
 * example of every answer, built by the functions that build the real ones.
 */
import type { Config } from '../../config'
import { fromDayNumber, isoTimestamp, todayDayNumber } from '../../domain/dates'
import { MAX_TRAVELLERS, MAX_TRIP_DAYS, agesKey } from '../../domain/trip'
import { errorMessage, type ErrorCode, type ErrorDetail, type ErrorWording } from '../../errors'
import type { Mode } from '../../http/request-state'
import { PATHS } from '../../http/paths'
import { BODY_DEADLINE_MS, MAX_BODY_BYTES } from '../../http/steps/request-body'
import { MAX_HEADER_BYTES, MAX_HEADER_FIELDS } from '../../http/steps/request-start'
import type { Services } from '../services'
import type { PolicyRecord } from '../../storage/storage'
import { premiumInPaise, priceCatalogue, toAmount, toMinorUnits } from '../plans/pricing'
import { issuedPayload, policyEventData, policyView, refundView } from '../policies/read'
import { sessionPayload } from '../session/service'
import { EVENT_TYPES, newEvent } from '../../domain/events'
import { MAX_CLOCK_AHEAD_DAYS } from '../../domain/session-clock'
import { TEST_MESSAGE } from '../events/service'

const MINUTE_MS = 60_000

/**
 * Each error code's example: which of its messages, with what values (the words are the table's,
 * errors.ts), for a problem with the example flow's request; and its details.
 */
export const ERROR_EXAMPLES: { [Code in ErrorCode]: ErrorWording<Code> & { details?: ErrorDetail[] } } = {
  invalid_json: { variant: 'notJson' },
  unsupported_media_type: {},
  payload_too_large: { values: { maxBytes: MAX_BODY_BYTES } },
  headers_too_large: { values: { maxNames: MAX_HEADER_FIELDS, maxKiB: MAX_HEADER_BYTES / 1024 } },
  request_timeout: { values: { seconds: BODY_DEADLINE_MS / 1000 } },
  validation_failed: { variant: 'fields', details: [{ field: 'trip.end_date', issue: 'must be a real calendar date (YYYY-MM-DD)' }] },
  trip_too_long: { values: { maxDays: MAX_TRIP_DAYS }, details: [{ field: 'trip.end_date', issue: 'at most 180 days after start_date' }] },
  too_many_travellers: { values: { max: MAX_TRAVELLERS }, details: [{ field: 'travellers', issue: 'at most 6 travellers' }] },
  unsupported_currency: {
    values: { currencies: ['INR', 'USD', 'EUR', 'GBP', 'AED', 'SGD', 'JPY'] },
    details: [{ field: 'currency', issue: 'not a supported currency' }],
  },
  pii_not_allowed: { details: [{ field: 'travellers[0].first_name', issue: 'personal data is not accepted' }] },
  plan_not_found: { variant: 'notSearched', details: [{ field: 'plan_id', issue: 'was not returned by a plan search in this session' }] },
  plan_mismatch: { details: [{ field: 'travellers', issue: 'ages differ from the search that returned this plan' }] },
  policy_not_found: {},
  policy_cancelled: {},
  document_not_ready: { values: { readyAt: '2026-11-25T09:02:05.000Z' } },
  insurer_declined: {},
  event_not_found: {},
  webhook_not_registered: {},
  clock_backwards: { values: { now: '2026-12-05T09:00:00.000Z' } },
  clock_too_far: { values: { maxDays: MAX_CLOCK_AHEAD_DAYS } },
  clock_not_movable: {},
  insurer_side_unavailable: {},
  price_changed: {
    values: { amount: '131.25', currency: 'EUR' },
    details: [{ field: 'expected_premium', issue: 'must be 131.25, the premium at bind, to accept it' }],
  },
  scenario_not_applicable: { variant: 'extendEarlier', details: [{ field: 'new_end_date', issue: 'must be after the current end date' }] },
  idempotency_key_reused: {},
  idempotency_in_progress: {},
  session_expired: { variant: 'ended' },
  rate_limited: { values: { limit: 30, windowSeconds: 600, byDefault: true } },
  not_found: {},
  method_not_allowed: { variant: 'post' },
  storage_unavailable: {},
  upstream_unavailable: { variant: 'notAnswering' },
  upstream_invalid: {},
  internal_error: {},
}

/** The example webhook endpoint. */
const WEBHOOK_PLACEHOLDER = 'http://192.0.2.1/sandbox-events'

/** A reference of the sandbox's own form, fixed so the document is the same all day. */
const ref = (prefix: string, seed: string) => `${prefix}${seed.repeat(20).slice(0, 20)}`

/** The example requests and the answers they get, for the UTC day of `now`. */
export function exampleFlow(services: Pick<Services, 'catalogue' | 'config'>, now: number) {
  const { catalogue, config } = services
  const today = todayDayNumber(now)
  const day = (offset: number) => fromDayNumber(today + offset)
  const at = (minutes: number) => today * 86_400_000 + 9 * 60 * MINUTE_MS + minutes * MINUTE_MS // 09:00 UTC, then a minute a call

  const trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(30), end_date: day(37) }
  const travellers = [{ age: 34 }, { age: 8 }]
  const currency = 'EUR'
  const priced = priceCatalogue(catalogue, trip, agesKey(travellers), currency)
  const chosen = priced[0]!
  const issue = { plan_id: chosen.plan.plan_id, trip, travellers, partner_reference: 'BK-1234' }
  const modify = { scenario: 'extend_end_date', new_end_date: day(42) } as const
  // A documentation address (TEST-NET-1, RFC 5737), which no one's service answers: the events of a
  // Try it out go nowhere until the partner types in their own receiver's URL.
  const webhookUrl = WEBHOOK_PLACEHOLDER
  const requests = {
    [PATHS.session]: { lifetime_minutes: 60 },
    [PATHS.search]: { trip, travellers, currency },
    [PATHS.issue]: issue,
    [PATHS.modify]: modify,
    [PATHS.read]: {},
    [PATHS.certificate]: {},
    [PATHS.cancel]: { preview: true },
    [PATHS.webhook]: { url: webhookUrl },
    [PATHS.webhookTest]: {},
    [PATHS.events]: {},
    [PATHS.resend]: {},
  }
  // The cancel body's named examples; the first, a preview, is the flow's (it leaves the policy as it is).
  const cancellations = {
    preview: { summary: 'The refund if cancelled now; nothing changes', value: { preview: true } },
    cancel: { summary: 'Cancel the policy', value: {} },
  }
  // Each correction scenario, as the modify body's named examples; the first is the flow's.
  const scenarios = {
    extend_end_date: { summary: 'Extend the trip by five days', value: modify },
    shorten_end_date: { summary: 'End the trip two days earlier', value: { scenario: 'shorten_end_date', new_end_date: day(35) } },
    correct_destination: { summary: 'Correct the destination', value: { scenario: 'correct_destination', destination_country: 'DE' } },
    correct_partner_reference: { summary: 'Correct the booking reference', value: { scenario: 'correct_partner_reference', partner_reference: 'BK-5678' } },
  }

  const lifetime = Math.min(60 * 60, config.sessionTtlSeconds)
  const session = { ref: ref('sbx_', '4f1c'), expiresAt: at(0) + lifetime * 1000 }
  const issued: PolicyRecord = {
    id: 1,
    sessionId: 1,
    ref: ref('pol_sbx_', '7d2e'),
    svcInsuranceId: ref('svc_sbx_', '91ab'),
    planId: chosen.plan.plan_id,
    product: chosen.product,
    status: 'issued',
    trip,
    partnerReference: issue.partner_reference,
    currency,
    travellers: travellers.map(({ age }, index) => ({ traveller_ref: ref('trv_sbx_', `${index}c5f`), age })),
    premiumMinor: chosen.premiumMinor,
    createdAt: at(2),
    updatedAt: at(2),
    source: 'simulation',
    upstreamRef: null,
    documentReadyAt: at(2),
    cancellation: null,
    documentVersion: 1,
    coverageRecorded: 0,
    coverageDueAt: null,
  }
  const extended = { ...trip, end_date: modify.new_end_date }
  const definition = catalogue.plans.find((plan) => plan.product === chosen.product)!
  const premiumMinor = toMinorUnits(catalogue, premiumInPaise(catalogue, definition, extended, agesKey(travellers))!, currency)
  const endorsement = {
    scenario: modify.scenario,
    changes: { end_date: { from: trip.end_date, to: extended.end_date } },
    premiumChangeMinor: premiumMinor - issued.premiumMinor,
    createdAt: at(3),
  }
  const endorsed: PolicyRecord = { ...issued, status: 'endorsed', trip: extended, premiumMinor, updatedAt: at(3) }
  // Events as the flow makes them: the issue's (before the webhook was registered), and the test event.
  const withRef = (event: ReturnType<typeof newEvent>, seed: string) => {
    const id = ref('evt_', seed)
    return { ...event, ref: id, body: event.body.replace(event.ref, id) }
  }
  const issuedEvent = withRef(
    newEvent({ id: 1, ref: session.ref, clockOffsetMs: 0 }, 'policy.issued', policyEventData(policyView(services, issued, [], at(2)), 'policy.issued'), at(2)),
    '0a1b',
  )
  const testEvent = withRef(newEvent({ id: 1, ref: session.ref, clockOffsetMs: 0 }, 'webhook.test', { message: TEST_MESSAGE }, at(8)), '6e2f')
  const amount = (minor: number) => toAmount(catalogue, minor, currency)
  const data = {
    [PATHS.session]: sessionPayload(session, config, lifetime),
    [PATHS.search]: { trip, travellers: travellers.length, currency, plans: priced.map(({ plan }) => plan) },
    [PATHS.issue]: issuedPayload(services, issued, at(2)),
    [PATHS.modify]: {
      policy_ref: issued.ref,
      status: 'endorsed',
      trip: { end_date: extended.end_date },
      premium: amount(premiumMinor),
      premium_change: amount(endorsement.premiumChangeMinor),
      currency,
      endorsement: { sequence: 1, scenario: endorsement.scenario, created_at: isoTimestamp(endorsement.createdAt) },
    },
    [PATHS.read]: policyView(services, endorsed, [endorsement], at(4)),
    [PATHS.cancel]: {
      preview: true,
      policy_ref: issued.ref,
      status: endorsed.status,
      refund: refundView(services, endorsed, { at: at(6), refundMinor: endorsed.premiumMinor, by: 'partner' }),
    },
    [PATHS.webhook]: { url: webhookUrl, secret: `whsec_${'3f9a0c7e'.repeat(6)}`, event_types: [...EVENT_TYPES] },
    [PATHS.webhookTest]: JSON.parse(testEvent.body),
    [PATHS.events]: {
      events: [issuedEvent, testEvent].map((event, index) => ({
        ...JSON.parse(event.body),
        delivery:
          index === 0 ? null : { state: 'delivered', attempts: [{ attempt: 1, at: isoTimestamp(at(8)), status: 200, error: null }], next_attempt_at: null },
      })),
      next_cursor: testEvent.ref,
      has_more: false,
    },
    [PATHS.resend]: { event_id: testEvent.ref, next_attempt_at: isoTimestamp(at(10)) },
  }
  return { requests, scenarios, cancellations, data, session, startedAt: at(0), policyRef: issued.ref, requestIdSeed: '5f0c9a3e1b7d4c2a8e6f0b' }
}

export type ExampleFlow = ReturnType<typeof exampleFlow>

/**
 * The envelope of the flow's call number `call` (0 for the session), around its example `data` or
 * an example error of `code`, with the allowance and session the flow would have then.
 */
export function exampleEnvelope(config: Config, mode: Mode, flow: ExampleFlow, call: number, answer: { data: unknown } | { code: ErrorCode }) {
  const code = 'code' in answer ? answer.code : null
  // An expired session and a spent allowance are refused before the call is counted.
  const counted = code !== 'session_expired' && code !== 'rate_limited'
  const meta = {
    sandbox: true,
    session_expires_at: code === 'session_expired' ? null : isoTimestamp(flow.session.expiresAt),
    rate_limit: {
      limit: config.rateLimit,
      remaining: code === 'rate_limited' ? 0 : Math.max(0, config.rateLimit - call - (counted ? 1 : 0)),
      reset_at: isoTimestamp(flow.startedAt + config.rateWindowSeconds * 1000),
    },
  }
  const requestId = `req_${flow.requestIdSeed}${call.toString(16).padStart(2, '0')}`
  if ('data' in answer) return { ok: true, mode, request_id: requestId, data: answer.data, meta }
  const { details, ...wording } = ERROR_EXAMPLES[answer.code]
  const message = errorMessage(answer.code, wording)
  return { ok: false, mode, request_id: requestId, error: { code: answer.code, message, ...(details && { details }) }, meta }
}

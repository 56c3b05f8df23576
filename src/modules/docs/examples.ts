/**
 * @module Examples for the OpenAPI document: one flow a partner can run exactly as shown (session,
 * search, issue, modify, read-back, certificate, the session's clock read and advanced ten days into
 * the trip, a cancellation's preview, pro rata then, the webhook and events, and the insurer's side)
 * on dates relative to today, priced by the real catalogue, so the issue example names a `plan_id`
 * the search example really returns; and an example of every answer, built by the functions that
 * build the real ones.
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
import { consoleLink } from '../../http/console-link'
import { EVENT_TYPES, newEvent } from '../../domain/events'
import { MAX_CLOCK_AHEAD_DAYS, clockView } from '../../domain/session-clock'
import { TEST_MESSAGE } from '../events/service'
import { refundOf } from '../policies/refund'
import { cancellationPayload } from '../policies/cancel'
import { policyLine } from '../policies/list'

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

/**
 * The flow's calls in the order a partner makes them (the position is the call's number, and the
 * minute after 09:00 UTC its example happens at): the session's clock is advanced before the
 * cancellation's preview, so the preview shows a refund in the middle of the trip, and the insurer
 * cancels, once nothing else needs the policy live; then the session's policies are listed, and its
 * request log shows the issue call as it was sent and answered, and reads it again by its `request_id`.
 */
export const FLOW = [
  PATHS.session,
  PATHS.search,
  PATHS.issue,
  PATHS.modify,
  PATHS.read,
  PATHS.certificate,
  PATHS.clock,
  PATHS.advanceClock,
  PATHS.cancel,
  PATHS.webhook,
  PATHS.webhookTest,
  PATHS.events,
  PATHS.resend,
  PATHS.reissueCertificate,
  PATHS.insurerCancel,
  PATHS.policies,
  PATHS.requestLog,
  PATHS.requestLogEntry,
  PATHS.console,
] as const
export type FlowPath = (typeof FLOW)[number]

/** How far the flow advances the session's clock: ten days, into the trip (which starts in five). */
export const ADVANCE_DAYS = 10

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
  request_not_found: {},
  webhook_not_registered: {},
  clock_backwards: { values: { now: '2026-12-05T09:00:00.000Z' } },
  clock_too_far: { values: { maxDays: MAX_CLOCK_AHEAD_DAYS } },
  clock_not_movable: { variant: 'insurerPolicies' },
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
export function exampleFlow(services: Pick<Services, 'catalogue' | 'config'>, now: number, mode: Mode = 'simulation') {
  const { catalogue, config } = services
  const today = todayDayNumber(now)
  const day = (offset: number) => fromDayNumber(today + offset)
  // Each call at its minute after 09:00 UTC (real time), and the session's clock then: ahead from the advance on.
  const call = (path: FlowPath) => FLOW.indexOf(path)
  const advanceCall = call(PATHS.advanceClock)
  const offsetAt = (number: number) => (number >= advanceCall ? ADVANCE_DAYS * DAY_MS : 0)
  const wallAt = (number: number) => today * DAY_MS + 9 * 60 * MINUTE_MS + number * MINUTE_MS
  const wall = (path: FlowPath) => wallAt(call(path))
  const at = (path: FlowPath) => wall(path) + offsetAt(call(path))

  // Starts in five days, so that the clock advanced ten days is inside it (after the extension, 13 days long).
  const trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(5), end_date: day(12) }
  const travellers = [{ age: 34 }, { age: 8 }]
  const currency = 'EUR'
  const priced = priceCatalogue(catalogue, trip, agesKey(travellers), currency)
  const chosen = priced[0]!
  const issue = { plan_id: chosen.plan.plan_id, trip, travellers, partner_reference: 'BK-1234' }
  const modify = { scenario: 'extend_end_date', new_end_date: day(17) } as const
  // A documentation address (TEST-NET-1, RFC 5737), which no one's service answers: the events of a
  // Try it out go nowhere until the partner types in their own receiver's URL.
  const webhookUrl = WEBHOOK_PLACEHOLDER
  const advance = { days: ADVANCE_DAYS }
  const requests = {
    [PATHS.session]: { lifetime_minutes: 60 },
    [PATHS.search]: { trip, travellers, currency },
    [PATHS.issue]: issue,
    [PATHS.modify]: modify,
    [PATHS.read]: {},
    [PATHS.certificate]: {},
    [PATHS.clock]: {},
    [PATHS.advanceClock]: advance,
    [PATHS.cancel]: { preview: true },
    [PATHS.webhook]: { url: webhookUrl },
    [PATHS.webhookTest]: {},
    [PATHS.events]: {},
    [PATHS.resend]: {},
    [PATHS.reissueCertificate]: {},
    [PATHS.insurerCancel]: {},
    [PATHS.policies]: {},
    // The issue call, as the log keeps it (a path as listed: no reference in this one).
    [PATHS.requestLog]: { path: PATHS.issue },
    [PATHS.requestLogEntry]: {},
    [PATHS.console]: {},
  } satisfies Record<FlowPath, object>
  // The cancel body's named examples; the first, a preview, is the flow's (it leaves the policy as it is).
  const cancellations = {
    preview: { summary: 'The refund if cancelled now; nothing changes', value: { preview: true } },
    cancel: { summary: 'Cancel the policy', value: {} },
  }
  // Each correction scenario, as the modify body's named examples; the first is the flow's.
  const scenarios = {
    extend_end_date: { summary: 'Extend the trip by five days', value: modify },
    shorten_end_date: { summary: 'End the trip two days earlier', value: { scenario: 'shorten_end_date', new_end_date: day(10) } },
    correct_destination: { summary: 'Correct the destination', value: { scenario: 'correct_destination', destination_country: 'DE' } },
    correct_partner_reference: { summary: 'Correct the booking reference', value: { scenario: 'correct_partner_reference', partner_reference: 'BK-5678' } },
  }
  // The advance body's named examples; the first, ten days on, is the flow's.
  const advances = {
    days: { summary: 'Ten days on: into the trip (a cancel is then pro rata)', value: advance },
    to: { summary: "To a date: the day after the extended trip's end (a cancel then refunds nothing)", value: { to: day(18) } },
  }

  const lifetime = Math.min(60 * 60, config.sessionTtlSeconds)
  const session = { ref: ref('sbx_', '4f1c'), expiresAt: wall(PATHS.session) + lifetime * 1000 }
  const exampleSession = { id: 1, ref: session.ref, clockOffsetMs: 0 }
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
    createdAt: at(PATHS.issue),
    updatedAt: at(PATHS.issue),
    source: 'simulation',
    upstreamRef: null,
    documentReadyAt: at(PATHS.issue),
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
    createdAt: at(PATHS.modify),
  }
  const endorsed: PolicyRecord = { ...issued, status: 'endorsed', trip: extended, premiumMinor, updatedAt: at(PATHS.modify) }
  // Events as the flow makes them: the issue's (before the webhook was registered), the start of
  // cover that the advance passed (its first instant, UTC), and the test event.
  const withRef = (event: ReturnType<typeof newEvent>, seed: string) => {
    const id = ref('evt_', seed)
    return { ...event, ref: id, body: event.body.replace(event.ref, id) }
  }
  const issuedEvent = withRef(
    newEvent(exampleSession, 'policy.issued', policyEventData(policyView(services, issued, [], at(PATHS.issue)), 'policy.issued'), at(PATHS.issue)),
    '0a1b',
  )
  const coverStarts = (today + 5) * DAY_MS
  const startedEvent = withRef(
    newEvent(exampleSession, 'policy.started', policyEventData(policyView(services, endorsed, [endorsement], coverStarts), 'policy.started'), coverStarts),
    '3c4d',
  )
  const testEvent = withRef(newEvent(exampleSession, 'webhook.test', { message: TEST_MESSAGE }, at(PATHS.webhookTest)), '6e2f')
  // The insurer's side: the certificate's second version, then its cancellation (the whole premium back).
  const reissued: PolicyRecord = {
    ...endorsed,
    documentVersion: 2,
    documentReadyAt: at(PATHS.reissueCertificate),
    updatedAt: at(PATHS.reissueCertificate),
  }
  const cancellation = { at: at(PATHS.insurerCancel), refundMinor: reissued.premiumMinor, by: 'insurer' as const }
  const cancelled: PolicyRecord = { ...reissued, status: 'cancelled', cancellation, updatedAt: cancellation.at }
  const amount = (minor: number) => toAmount(catalogue, minor, currency)
  const previewAt = at(PATHS.cancel)
  const context: EnvelopeContext = {
    session,
    startedAt: wall(PATHS.session),
    sessionClock: (number: number) => (offsetAt(number) > 0 ? clockView(wallAt(number), offsetAt(number)) : undefined),
    requestIdSeed: '5f0c9a3e1b7d4c2a8e6f0b',
  }
  // The issue call as the request log keeps it: the body as sent, the envelope as answered.
  const issueAnswer = exampleEnvelope(config, mode, context, call(PATHS.issue), { data: issuedPayload(services, issued, at(PATHS.issue)) })
  const loggedIssue = {
    request_id: issueAnswer.request_id,
    at: isoTimestamp(wall(PATHS.issue)),
    method: 'POST',
    path: PATHS.issue,
    status: 200,
    error_code: null,
    duration_ms: 3.42,
    testing: { idempotency_key: null, sandbox_outcome: null, sandbox_delay_ms: null },
    request: { content_type: 'application/json', body: issue, note: null },
    answer: { content_type: 'application/json', body: issueAnswer, truncated: false },
  }
  // The link of a session with this ref (its proof from a made-up token hash), on the default port.
  const consoleAnswer = consoleLink(new Request('http://localhost:3000/'), 0, session, 'example-token-hash')
  const data = {
    [PATHS.session]: { ...sessionPayload(session, config, lifetime), console_url: consoleAnswer.console_url },
    [PATHS.search]: { trip, travellers: travellers.length, currency, plans: priced.map(({ plan }) => plan) },
    [PATHS.issue]: issuedPayload(services, issued, at(PATHS.issue)),
    [PATHS.modify]: {
      policy_ref: issued.ref,
      status: 'endorsed',
      trip: { end_date: extended.end_date },
      premium: amount(premiumMinor),
      premium_change: amount(endorsement.premiumChangeMinor),
      currency,
      endorsement: { sequence: 1, scenario: endorsement.scenario, created_at: isoTimestamp(endorsement.createdAt) },
    },
    [PATHS.read]: policyView(services, endorsed, [endorsement], at(PATHS.read)),
    [PATHS.clock]: clockView(wall(PATHS.clock), offsetAt(call(PATHS.clock))),
    [PATHS.advanceClock]: {
      ...clockView(wall(PATHS.advanceClock), offsetAt(advanceCall)),
      recorded_events: [{ event_id: startedEvent.ref, type: 'policy.started' as const, policy_ref: issued.ref, created_at: isoTimestamp(coverStarts) }],
    },
    [PATHS.cancel]: {
      preview: true,
      policy_ref: issued.ref,
      status: endorsed.status,
      refund: refundView(services, endorsed, {
        at: previewAt,
        refundMinor: refundOf(endorsed.trip, endorsed.premiumMinor, todayDayNumber(previewAt)).refundMinor,
        by: 'partner',
      }),
    },
    [PATHS.webhook]: { url: webhookUrl, secret: `whsec_${'3f9a0c7e'.repeat(6)}`, event_types: [...EVENT_TYPES] },
    [PATHS.webhookTest]: JSON.parse(testEvent.body),
    [PATHS.events]: {
      events: [issuedEvent, startedEvent, testEvent].map((event) => ({
        ...JSON.parse(event.body),
        // Attempts are on real time: a delivery is due when its event happens on the session's clock, less the clock's offset.
        delivery:
          event !== testEvent
            ? null
            : { state: 'delivered', attempts: [{ attempt: 1, at: isoTimestamp(wall(PATHS.webhookTest)), status: 200, error: null }], next_attempt_at: null },
      })),
      next_cursor: testEvent.ref,
      has_more: false,
    },
    [PATHS.resend]: { event_id: testEvent.ref, next_attempt_at: isoTimestamp(wall(PATHS.resend)) },
    [PATHS.reissueCertificate]: policyView(services, reissued, [endorsement], at(PATHS.reissueCertificate)),
    [PATHS.insurerCancel]: cancellationPayload(services, cancelled),
    [PATHS.policies]: { policies: [policyLine(services, cancelled, at(PATHS.policies))], next_cursor: null },
    [PATHS.requestLog]: { calls: [loggedIssue], next_cursor: null },
    [PATHS.requestLogEntry]: loggedIssue,
    [PATHS.console]: consoleAnswer,
    // (The certificate answers its PDF: no example.)
  } satisfies Record<Exclude<FlowPath, typeof PATHS.certificate>, unknown>
  return {
    requests,
    scenarios,
    cancellations,
    advances,
    data,
    ...context,
    policyRef: issued.ref,
    /** The `request_id` of the call the log's example reads (the issue's). */
    requestId: loggedIssue.request_id,
  }
}

export type ExampleFlow = ReturnType<typeof exampleFlow>

/** What an example envelope needs of the flow: its session, when it started, its clock and the request ids' seed. */
interface EnvelopeContext {
  session: { expiresAt: number }
  startedAt: number
  /** The session's clock as the answer of call number `number` shows it (`meta.session_clock`): none until it was advanced. */
  sessionClock: (number: number) => ReturnType<typeof clockView> | undefined
  requestIdSeed: string
}

/**
 * The envelope of the flow's call number `call` (0 for the session), around its example `data` or
 * an example error of `code`, with the allowance and session the flow would have then.
 */
export function exampleEnvelope(config: Config, mode: Mode, flow: EnvelopeContext, call: number, answer: { data: unknown } | { code: ErrorCode }) {
  const code = 'code' in answer ? answer.code : null
  // An expired session and a spent allowance are refused before the call is counted.
  const counted = code !== 'session_expired' && code !== 'rate_limited'
  // An answer that belongs to no session (an expired one) says nothing of its clock.
  const clock = code === 'session_expired' ? undefined : flow.sessionClock(call)
  const meta = {
    sandbox: true,
    session_expires_at: code === 'session_expired' ? null : isoTimestamp(flow.session.expiresAt),
    rate_limit: {
      limit: config.rateLimit,
      remaining: code === 'rate_limited' ? 0 : Math.max(0, config.rateLimit - call - (counted ? 1 : 0)),
      reset_at: isoTimestamp(flow.startedAt + config.rateWindowSeconds * 1000),
    },
    ...(clock && { session_clock: clock }),
  }
  const requestId = `req_${flow.requestIdSeed}${call.toString(16).padStart(2, '0')}`
  if ('data' in answer) return { ok: true, mode, request_id: requestId, data: answer.data, meta }
  const { details, ...wording } = ERROR_EXAMPLES[answer.code]
  const message = errorMessage(answer.code, wording)
  return { ok: false, mode, request_id: requestId, error: { code: answer.code, message, ...(details && { details }) }, meta }
}

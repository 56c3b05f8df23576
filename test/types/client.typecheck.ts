/**
 * Type test, checked by `npm run typecheck` (tsc --noEmit), never run: the typed client accepts
 * what the sandbox accepts and refuses, at compile time, what it would refuse at run time.
 * Each `@ts-expect-error` fails the type check if the line below it ever compiles.
 */
import { createSandboxClient, verifyWebhook } from '../../src/client'

const sandbox = createSandboxClient('http://localhost:3000')
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2026-12-20', end_date: '2026-12-30' }

export async function accepted() {
  const search = await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: 34 }], currency: 'EUR' })
  const planId: string | undefined = search.data?.data.plans[0]?.plan_id
  const issued = await sandbox.api.sandbox.policy.new.post({ plan_id: planId!, trip, travellers: [{ age: 34 }], partner_reference: 'BK-1' })
  const ref: string | undefined = issued.data?.data.policy_ref
  const modified = await sandbox.api.sandbox.policy({ policy_ref: ref! }).modify.post({ scenario: 'extend_end_date', new_end_date: '2027-01-02' })
  const sequence: number | undefined = modified.data?.data.endorsement?.sequence
  // At 404 modify can only say policy_not_found.
  const code: 'policy_not_found' | undefined = modified.error?.status === 404 ? modified.error.value.error.code : undefined
  // @ts-expect-error a 404 answer carries no data
  if (modified.error?.status === 404) modified.error.value.data
  const read = await sandbox.api.sandbox.policy({ policy_ref: ref! }).read.post({})
  const history: { sequence: number; old_value: string | null; new_value: string }[] | undefined = read.data?.data.endorsements
  const readCode: 'policy_not_found' | undefined = read.error?.status === 404 ? read.error.value.error.code : undefined
  const certificate = await sandbox.api.sandbox.policy({ policy_ref: ref! }).documents.policy_certificate.post({})
  const pdf: Uint8Array | null = certificate.data
  const short = await sandbox.api.sandbox.session.post({ lifetime_minutes: 1 })
  const minutes: number | undefined = short.data?.data.limits.session_minutes
  // The testing and retry headers, per call: each route names the forced outcomes it can meet.
  const forced = await sandbox.api.sandbox.policy.new.post(
    { plan_id: planId!, trip, travellers: [{ age: 34 }] },
    {
      headers: { 'idempotency-key': 'booking-1', 'sandbox-outcome': 'upstream_unavailable' },
    },
  )
  const forcedCode = forced.error?.status === 503 ? forced.error.value.error.code : undefined
  await sandbox.api.sandbox.policy({ policy_ref: ref! }).read.post({}, { headers: { 'sandbox-outcome': 'session_expired' } })
  // The lifecycle: business outcomes on issue, a delayed answer, a correction's preview, a cancellation.
  const declined = await sandbox.api.sandbox.policy.new.post(
    { plan_id: planId!, trip, travellers: [{ age: 34 }], expected_premium: 12.5 },
    {
      headers: { 'sandbox-outcome': 'price_changed', 'sandbox-delay-ms': '2000' },
    },
  )
  const businessCode:
    | 'price_changed'
    | 'plan_mismatch'
    | 'idempotency_in_progress'
    | 'policy_cancelled'
    | 'document_not_ready'
    | 'clock_not_movable'
    | undefined = declined.error?.status === 409 ? declined.error.value.error.code : undefined
  const preview = await sandbox.api.sandbox
    .policy({ policy_ref: ref! })
    .modify.post({ scenario: 'correct_destination', destination_country: 'DE', preview: true })
  const previewed: true | undefined = preview.data?.data.preview
  const cancelled = await sandbox.api.sandbox.policy({ policy_ref: ref! }).cancel.post({ preview: true }, { headers: { 'idempotency-key': 'cancel-1' } })
  const rule: 'full_before_start' | 'pro_rata_unused_days' | 'none_after_end' | 'full_insurer_cancellation' | undefined = cancelled.data?.data.refund.rule
  const cancelCode: 'policy_cancelled' | undefined = cancelled.error?.status === 409 ? cancelled.error.value.error.code : undefined
  const refundBack = (await sandbox.api.sandbox.policy({ policy_ref: ref! }).read.post({})).data?.data.cancellation?.refund.amount
  // Events and the webhook endpoint: the secret comes once, deliveries are verified with it.
  const registered = await sandbox.api.sandbox.webhook.post({ url: 'http://localhost:4000/hooks' })
  const secret: string | undefined = registered.data?.data.secret
  const listed = await sandbox.api.sandbox.events.post({ limit: 10 })
  const eventType:
    | 'policy.issued'
    | 'policy.endorsed'
    | 'policy.cancelled'
    | 'policy.started'
    | 'policy.ended'
    | 'document.ready'
    | 'webhook.test'
    | undefined = listed.data?.data.events[0]?.type
  const attempts: number | undefined = listed.data?.data.events[0]?.delivery?.attempts.length
  const verified: boolean = verifyWebhook(secret!, 't=1,v1=00', '{}')
  const resent = await sandbox.api.sandbox.events({ event_id: 'evt_x' }).resend.post({})
  const resendCode: 'event_not_found' | undefined = resent.error?.status === 404 ? resent.error.value.error.code : undefined
  // Test helpers: the session's clock, read and advanced (by days, or to a date or instant), and the insurer's side of a policy.
  const clock = await sandbox.api.sandbox.test_helpers.clock.post({})
  const today: string | undefined = clock.data?.data.today
  const advanced = await sandbox.api.sandbox.test_helpers.clock.advance.post({ days: 10 })
  const recorded: string | undefined = advanced.data?.data.recorded_events[0]?.event_id
  const ahead: number | undefined = advanced.data?.meta.session_clock?.offset_seconds
  const clockCode: 'clock_backwards' | 'clock_not_movable' | undefined = advanced.error?.status === 409 ? advanced.error.value.error.code : undefined
  await sandbox.api.sandbox.test_helpers.clock.advance.post({ to: '2027-01-15' })
  const coverage: 'upcoming' | 'active' | 'ended' | undefined = (await sandbox.api.sandbox.policy({ policy_ref: ref! }).read.post({})).data?.data.coverage
  const reissued = await sandbox.api.sandbox.test_helpers.policy({ policy_ref: ref! }).reissue_certificate.post({})
  const version: number | undefined = reissued.data?.data.documents[0]?.version
  const byInsurer = await sandbox.api.sandbox.test_helpers.policy({ policy_ref: ref! }).insurer_cancel.post({})
  const cancelledBy: 'partner' | 'insurer' | undefined = byInsurer.data?.data.cancelled_by
  const insurerCode: 'policy_cancelled' | 'insurer_side_unavailable' | undefined =
    byInsurer.error?.status === 409 ? byInsurer.error.value.error.code : undefined
  // What the session holds: its policies, and its request log (failed calls, then one call by its request_id).
  const policies = await sandbox.api.sandbox.policies.post({ limit: 10 })
  const listedPolicies: { policy_ref: string; status: 'issued' | 'endorsed' | 'cancelled'; premium: number }[] | undefined = policies.data?.data.policies
  const olderPolicies = await sandbox.api.sandbox.policies.post({ cursor: policies.data?.data.next_cursor ?? undefined })
  const failed = await sandbox.api.sandbox.requests.post({ failed: true, path: '/api/sandbox/policy/new', since: '2026-12-01T00:00:00Z', limit: 20 })
  const failedCall = failed.data?.data.calls[0]
  const failedStatus: number | undefined = failedCall?.status
  const failedCode: string | null | undefined = failedCall?.error_code
  const replayed: 'sent' | 'replayed' | null | undefined = failedCall?.testing.idempotency_key
  const one = await sandbox.api.sandbox.requests({ request_id: failedCall?.request_id ?? issued.data!.request_id }).post({})
  const truncated: boolean | undefined = one.data?.data.answer.truncated
  const requestCode: 'request_not_found' | undefined = one.error?.status === 404 ? one.error.value.error.code : undefined
  return {
    sequence,
    code,
    history,
    readCode,
    pdf,
    minutes,
    forcedCode,
    businessCode,
    previewed,
    rule,
    cancelCode,
    refundBack,
    eventType,
    attempts,
    verified,
    resendCode,
    today,
    recorded,
    ahead,
    clockCode,
    coverage,
    version,
    cancelledBy,
    insurerCode,
    listedPolicies,
    olderPolicies,
    failedStatus,
    failedCode,
    replayed,
    truncated,
    requestCode,
  }
}

export async function refused() {
  // @ts-expect-error travellers carry an age only: no names
  await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: 34, name: 'Ann' }] })
  // @ts-expect-error age is a number
  await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: '34' }] })
  // @ts-expect-error trip is required
  await sandbox.api.sandbox.plans.search.post({ travellers: [{ age: 34 }] })
  // @ts-expect-error plan_id is required to issue
  await sandbox.api.sandbox.policy.new.post({ trip, travellers: [{ age: 34 }] })
  // biome-ignore format: on one line, so that the @ts-expect-error below covers the whole call
  // @ts-expect-error each scenario takes its own field, not another scenario's as well
  await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).modify.post({ scenario: 'extend_end_date', new_end_date: '2027-01-02', destination_country: 'DE' })
  // @ts-expect-error a scenario needs its own field
  await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).modify.post({ scenario: 'correct_destination' })
  // @ts-expect-error scenarios come from a fixed list
  await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).modify.post({ scenario: 'change_name' })
  // @ts-expect-error the answer has no such field
  ;(await sandbox.api.sandbox.session.post({})).data?.data.token
  // @ts-expect-error lifetime_minutes is a number
  await sandbox.api.sandbox.session.post({ lifetime_minutes: '5' })
  // @ts-expect-error read-back never calls the insurer: it cannot be forced to find it down
  await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).read.post({}, { headers: { 'sandbox-outcome': 'upstream_unavailable' } })
  // @ts-expect-error forced outcomes come from a fixed list
  await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: 34 }] }, { headers: { 'sandbox-outcome': 'timeout' } })
  // @ts-expect-error business outcomes are issue's only
  await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).cancel.post({}, { headers: { 'sandbox-outcome': 'insurer_declined' } })
  // @ts-expect-error cancel takes no reason (no free text reaches the sandbox)
  await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).cancel.post({ reason: 'sick' })
  // @ts-expect-error a webhook endpoint is a URL or null
  await sandbox.api.sandbox.webhook.post({ url: 4000 })
  // @ts-expect-error the clock moves by whole days (a number) or to a date or instant
  await sandbox.api.sandbox.test_helpers.clock.advance.post({ days: '10' })
  // @ts-expect-error the clock moves by days or to a date or instant, not by hours
  await sandbox.api.sandbox.test_helpers.clock.advance.post({ hours: 5 })
  // @ts-expect-error the test helpers never call the insurer: they cannot be forced to find it down
  await sandbox.api.sandbox.test_helpers.clock.post({}, { headers: { 'sandbox-outcome': 'upstream_unavailable' } })
  // @ts-expect-error the request log's filter is failed or not, a boolean
  await sandbox.api.sandbox.requests.post({ failed: 'yes' })
  // @ts-expect-error the request log takes no other filter (no free text beyond a path)
  await sandbox.api.sandbox.requests.post({ status: 422 })
  // @ts-expect-error a cursor is the previous answer's next_cursor, a string
  await sandbox.api.sandbox.policies.post({ cursor: 5 })
  // @ts-expect-error the certificate is bytes, not an envelope
  ;(await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).documents.policy_certificate.post({})).data?.data
}

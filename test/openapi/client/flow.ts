/**
 * @module A partner's program on a client generated from the served OpenAPI document alone
 * (openapi-typescript types in ./schema.d.ts, openapi-fetch calls): session, search, issue, the four
 * scenarios, read-back, an error narrowed by status, and a cancellation; the plan and the policy
 * typed by the document's named schemas. test/http/openapi-tools.spec.ts generates the types,
 * type-checks this file (tsconfig.json, strict) and runs it: `bun flow.ts <base url>`.
 */
import createClient, { type Middleware } from 'openapi-fetch'
import type { components, paths } from './schema'

/** The document's named shapes, by name: what search answers plans as and read-back a policy as. */
type Plan = components['schemas']['Plan']
type Policy = components['schemas']['Policy']
type Modify = paths['/api/sandbox/policy/{policy_ref}/modify']['post']
type ModifyBody = NonNullable<Modify['requestBody']>['content']['application/json']
/** The error body the document declares for modify at one status. */
type ModifyError<Status extends keyof Modify['responses']> = Modify['responses'][Status]['content']['application/json']

const baseUrl = process.argv[2] ?? 'http://localhost:3000'
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)

// fetch outside a browser keeps no cookies: carry the session cookie by hand, as partners must.
let cookie: string | undefined
const keepSession: Middleware = {
  onRequest({ request }) {
    if (cookie) request.headers.set('cookie', cookie)
    return request
  },
  onResponse({ response }) {
    const session = response.headers.get('set-cookie')?.match(/sbx_session=([^;]*)/)
    if (session) cookie = `sbx_session=${session[1]}`
    return response
  },
}
const client = createClient<paths>({ baseUrl })
client.use(keepSession)

function ok<T>(result: { data?: T; error?: unknown; response: Response }, step: string): T {
  if (result.data === undefined) throw new Error(`${step}: HTTP ${result.response.status} ${JSON.stringify(result.error)}`)
  return result.data
}

const session = ok(await client.POST('/api/sandbox/session'), 'session')
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(10), end_date: day(20) }
const search = ok(await client.POST('/api/sandbox/plans/search', { body: { trip, travellers: [{ age: 34 }, { age: 8 }], currency: 'EUR' } }), 'search')
const plan: Plan | undefined = search.data.plans[0]
if (!plan) throw new Error('search: no plan')
// Integers are numbers, not strings: the allowance counts down within the one session.
const remaining: number = search.meta.rate_limit.remaining
if (remaining !== session.meta.rate_limit.remaining - 1) throw new Error('search: not in the session the first call opened')

const issued = ok(
  await client.POST('/api/sandbox/policy/new', {
    params: { header: { 'Idempotency-Key': `flow-${Date.now()}` } },
    body: { plan_id: plan.plan_id, trip, travellers: [{ age: 8 }, { age: 34 }], partner_reference: 'BK-1' },
  }),
  'issue',
)
const policy_ref = issued.data.policy_ref
const modify = (body: ModifyBody, ref = policy_ref) => client.POST('/api/sandbox/policy/{policy_ref}/modify', { params: { path: { policy_ref: ref } }, body })

const steps: ModifyBody[] = [
  { scenario: 'extend_end_date', new_end_date: day(25) },
  { scenario: 'shorten_end_date', new_end_date: day(22) },
  { scenario: 'correct_destination', destination_country: 'DE' },
  { scenario: 'correct_partner_reference', partner_reference: 'BK-2' },
]
for (const [index, step] of steps.entries()) {
  const endorsed = ok(await modify(step), step.scenario)
  if (endorsed.data.endorsement?.sequence !== index + 1 || endorsed.data.endorsement.scenario !== step.scenario)
    throw new Error(`${step.scenario}: wrong endorsement`)
}

// Read-back and the certificate, from the document alone: the history typed, the PDF as bytes.
const path = { params: { path: { policy_ref } } }
const policy: Policy = ok(await client.POST('/api/sandbox/policy/{policy_ref}/read', path), 'read').data
const history: { sequence: number; scenario: string; old_value: string | null; new_value: string }[] = policy.endorsements
if (history.length !== steps.length || policy.partner_reference !== 'BK-2' || policy.plan_id !== plan.plan_id)
  throw new Error('read: not the policy as it stands')
const certificate = await client.POST('/api/sandbox/policy/{policy_ref}/documents/policy_certificate', { ...path, parseAs: 'arrayBuffer' })
if (new TextDecoder().decode(ok(certificate, 'certificate').slice(0, 5)) !== '%PDF-') throw new Error('certificate: not a PDF')

const missing = await modify({ scenario: 'extend_end_date', new_end_date: day(30) }, 'pol_sbx_0000')
if (missing.response.status !== 404) throw new Error(`unknown policy: HTTP ${missing.response.status}`)
// At 404 modify can only say policy_not_found: the type says so, from the document alone.
const notFound = missing.error as ModifyError<404>
const code: 'policy_not_found' = notFound.error.code
if (code !== 'policy_not_found' || notFound.ok !== false) throw new Error('unknown policy: wrong error')

// Cancel: the refund it would get, then the cancellation; the refund rule is one of the document's.
const cancel = (body: { preview?: boolean }) => client.POST('/api/sandbox/policy/{policy_ref}/cancel', { ...path, body })
const preview = ok(await cancel({ preview: true }), 'cancel preview')
const cancelled = ok(await cancel({}), 'cancel')
const rule: 'full_before_start' | 'pro_rata_unused_days' | 'none_after_end' | 'full_insurer_cancellation' = cancelled.data.refund.rule
if (cancelled.data.status !== 'cancelled' || cancelled.data.refund.amount !== preview.data.refund.amount) throw new Error('cancel: not the previewed refund')

console.log(JSON.stringify({ session: session.data.session_ref, policy_ref, endorsements: steps.length, error: code, refund: rule }))

/** Never called: each body below must stay a compile error. */
export function wrongBodies() {
  // @ts-expect-error a scenario carries its own field, not another scenario's
  void modify({ scenario: 'extend_end_date', destination_country: 'DE' })
  // @ts-expect-error nor another scenario's field beside its own
  void modify({ scenario: 'extend_end_date', new_end_date: day(25), destination_country: 'DE' })
  // @ts-expect-error a scenario needs its field
  void modify({ scenario: 'correct_destination' })
  // @ts-expect-error ages are integers, not strings
  void client.POST('/api/sandbox/plans/search', { body: { trip, travellers: [{ age: '34' }] } })
}

/**
 * @module A partner's program on the SDK that hey-api (@hey-api/openapi-ts, its fetch client)
 * generates from the served OpenAPI document alone: one function per operation, named by the
 * document's operationIds, and the named component schemas as types. Session, search, issue, the
 * session's clock advanced into the trip (a test helper), and cancel, with no base URL anywhere: the generated client takes the origin from the document's
 * `servers`. The one thing added by hand is the session cookie, carried by interceptors.
 * test/http/generated-clients.spec.ts generates the SDK into ./sdk beside a copy of this file and
 * tsconfig.json, type-checks them (strict) and runs it: `bun flow.ts`.
 */
import { advanceClock, cancelPolicy, createSession, issuePolicy, searchPlans, type IssuedPolicy, type Plan, type Trip } from './sdk'
import { client } from './sdk/client.gen'

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)

// fetch outside a browser keeps no cookies: carry the session cookie by hand, as partners must.
let cookie: string | undefined
client.interceptors.request.use((request) => {
  if (cookie) request.headers.set('cookie', cookie)
  return request
})
client.interceptors.response.use((response) => {
  const session = response.headers.get('set-cookie')?.match(/sbx_session=([^;]*)/)
  if (session) cookie = `sbx_session=${session[1]}`
  return response
})

// throwOnError: an answer other than 2xx throws, so `data` is the 200 answer's type.
const session = (await createSession({ throwOnError: true })).data
const trip: Trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(10), end_date: day(20) }
const search = (await searchPlans({ body: { trip, travellers: [{ age: 34 }, { age: 8 }], currency: 'EUR' }, throwOnError: true })).data
const plan: Plan | undefined = search.data.plans[0]
if (!plan) throw new Error('search: no plan')
// Integers are numbers, not strings: the allowance counts down within the one session.
const remaining: number = search.meta.rate_limit.remaining
if (remaining !== session.meta.rate_limit.remaining - 1) throw new Error('search: not in the session the first call opened')

const issued: IssuedPolicy = (
  await issuePolicy({
    headers: { 'Idempotency-Key': `hey-api-${Date.now()}` },
    body: { plan_id: plan.plan_id, trip, travellers: [{ age: 8 }, { age: 34 }], partner_reference: 'BK-1' },
    throwOnError: true,
  })
).data.data
if (issued.plan_id !== plan.plan_id || issued.status !== 'issued') throw new Error('issue: not the chosen plan')

// Twelve days on, on the session's clock: two days into the trip, so the refund is pro rata.
const advanced = (await advanceClock({ body: { days: 12 }, throwOnError: true })).data
const today: string = advanced.data.today
if (advanced.meta.session_clock?.today !== today || today !== day(12)) throw new Error('advance: not twelve days on')

const cancelled = (await cancelPolicy({ path: { policy_ref: issued.policy_ref }, body: {}, throwOnError: true })).data.data
// The refund rule is one of the document's, as a type.
const rule: 'full_before_start' | 'pro_rata_unused_days' | 'none_after_end' | 'full_insurer_cancellation' = cancelled.refund.rule

console.log(
  JSON.stringify({
    baseUrl: client.getConfig().baseUrl,
    session: session.data.session_ref,
    plan: plan.plan_id,
    policy_ref: cancelled.policy_ref,
    status: cancelled.status,
    refund: rule,
  }),
)

/** Never called: each call below must stay a compile error. */
export function wrongCalls() {
  // @ts-expect-error ages are integers, not strings
  void searchPlans({ body: { trip, travellers: [{ age: '34' }] } })
  // @ts-expect-error cancel needs the policy_ref in its path
  void cancelPolicy({ body: {} })
  // @ts-expect-error the clock moves by a number of days
  void advanceClock({ body: { days: '12' } })
  // @ts-expect-error a plan's tier is one of the document's
  const tier: Plan['tier'] = 'gold'
  void tier
}

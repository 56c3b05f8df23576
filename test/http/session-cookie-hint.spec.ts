/**
 * A client that keeps no cookies (Node's fetch, generated clients) opens a new session on every
 * call: a reference it got from an earlier call then answers its usual "not found", and that answer
 * says why (http/session-hint.ts, docs/api.md's "Keeping the session cookie"). With the cookie of a
 * session that simply lacks the reference, the answer is as it always was.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { API, call, expect, expectError, expectOk, issuePolicy, searchBody, test, tripFrom, uniqueNetwork, type Reply } from './support/client'
import { ROOT } from './support/server'

const EVENTS = '/api/sandbox/events'
const resendPath = (id: string) => `/api/sandbox/events/${id}/resend`

const NO_COOKIE = {
  sentence:
    'This call carried no session cookie (sbx_session), so it started a new session: send back the cookie the first call set ' +
    '(keep a cookie jar; the API guide\'s "Keeping the session cookie" (docs/api.md) shows how in fetch, axios, Python and Java).',
  detail: { field: 'Cookie', issue: 'has no sbx_session, so this call started a new session, in which no plan, policy or event of another session resolves' },
}
const UNKNOWN_COOKIE = {
  sentence:
    'This call carried a session cookie (sbx_session) this sandbox does not know, so it started a new session: send back the cookie ' +
    'the sandbox set, unchanged (keep a cookie jar; the API guide\'s "Keeping the session cookie" (docs/api.md) shows how in fetch, axios, Python and Java).',
  detail: {
    field: 'Cookie',
    issue: 'has an sbx_session this sandbox does not know, so this call started a new session, in which no plan, policy or event of another session resolves',
  },
}

/** The usual words of each "not found", as a session that lacks the reference is answered. */
const USUAL = {
  plan_not_found: 'No plan search in this session returned this plan_id.',
  policy_not_found: 'No policy with this policy_ref exists in this session.',
  event_not_found: 'No event with this id exists in this session.',
}

/** A "not found" with the hint: the usual message and details, then the hint's sentence and detail; a new session's cookie set. */
async function expectHinted(answer: Reply, code: keyof typeof USUAL, hint: typeof NO_COOKIE, usualDetails: object[] = []) {
  const error = await expectError(answer, 404, code)
  expect(error.message).toBe(`${USUAL[code]} ${hint.sentence}`)
  expect(error.details).toEqual([...usualDetails, hint.detail])
  expect(answer.token, 'the new session is set as ever').toBeTruthy()
}

test.describe('a reference asked for without the session cookie', () => {
  test('search then issue, each call without a cookie: plan_not_found says the call carried none', async ({ baseURL }) => {
    const network = uniqueNetwork()
    const body = searchBody(tripFrom(6, 5))
    const { plans } = (await expectOk(await call(baseURL!, API.search, { body, network }))).data
    const issued = await call(baseURL!, API.issue, { body: { plan_id: plans[0].plan_id, ...body }, network })
    await expectHinted(issued, 'plan_not_found', NO_COOKIE, [{ field: 'plan_id', issue: 'was not returned by a plan search in this session' }])
  })

  test('read of a policy and resend of an event without a cookie say the same', async ({ request, baseURL }) => {
    const { policy } = await issuePolicy(request)
    const { events } = (await expectOk(await request.post(EVENTS, { data: {} }))).data
    const network = uniqueNetwork()
    await expectHinted(await call(baseURL!, API.read(policy.policy_ref), { network }), 'policy_not_found', NO_COOKIE)
    await expectHinted(await call(baseURL!, resendPath(events[0].id), { network }), 'event_not_found', NO_COOKIE)
    // The policy is still there for the session that issued it.
    await expectOk(await request.post(API.read(policy.policy_ref)))
  })

  test('with a session cookie the sandbox does not know, the hint says that instead', async ({ request, baseURL }) => {
    const { policy } = await issuePolicy(request)
    const answer = await call(baseURL!, API.read(policy.policy_ref), { cookie: 'a-token-this-sandbox-never-set', network: uniqueNetwork() })
    await expectHinted(answer, 'policy_not_found', UNKNOWN_COOKIE)
    expect(answer.token).not.toBe('a-token-this-sandbox-never-set')
  })

  test('with the cookie of a session that lacks the reference: the usual answer, no hint', async ({ request, newClient }) => {
    const trip = tripFrom(6, 5)
    const { plan, policy, body } = await issuePolicy(request, { trip })
    const { events } = (await expectOk(await request.post(EVENTS, { data: {} }))).data
    const stranger = await newClient()
    await expectOk(await stranger.post(API.session))
    const refusals = [
      { code: 'plan_not_found', answer: await stranger.post(API.issue, { data: { ...body, plan_id: plan.plan_id } }) },
      { code: 'policy_not_found', answer: await stranger.post(API.read(policy.policy_ref)) },
      { code: 'event_not_found', answer: await stranger.post(resendPath(events[0].id)) },
    ] as const
    for (const { code, answer } of refusals) {
      const error = await expectError(answer, 404, code)
      expect(error.message).toBe(USUAL[code])
      expect(JSON.stringify(error)).not.toContain('sbx_session')
      expect(answer.headers()['set-cookie'], 'no new session').toBeUndefined()
    }
  })
})

test("the API guide's fetch wrapper keeps the session: search then issue, run by Node as the guide shows it", async ({ privateServer }, info) => {
  test.skip(info.project.name !== 'bun', 'the guide is the same on every target; it runs once')
  const server = await privateServer('guide-fetch')
  const guide = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8')
  const section = guide.slice(guide.indexOf('\n### Keeping the session cookie\n'))
  const snippet = /\n {2}```js\n([\s\S]*?)\n {2}```/.exec(section)?.[1]
  expect(snippet, 'a js block under "Keeping the session cookie"').toContain('async function sandbox(path, body = {})')
  const program = `${snippet!.replaceAll('http://localhost:3000', server.url)}
const day = (offset) => new Date(Date.now() + offset * 864e5).toISOString().slice(0, 10)
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(30), end_date: day(37) }
const search = await sandbox('/api/sandbox/plans/search', { trip, travellers: [{ age: 34 }] })
const issued = await sandbox('/api/sandbox/policy/new', { plan_id: search.data.plans[0].plan_id, trip, travellers: [{ age: 34 }] })
console.log(JSON.stringify(issued))
`
  const ran = spawnSync('node', ['--input-type=module', '-e', program], { encoding: 'utf8', timeout: 30_000 })
  expect(ran.status, ran.stderr).toBe(0)
  const issued = JSON.parse(ran.stdout)
  expect(issued.ok, ran.stdout).toBe(true)
  expect(issued.data.policy_ref).toMatch(/^pol_sbx_[0-9a-f]+$/)
})

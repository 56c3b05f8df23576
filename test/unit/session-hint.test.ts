/**
 * The hint on a reference's "not found" when the call opened a session of its own (http/session-hint.ts):
 * which cookie states give which hint, that nothing else about the answer changes, and that the
 * answer still fits the failure envelope's schema. The HTTP suite checks the same over a socket
 * (test/http/session-cookie-hint.spec.ts).
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { Value } from '@sinclair/typebox/value'
import { ApiError, ERRORS } from '../../src/errors'
import { FailureModel } from '../../src/http/envelope-model'
import { SESSION_HINT, withSessionHint } from '../../src/http/session-hint'
import { START_MS, expectFailure, inProcessApp, tripFrom } from './support/app'

const MINUTE = 60_000
const UNKNOWN_POLICY = 'policy/pol_sbx_00000000000000000000/read'
const UNKNOWN_EVENT = 'events/evt_00000000000000000000/resend'

/** An issue against a plan_id no search of the calling session returned. */
const issueBody = () => ({ plan_id: 'plan_not_searched', trip: tripFrom(START_MS, 3, 4), travellers: [{ age: 30 }] })

describe('withSessionHint', () => {
  test('adds the sentence and the detail to a reference not found, after what it had', () => {
    const error = new ApiError('plan_not_found', { variant: 'notSearched', details: [{ field: 'plan_id', issue: 'was not returned' }] })
    const hinted = withSessionHint(error, 'no_cookie')
    expect(hinted).toBeInstanceOf(ApiError)
    expect(hinted.status).toBe(404)
    expect(hinted.code).toBe('plan_not_found')
    expect(hinted.message).toBe(`${ERRORS.plan_not_found.messages.notSearched} ${SESSION_HINT.no_cookie.sentence}`)
    expect(hinted.details).toEqual([{ field: 'plan_id', issue: 'was not returned' }, SESSION_HINT.no_cookie.detail])
    expect(error.message).toBe(ERRORS.plan_not_found.messages.notSearched)
    expect(error.details).toEqual([{ field: 'plan_id', issue: 'was not returned' }])
  })

  test('names a heading the API guide has', () => {
    expect(SESSION_HINT.no_cookie.sentence).toContain('"Keeping the session cookie" (docs/api.md)')
    expect(SESSION_HINT.unknown_cookie.sentence).toContain('"Keeping the session cookie" (docs/api.md)')
    expect(readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')).toMatch(/^#{2,4} Keeping the session cookie$/m)
  })

  test('leaves every other error, and a call that used its session, as they are', () => {
    const others = [
      new ApiError('validation_failed', { variant: 'fields' }),
      new ApiError('plan_mismatch'),
      new ApiError('not_found'),
      new ApiError('session_expired', { variant: 'ended' }),
      new ApiError('rate_limited', { values: { limit: 30, windowSeconds: 600, byDefault: false }, retryAfter: 5 }),
    ]
    for (const error of others) expect(withSessionHint(error, 'no_cookie')).toBe(error)
    const error = new ApiError('policy_not_found')
    expect(withSessionHint(error, null)).toBe(error)
  })
})

describe('a reference not found in a session the call opened', () => {
  test('without a cookie: plan, policy and event say the call carried none, and set the new session', async () => {
    const sandbox = await inProcessApp()
    const answers = [
      [await sandbox.call('policy/new', issueBody()), 'plan_not_found'],
      [await sandbox.call(UNKNOWN_POLICY), 'policy_not_found'],
      [
        await sandbox.call('policy/pol_sbx_00000000000000000000/modify', { scenario: 'correct_partner_reference', partner_reference: 'BK-1' }),
        'policy_not_found',
      ],
      [await sandbox.call(UNKNOWN_EVENT), 'event_not_found'],
    ] as const
    for (const [answer, code] of answers) {
      expectFailure(answer, 404, code)
      expect(answer.body.error.message).toEndWith(SESSION_HINT.no_cookie.sentence)
      expect(answer.body.error.details.at(-1)).toEqual(SESSION_HINT.no_cookie.detail)
      expect(answer.cookie).toBeTruthy()
      expect(Value.Check(FailureModel, answer.body)).toBe(true)
    }
  })

  test('with a cookie the sandbox does not know (forged, garbled, or forgotten): it says so instead', async () => {
    const sandbox = await inProcessApp()
    for (const cookie of ['forged-token', '%E0%A4%A', '{}', 'x'.repeat(300)]) {
      const answer = await sandbox.call(UNKNOWN_POLICY, undefined, { cookie })
      expectFailure(answer, 404, 'policy_not_found')
      expect(answer.body.error.message).toEndWith(SESSION_HINT.unknown_cookie.sentence)
      expect(answer.body.error.details).toEqual([SESSION_HINT.unknown_cookie.detail])
    }

    // A session forgotten 24 hours after it ended: its cookie is unknown from then on.
    const token = (await sandbox.call('session')).cookie!
    sandbox.setNow(START_MS + 60 * MINUTE + 24 * 60 * MINUTE)
    await sandbox.services.storage.sweep(sandbox.now())
    const late = await sandbox.call(UNKNOWN_EVENT, undefined, { cookie: token })
    expectFailure(late, 404, 'event_not_found')
    expect(late.body.error.details).toEqual([SESSION_HINT.unknown_cookie.detail])
  })

  test('with the cookie of a live session that lacks the reference: the usual answer, no hint', async () => {
    const sandbox = await inProcessApp()
    const token = (await sandbox.call('session')).cookie!
    const answers = [
      await sandbox.call('policy/new', issueBody(), { cookie: token }),
      await sandbox.call(UNKNOWN_POLICY, undefined, { cookie: token }),
      await sandbox.call(UNKNOWN_EVENT, undefined, { cookie: token }),
    ]
    expect(answers.map((answer) => [answer.status, answer.body.error.message, answer.body.error.details, answer.cookie])).toEqual([
      [
        404,
        'No plan search in this session returned this plan_id.',
        [{ field: 'plan_id', issue: 'was not returned by a plan search in this session' }],
        undefined,
      ],
      [404, 'No policy with this policy_ref exists in this session.', undefined, undefined],
      [404, 'No event with this id exists in this session.', undefined, undefined],
    ])
  })

  test("Java's CookieManager quotes the token (an RFC 2965 cookie): it still names the session", async () => {
    const sandbox = await inProcessApp()
    const opened = await sandbox.call('session')
    const headers = { cookie: `$Version="1"; sbx_session="${opened.cookie}";$Path="/";$Domain="localhost"` }
    const answer = await sandbox.call(UNKNOWN_POLICY, undefined, { headers })
    expectFailure(answer, 404, 'policy_not_found')
    expect(answer.body.error.details).toBeUndefined()
    expect(answer.cookie).toBeUndefined()
    expect(answer.body.meta.session_expires_at).toBe(opened.body.data.expires_at)

    // The same token, quoted or not: an Idempotency-Key (keyed by the token) replays across the two.
    const trip = tripFrom(START_MS, 3, 4)
    const search = await sandbox.call('plans/search', { trip, travellers: [{ age: 30 }] }, { cookie: opened.cookie })
    const issue = { plan_id: search.body.data.plans[0].plan_id, trip, travellers: [{ age: 30 }] }
    const first = await sandbox.call('policy/new', issue, { cookie: opened.cookie, headers: { 'idempotency-key': 'java-1' } })
    const repeat = await sandbox.call('policy/new', issue, { headers: { ...headers, 'idempotency-key': 'java-1' } })
    expect(repeat.headers.get('idempotent-replayed')).toBe('true')
    expect(repeat.body.data.policy_ref).toBe(first.body.data.policy_ref)
  })

  test('an ended session the sandbox still knows answers session_expired, with no hint; the call after it has one', async () => {
    const sandbox = await inProcessApp()
    const token = (await sandbox.call('session')).cookie!
    sandbox.setNow(START_MS + 60 * MINUTE)
    const expired = await sandbox.call(UNKNOWN_POLICY, undefined, { cookie: token })
    expectFailure(expired, 401, 'session_expired')
    expect(expired.body.error.details).toBeUndefined()
    // A client that honours the cleared cookie sends none next; one that copies it by hand sends it empty.
    for (const cookie of [undefined, '']) {
      const next = await sandbox.call(UNKNOWN_POLICY, undefined, { cookie })
      expect(next.body.error.details).toEqual([SESSION_HINT.no_cookie.detail])
    }
  })

  test('the hint changes only the message and details: status, headers and the rest are the same as with a session', async () => {
    const sandbox = await inProcessApp()
    const token = (await sandbox.call('session')).cookie!
    const withSession = await sandbox.call(UNKNOWN_EVENT, undefined, { cookie: token })
    const without = await sandbox.call(UNKNOWN_EVENT)
    const shape = (answer: typeof without) => ({
      status: answer.status,
      headers: [...answer.headers.keys()].filter((name) => name !== 'set-cookie').sort(),
      code: answer.body.error.code,
      keys: Object.keys(answer.body).sort(),
    })
    expect(shape(without)).toEqual(shape(withSession))
    expect(without.body.error.message.startsWith(withSession.body.error.message)).toBe(true)
  })
})

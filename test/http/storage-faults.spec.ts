/**
 * Storage faults (issue #4): a database capped at 1 MiB (SANDBOX_DB_MAX_MB=1) is filled by many
 * short sessions from many networks. Once it is full, writes answer 503 `storage_unavailable` in
 * the envelope with Retry-After; the process stays up (`/healthz` 200); and when the sessions
 * expire, the sweep frees space and calls succeed again, with no restart.
 */
import { API, call, errorProblems, expect, expectError, expectOk, type Reply, sleep, test, tripFrom, uniqueNetwork } from './support/client'
import { HTTP_PORT, currentTarget } from './support/server'
import { databaseFor, withAdmin } from './support/postgres'

// The lanes stop a second after the cap is first reached; this only bounds a machine too slow to
// reach it. Sessions last long enough that the sweep cannot free space as fast as a slow machine
// fills it: with 2-second sessions, Node on a loaded machine (75 searches a second) held less
// than 1 MiB of live sessions and never filled the file in 60 s; a session's searches now stay
// for 8 s. Recovery waits for them to expire and be swept.
const SESSION_SECONDS = 8
const FILL_BOUND_MS = 60_000
const RECOVERY_BOUND_MS = 30_000
const LANES = 16

test.describe('storage faults', () => {
  test.skip(() => currentTarget() === 'pg', 'SANDBOX_DB_MAX_MB caps the SQLite file; a PostgreSQL server has no such cap')
  test('a full database answers 503 storage_unavailable with Retry-After, never crashes, and recovers after the sweep', async ({ privateServer }) => {
    test.setTimeout(FILL_BOUND_MS + RECOVERY_BOUND_MS + 20_000)
    const server = await privateServer('storage-full', {
      SANDBOX_DB_MAX_MB: '1',
      SANDBOX_SESSION_TTL_SECONDS: String(SESSION_SECONDS),
      SANDBOX_SWEEP_INTERVAL_SECONDS: '1',
      SANDBOX_RATE_WINDOW_SECONDS: '2',
      SANDBOX_RATE_LIMIT: '1000000',
    })
    const statuses = new Map<number, number>()
    const problems: string[] = []
    let firstFull: Reply | undefined
    let fullAt = 0
    let stopAt = Date.now() + FILL_BOUND_MS
    let searches = 0
    let okAfterFull = 0 // when a call first succeeded again after the first 503

    // Each lane is a client network that searches with ever new ages (new plan ids: new rows),
    // opening a new session whenever its session ends.
    const lane = async (laneIndex: number) => {
      const network = uniqueNetwork()
      let cookie: string | undefined
      for (let round = 0; Date.now() < stopAt; round++) {
        const ages = [laneIndex % 60, (round * 7) % 100, (round * 13 + laneIndex) % 100].map((age) => ({ age }))
        let reply: Reply
        try {
          reply = await call(server.url, API.search, { body: { trip: tripFrom(3 + (round % 200), 5 + (round % 9)), travellers: ages }, cookie, network })
        } catch (error) {
          problems.push(`no answer: ${String(error)}`)
          return
        }
        searches += 1
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
        if (reply.token) cookie = reply.token
        if (reply.status === 200) {
          if (firstFull && !okAfterFull) okAfterFull = Date.now()
          continue
        }
        if (reply.status === 401) {
          cookie = undefined // the session ended: the next call opens a new one
          continue
        }
        problems.push(...errorProblems(reply, 503, 'storage_unavailable'))
        if (!(Number(reply.headers.get('retry-after')) >= 1)) problems.push(`503 without Retry-After: ${reply.headers.get('retry-after')}`)
        if (!firstFull) {
          firstFull = reply
          fullAt = Date.now()
          stopAt = Math.min(stopAt, Date.now() + 1_000) // keep pressing for one more second
        }
      }
    }
    const fillStarted = Date.now()
    await Promise.all(Array.from({ length: LANES }, (_, index) => lane(index)))

    expect(firstFull, `the 1 MiB cap was reached within ${FILL_BOUND_MS} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}`).toBeDefined()
    await expectError(firstFull!, 503, 'storage_unavailable')
    expect(problems).toEqual([])
    expect([...statuses.keys()].filter((status) => ![200, 401, 503].includes(status))).toEqual([])

    // Still up while full: the process answers, and has not exited.
    expect(server.process.exitCode).toBeNull()
    const health = await call(server.url, '/healthz', { method: 'GET' })
    expect(health.status).toBe(200)

    // No more load: the sessions expire, the sweep frees their rows, calls succeed again.
    const recoveryStarted = Date.now()
    let recovered: Reply | undefined
    while (Date.now() - recoveryStarted < RECOVERY_BOUND_MS) {
      const reply = await call(server.url, API.search, { body: { trip: tripFrom(4, 4), travellers: [{ age: 41 }] }, network: uniqueNetwork() })
      if (reply.status === 200) {
        recovered = reply
        break
      }
      await expectError(reply, 503, 'storage_unavailable')
      await sleep(200)
    }
    const recoveryMs = Date.now() - recoveryStarted
    if (recovered && !okAfterFull) okAfterFull = Date.now()
    const summary =
      `full after ${fullAt - fillStarted} ms of load (${searches} searches, ${statuses.get(503) ?? 0} answered 503); ` +
      `first 200 again ${okAfterFull - fullAt} ms after the first 503; ${recoveryMs} ms after the load stopped`
    test.info().annotations.push({ type: 'storage', description: summary })
    console.log(`[${process.env.SANDBOX_TARGET}] storage: ${summary}`)
    expect(recovered, `a 200 within ${RECOVERY_BOUND_MS} ms of the load stopping`).toBeDefined()
    await expectOk(recovered!)
    // And the whole flow works again: issue against the plan just found.
    // Space comes back as the sweep frees it, a batch at a time: the first issue may still find the
    // file full, and answers 503 then, as any write does.
    const plans = recovered!.json.data.plans
    let issued: Reply
    for (;;) {
      issued = await call(server.url, API.issue, {
        body: { plan_id: plans[0].plan_id, trip: recovered!.json.data.trip, travellers: [{ age: 41 }] },
        cookie: recovered!.token,
        network: uniqueNetwork(),
      })
      if (issued.status !== 503 || Date.now() - recoveryStarted > RECOVERY_BOUND_MS) break
      await expectError(issued, 503, 'storage_unavailable')
      await sleep(200)
    }
    await expectOk(issued)
    expect(server.process.exitCode).toBeNull()
  })
})

test.describe('storage faults on PostgreSQL', () => {
  test.skip(() => currentTarget() !== 'pg', 'the database server takes the database away: pg only')
  test('a database that goes away answers 503 storage_unavailable with Retry-After on every call, never a 500; /readyz says so', async ({ privateServer }) => {
    const server = await privateServer('pg-gone')
    const trip = tripFrom(5, 4)
    const found = await call(server.url, API.search, { body: { trip, travellers: [{ age: 30 }] }, network: uniqueNetwork() })
    await expectOk(found)
    // The instance's connections are cut and the database is gone: every kind of storage call fails.
    await withAdmin(HTTP_PORT, (sql) => sql.unsafe(`DROP DATABASE ${databaseFor(HTTP_PORT, server.dbPath)} WITH (FORCE)`))
    const calls = [
      () => call(server.url, API.session, { network: uniqueNetwork() }),
      () => call(server.url, API.search, { body: { trip, travellers: [{ age: 30 }] }, cookie: found.token, network: uniqueNetwork() }),
      () =>
        call(server.url, API.issue, {
          body: { plan_id: found.json.data.plans[0].plan_id, trip, travellers: [{ age: 30 }] },
          cookie: found.token,
          network: uniqueNetwork(),
        }),
    ]
    for (const send of calls) {
      const reply = await send()
      await expectError(reply, 503, 'storage_unavailable')
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }
    expect((await call(server.url, '/readyz', { method: 'GET' })).status).toBe(503)
    expect((await call(server.url, '/healthz', { method: 'GET' })).status).toBe(200)
    expect(server.output()).not.toMatch(/\n\s+at |internal_error/)
  })
})

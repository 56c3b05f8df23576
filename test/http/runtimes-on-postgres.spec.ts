/**
 * The PostgreSQL engine on every deploy target (issue 10): the compiled binary, the Deno bundle and
 * the Node bundle each share a fresh PostgreSQL database with a Bun instance, and one partner's
 * calls alternate between the two, and the certificate of one policy comes out the same bytes from
 * both. Runs on `pg` only (the project that has PostgreSQL); the builds come from `npm run build`,
 * which `npm test` runs first.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { test, expect } from './support/fixtures'
import { API, addDays, searchBody } from './support/api'
import { PATH, call, expectOk, removeDatabase, scratchDatabase, uniqueNetwork } from './support/hardening'
import { ROOT, currentTarget, preparePostgres, startServer, type RunningServer } from './support/server'
import { RUNTIMES } from './support/targets'
import { countRows } from './support/store'

test.skip(() => currentTarget() !== 'pg', 'needs the PostgreSQL server of the pg project')

async function certificate(baseUrl: string, policyRef: string, cookie: string, network: string): Promise<Buffer> {
  const response = await fetch(`${baseUrl}${API.certificate(policyRef)}`, { method: 'POST', headers: { cookie: `sbx_session=${cookie}`, 'x-forwarded-for': network } })
  expect(response.status).toBe(200)
  return Buffer.from(await response.arrayBuffer())
}

for (const runtime of ['binary', 'deno', 'node'] as const) {
  test(`${runtime} on PostgreSQL, beside a Bun instance on the same database: one partner's calls alternate between them`, async () => {
    const artefact = join(ROOT, RUNTIMES[runtime].artefact)
    expect(existsSync(artefact), `${artefact} is missing: run npm run build`).toBe(true)
    const dbPath = scratchDatabase(`runtime-${runtime}`)
    const servers: RunningServer[] = []
    try {
      await preparePostgres(dbPath)
      // Both start together on a fresh database: both run the migrations. Both starts are awaited
      // before any failure is reported, so that the clean-up finds every server that did start.
      const started = await Promise.allSettled([startServer({ SANDBOX_DB_PATH: dbPath }), startServer({ SANDBOX_DB_PATH: dbPath }, runtime)])
      for (const start of started) if (start.status === 'fulfilled') servers.push(start.value)
      const failed = started.find((start) => start.status === 'rejected')
      if (failed) throw failed.reason
      const [bun, other] = servers as [RunningServer, RunningServer]
      const network = uniqueNetwork()
      const body = searchBody()
      const headers = { 'idempotency-key': `runtime-${randomBytes(4).toString('hex')}` }

      const cookie = (await call(other.url, PATH.session, { network })).token!
      const plans = expectOk(await call(bun.url, PATH.search, { body, cookie, network })).plans
      const issueBody = { plan_id: plans[0].plan_id, ...body }
      const issued = expectOk(await call(other.url, PATH.issue, { body: issueBody, cookie, network, headers }))
      const replay = await call(bun.url, PATH.issue, { body: issueBody, cookie, network, headers })
      expect(expectOk(replay).policy_ref).toBe(issued.policy_ref)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      const newEnd = addDays(body.trip.end_date, 3)
      expectOk(await call(other.url, PATH.modify(issued.policy_ref), { body: { scenario: 'extend_end_date', new_end_date: newEnd }, cookie, network }))
      const read = expectOk(await call(bun.url, API.read(issued.policy_ref), { cookie, network }))
      expect(read.trip.end_date).toBe(newEnd)
      expect(read.endorsements.map((endorsement: { sequence: number }) => endorsement.sequence)).toEqual([1])

      // The certificate of one policy state is the same bytes whichever runtime makes it.
      const fromBun = await certificate(bun.url, issued.policy_ref, cookie, network)
      const fromOther = await certificate(other.url, issued.policy_ref, cookie, network)
      expect(fromOther.subarray(0, 5).toString('latin1')).toBe('%PDF-')
      expect(fromOther.equals(fromBun), 'the same certificate bytes from Bun and from this runtime').toBe(true)

      expect((await call(other.url, '/readyz', { method: 'GET' })).status).toBe(200)
      expect(await countRows(dbPath, 'policies')).toBe(1)
      for (const server of servers) expect(server.output()).not.toContain('"level":"error"')
    } finally {
      await Promise.all(servers.map((server) => server.stop('SIGKILL')))
      removeDatabase(dbPath)
    }
  })
}

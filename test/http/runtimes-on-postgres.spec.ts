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
import { addDays, API, call, expect, expectOk, searchBody, test, uniqueNetwork } from './support/client'
import { ROOT, RUNTIMES } from '../support/launch'
import { currentTarget, scratchDatabase } from './support/server'
import { countRows } from './support/store'

test.skip(() => currentTarget() !== 'pg', 'needs the PostgreSQL server of the pg project')

async function certificate(baseUrl: string, policyRef: string, cookie: string, network: string): Promise<Buffer> {
  const response = await fetch(`${baseUrl}${API.certificate(policyRef)}`, {
    method: 'POST',
    headers: { cookie: `sbx_session=${cookie}`, 'x-forwarded-for': network },
  })
  expect(response.status).toBe(200)
  return Buffer.from(await response.arrayBuffer())
}

for (const runtime of ['binary', 'deno', 'node'] as const) {
  test(`${runtime} on PostgreSQL, beside a Bun instance on the same database: one partner's calls alternate between them`, async ({ privateServer }) => {
    const artefact = join(ROOT, RUNTIMES[runtime].artefact)
    expect(existsSync(artefact), `${artefact} is missing: run npm run build`).toBe(true)
    // Both start together on a fresh database: both run the migrations.
    const dbPath = scratchDatabase(`runtime-${runtime}`)
    const [bun, other] = await Promise.all([privateServer('runtime-bun', {}, { dbPath }), privateServer(`runtime-${runtime}`, {}, { dbPath, runtime })])
    const network = uniqueNetwork()
    const body = searchBody()
    const headers = { 'idempotency-key': `runtime-${randomBytes(4).toString('hex')}` }

    const cookie = (await call(other.url, API.session, { network })).token!
    const plans = (await expectOk(await call(bun.url, API.search, { body, cookie, network }))).data.plans
    const issueBody = { plan_id: plans[0].plan_id, ...body }
    const issued = (await expectOk(await call(other.url, API.issue, { body: issueBody, cookie, network, headers }))).data
    const replay = await call(bun.url, API.issue, { body: issueBody, cookie, network, headers })
    expect((await expectOk(replay)).data.policy_ref).toBe(issued.policy_ref)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    const newEnd = addDays(body.trip.end_date, 3)
    await expectOk(await call(other.url, API.modify(issued.policy_ref), { body: { scenario: 'extend_end_date', new_end_date: newEnd }, cookie, network }))
    const read = (await expectOk(await call(bun.url, API.read(issued.policy_ref), { cookie, network }))).data
    expect(read.trip.end_date).toBe(newEnd)
    expect(read.endorsements.map((endorsement: { sequence: number }) => endorsement.sequence)).toEqual([1])

    // The certificate of one policy state is the same bytes whichever runtime makes it.
    const fromBun = await certificate(bun.url, issued.policy_ref, cookie, network)
    const fromOther = await certificate(other.url, issued.policy_ref, cookie, network)
    expect(fromOther.subarray(0, 5).toString('latin1')).toBe('%PDF-')
    expect(fromOther.equals(fromBun), 'the same certificate bytes from Bun and from this runtime').toBe(true)

    expect((await call(other.url, '/readyz', { method: 'GET' })).status).toBe(200)
    expect(await countRows(dbPath, 'policies')).toBe(1)
    for (const server of [bun, other]) expect(server.output()).not.toContain('"level":"error"')
  })
}

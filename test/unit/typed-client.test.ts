import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { createSandboxClient } from '../../src/client'
import { loadConfig } from '../../src/config'
import { createServices } from '../../src/modules/services'
import { withStorage } from './support/storage'

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)

async function inProcessClient() {
  const app = createApp(createServices({ ...(await withStorage(loadConfig({}))), log: () => {} }))
  return createSandboxClient(app)
}

describe('typed client (Eden Treaty), in-process', () => {
  test('drives session, search, issue and two endorsements, keeping the session cookie', async () => {
    const sandbox = await inProcessClient()
    const session = await sandbox.api.sandbox.session.post({})
    expect(session.status).toBe(200)
    const sessionRef = session.data!.data.session_ref

    const trip = { origin_country: 'IN', destination_country: 'SG', start_date: day(5), end_date: day(12) }
    const search = await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: 40 }, { age: 9 }], currency: 'SGD' })
    expect(search.status).toBe(200)
    const plan = search.data!.data.plans[0]!
    expect(plan.currency).toBe('SGD')

    const issued = await sandbox.api.sandbox.policy.new.post({ plan_id: plan.plan_id, trip, travellers: [{ age: 9 }, { age: 40 }] })
    expect(issued.status).toBe(200)
    expect(issued.data!.data.status).toBe('issued')
    expect(issued.data!.data.premium).toBe(plan.premium)

    const policy = sandbox.api.sandbox.policy({ policy_ref: issued.data!.data.policy_ref })
    const extended = await policy.modify.post({ scenario: 'extend_end_date', new_end_date: day(15) })
    expect(extended.data!.data.trip).toEqual({ end_date: day(15) })
    expect(extended.data!.data.premium_change).toBeGreaterThan(0)
    const corrected = await policy.modify.post({ scenario: 'correct_partner_reference', partner_reference: 'BK-42' })
    expect(corrected.data!.data).toMatchObject({ status: 'endorsed', partner_reference: 'BK-42', endorsement: { sequence: 2 } })

    // Every call ran in the one session the client opened: its cookie was kept and sent back.
    expect(corrected.data!.meta.rate_limit.remaining).toBe(30 - 5)
    expect(corrected.data!.meta.session_expires_at).toBe(session.data!.data.expires_at)
    expect(sessionRef).toMatch(/^sbx_/)

    // Read-back and the certificate: the history as JSON, the certificate as the PDF's bytes.
    const read = await policy.read.post({})
    expect(read.data!.data.endorsements.map((endorsement) => endorsement.scenario)).toEqual(['extend_end_date', 'correct_partner_reference'])
    const certificate = await policy.documents.policy_certificate.post({})
    expect(certificate.status).toBe(200)
    expect(certificate.data).toBeInstanceOf(Uint8Array)
    expect(new TextDecoder().decode(certificate.data!.subarray(0, 5))).toBe('%PDF-')
  })

  test('opens a short session', async () => {
    const session = await (await inProcessClient()).api.sandbox.session.post({ lifetime_minutes: 2 })
    expect(session.data!.data.limits.session_minutes).toBe(2)
  })

  test('answers a contract error as a typed error value', async () => {
    const sandbox = await inProcessClient()
    const answer = await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_unknown' }).modify.post({ scenario: 'shorten_end_date', new_end_date: day(3) })
    if (answer.error?.status !== 404) throw new Error(`expected 404, got ${answer.status}`)
    expect(answer.error.value.error.code).toBe('policy_not_found')
  })
})

/**
 * One partner's webhook endpoints or DNS never slow or stop anyone else's (an adversarial review's
 * findings): endpoints that never answer hold only their own sessions' places in the delivery
 * worker, and each call is closed at its deadline; names whose DNS stops answering, or answers after
 * a delivery's deadline, delay no other partner's registration, plan search (through the insurer's
 * host name) or delivery, and a delivery whose deadline passed is never sent (dns-attack.ts, in a
 * network namespace with a DNS server of its own).
 */
import type { APIRequestContext } from '@playwright/test'
import { PER_ENDPOINT } from '../../src/modules/events/delivery'
import { CALL_TIMEOUT_MS } from '../../src/modules/events/outbound'
import { expect, expectOk, test } from './support/client'
import { inNamespace, namespaceProblem } from './support/namespace'
import { startHungReceiver, startReceiver, type HungReceiver, type Receiver } from './support/receiver'
import { currentTarget } from './support/server'
import { runtimeOf } from './support/targets'

const WEBHOOK = '/api/sandbox/webhook'
/** How much later than before the attack another partner's delivery, call or search may be. */
const WITHIN_MS = 1_000

const closing: { close(): Promise<void> }[] = []
test.afterEach(async () => {
  await Promise.all(closing.splice(0).map((receiver) => receiver.close()))
})

/** Ms from sending a test event to its arrival at `hooks`: the median of three, one after another. */
async function deliveryMs(client: APIRequestContext, hooks: Receiver): Promise<number> {
  const times: number[] = []
  for (let sample = 0; sample < 3; sample++) {
    const before = hooks.received.length
    const sentAt = Date.now()
    await expectOk(await client.post(`${WEBHOOK}/test`))
    await expect.poll(() => hooks.received.length, { timeout: 30_000, intervals: [10] }).toBeGreaterThan(before)
    times.push(hooks.received.at(-1)!.at - sentAt)
  }
  return times.sort((a, b) => a - b)[1]!
}

test.describe('webhook isolation', () => {
  test("five endpoints that never answer leave another session's delivery within a second of normal; each call to them is closed at its deadline", async ({
    newClient,
  }) => {
    test.setTimeout(90_000)
    const other = await newClient()
    const hooks = await startReceiver()
    closing.push(hooks)
    await expectOk(await other.post(WEBHOOK, { data: { url: hooks.url } }))
    const normal = await deliveryMs(other, hooks)

    // Five sessions on five networks, each with an endpoint that never answers and six events for it.
    const hung: HungReceiver[] = []
    for (let index = 0; index < 5; index++) {
      const endpoint = await startHungReceiver()
      closing.push(endpoint)
      hung.push(endpoint)
      const attacker = await newClient()
      await expectOk(await attacker.post(WEBHOOK, { data: { url: endpoint.url } }))
      for (let event = 0; event < 6; event++) await expectOk(await attacker.post(`${WEBHOOK}/test`))
    }
    const connections = () => hung.flatMap((endpoint) => endpoint.connections)
    await expect.poll(() => connections().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(5)

    const attacked = await deliveryMs(other, hooks)
    console.log(`[${currentTarget()}] webhook isolation: another session's delivery ${normal} ms before, ${attacked} ms with five hung endpoints`)
    expect(attacked).toBeLessThan(normal + WITHIN_MS)

    // At most PER_ENDPOINT calls out to one endpoint at once (per instance), and every call to a hung
    // one is closed by the sandbox once its deadline has passed, not left open.
    const instances = currentTarget() === 'pg' ? 2 : 1
    for (const endpoint of hung) {
      const open = endpoint.connections.filter((connection) => connection.openedAt <= endpoint.connections[0]!.openedAt + 1_000)
      expect(open.length).toBeLessThanOrEqual(PER_ENDPOINT * instances)
    }
    const first = connections().slice(0, 5)
    await expect.poll(() => first.every((connection) => connection.closedAt !== null), { timeout: CALL_TIMEOUT_MS * 3 }).toBe(true)
    // Closed by the deadline, not before (the deadline also covers connecting, so a little sooner).
    for (const connection of first) expect(connection.closedAt! - connection.openedAt).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS / 2)
  })

  test('names whose DNS stops answering delay no other partner, and a delivery past its deadline is never sent (network namespace)', async ({}, testInfo) => {
    const target = currentTarget()
    test.skip(target === 'pg', 'the namespace holds no PostgreSQL server; the resolver under test is the same code as on bun')
    // The scenario runs an insurer of its own whatever the target, and the binary is Bun's runtime.
    test.skip(target === 'uat' || target === 'binary', 'the same runtime and scenario as on bun')
    const problem = namespaceProblem()
    test.skip(problem !== null, `${problem}: the DNS scenario needs a network namespace of its own`)
    test.setTimeout(120_000)
    const run = await inNamespace(['bun', 'test/http/support/dns-attack.ts'], { SANDBOX_RUNTIME: runtimeOf(target) }, 100_000)
    const line = run.output.split('\n').find((printed) => printed.startsWith('RESULT '))
    expect(line, run.output.slice(-3000)).toBeDefined()
    const result = JSON.parse(line!.slice('RESULT '.length))
    console.log(`[${target}] dns attack: ${JSON.stringify(result)}`)
    testInfo.annotations.push({ type: 'dns attack', description: JSON.stringify(result) })
    expect(result.error).toBeUndefined()
    // The attack was made, within the fair-use allowance.
    expect(result.attack_registrations).toEqual(Array(14).fill(200))
    expect(result.attack_test_events).toEqual(Array(14).fill(200))
    expect(result.attack_lookups_hanging).toBe(true)
    // The other partner, during the attack: as fast as before, give or take a second, and still
    // answered by the insurer, whose host name the system's resolver looks up.
    const { before, during } = result
    for (const measured of [before, during]) expect(measured).toMatchObject({ register_status: 200, search_status: 200, search_mode: 'uat_gateway' })
    expect(during.register_ms).toBeLessThan(before.register_ms + WITHIN_MS)
    expect(during.search_ms).toBeLessThan(before.search_ms + WITHIN_MS)
    expect(during.delivery_ms).toBeLessThan(before.delivery_ms + WITHIN_MS)
    // A name that answered after the deadline: the attempts timed out, and nothing reached the receiver.
    expect(result.late_register_status).toBe(200)
    expect(result.late_attempts[0]).toBe('timeout')
    expect(result.late_posts).toBe(0)
  })
})

/**
 * Webhook host names (host-names.ts) with a stand-in for DNS: turns per caller, one lookup per name,
 * the memory of failed names, the deadline. Real DNS that misbehaves: test/http/webhook-isolation.spec.ts.
 */
import { describe, expect, test } from 'bun:test'
import { FAILURE_MEMORY_MS, hostNames, PER_CALLER, type Lookup } from '../../src/modules/events/host-names'

/** A stand-in for DNS whose answers the test gives, one name at a time. */
function standIn() {
  const pending = new Map<string, (answer: Lookup) => void>()
  const asked: string[] = []
  return {
    asked,
    ask: (host: string) =>
      new Promise<Lookup>((resolve) => {
        asked.push(host)
        pending.set(host, resolve)
      }),
    answer(host: string, answer: Lookup) {
      pending.get(host)!(answer)
      pending.delete(host)
    },
  }
}

const never = () => new AbortController().signal
const OK: Lookup = { addresses: ['11.0.0.1'] }
const settle = () => Bun.sleep(0)

describe('host names', () => {
  test('an address answers itself; localhost is loopback without asking', async () => {
    const dns = standIn()
    const names = hostNames('public', { ask: dns.ask })
    expect(await names.lookup('93.184.215.14', ['s:1'], never())).toEqual({ addresses: ['93.184.215.14'] })
    expect(await names.lookup('LocalHost.', ['s:1'], never())).toEqual({ addresses: ['127.0.0.1', '::1'] })
    expect(await names.lookup('hooks.localhost', ['s:1'], never())).toEqual({ addresses: ['127.0.0.1', '::1'] })
    expect(dns.asked).toEqual([])
  })

  test('a caller has PER_CALLER lookups in flight; others wait their turn, and another caller does not', async () => {
    const dns = standIn()
    const names = hostNames('public', { ask: dns.ask })
    const mine = Array.from({ length: PER_CALLER + 1 }, (_, index) => names.lookup(`n${index}.hang.test`, ['s:1', 'n:1'], never()))
    await settle()
    expect(dns.asked).toEqual(Array.from({ length: PER_CALLER }, (_, index) => `n${index}.hang.test`))
    // Another session on another network is asked at once.
    const other = names.lookup('good.test', ['s:2', 'n:2'], never())
    await settle()
    expect(dns.asked.at(-1)).toBe('good.test')
    dns.answer('good.test', OK)
    expect(await other).toEqual(OK)
    // Another session on the same network waits for that network's turn too.
    const sameNetwork = names.lookup('also-good.test', ['s:3', 'n:1'], never())
    await settle()
    expect(dns.asked).not.toContain('also-good.test')
    // A turn given back goes to whoever waited for it first: the network's to also-good.test.
    dns.answer('n0.hang.test', OK)
    expect(await mine[0]).toEqual(OK)
    await settle()
    expect(dns.asked.at(-1)).toBe('also-good.test')
    dns.answer('n1.hang.test', OK)
    await settle()
    expect(dns.asked.at(-1)).toBe(`n${PER_CALLER}.hang.test`)
  })

  test('a deadline ends the wait, for a turn or for the answer, as a timeout', async () => {
    const dns = standIn()
    const names = hostNames('public', { ask: dns.ask })
    for (let index = 0; index < PER_CALLER; index++) void names.lookup(`n${index}.hang.test`, ['s:1'], never())
    expect(await names.lookup('waiting.test', ['s:1'], AbortSignal.timeout(50))).toEqual({ failure: 'timeout' })
    expect(await names.lookup('slow.test', ['s:2'], AbortSignal.timeout(50))).toEqual({ failure: 'timeout' })
    expect(dns.asked).not.toContain('waiting.test')
  })

  test('one lookup in flight per name, shared; a failed name is not asked again for a while', async () => {
    let now = 0
    const dns = standIn()
    const names = hostNames('public', { ask: dns.ask, clock: () => now })
    const first = names.lookup('Flaky.test', ['s:1'], never())
    const second = names.lookup('flaky.test', ['s:2'], never())
    await settle()
    expect(dns.asked).toEqual(['flaky.test'])
    dns.answer('flaky.test', { failure: 'timeout' })
    expect(await first).toEqual({ failure: 'timeout' })
    expect(await second).toEqual({ failure: 'timeout' })
    now += FAILURE_MEMORY_MS - 1
    expect(await names.lookup('flaky.test', ['s:3'], never())).toEqual({ failure: 'timeout' })
    expect(dns.asked).toEqual(['flaky.test'])
    now += 1
    const again = names.lookup('flaky.test', ['s:3'], never())
    await settle()
    expect(dns.asked).toEqual(['flaky.test', 'flaky.test'])
    dns.answer('flaky.test', OK)
    expect(await again).toEqual(OK)
  })
})

describe('host names that fail', () => {
  test('a lookup that throws or rejects answers timeout, is forgotten, and the name can be asked again later', async () => {
    let now = 0
    let calls = 0
    const names = hostNames('public', {
      clock: () => now,
      ask: (host) => {
        calls++
        if (host === 'throws.test') throw new Error('resolver broke')
        return Promise.reject(new Error('resolver broke'))
      },
    })
    expect(await names.lookup('throws.test', ['s:1'], never())).toEqual({ failure: 'timeout' })
    expect(await names.lookup('rejects.test', ['s:1'], never())).toEqual({ failure: 'timeout' })
    // The caller's turns were given back: PER_CALLER more lookups go through at once.
    now += FAILURE_MEMORY_MS
    const again = await Promise.all(Array.from({ length: PER_CALLER }, () => names.lookup('rejects.test', ['s:1'], AbortSignal.timeout(1_000))))
    expect(again).toEqual(Array(PER_CALLER).fill({ failure: 'timeout' }))
    expect(calls).toBe(3)
  })

  test("a caller forgotten while a lookup waited for its session's turn still limits its network", async () => {
    const dns = standIn()
    const names = hostNames('public', { ask: dns.ask })
    // Session 1 is busy; a third lookup of it waits for the session's turn, not yet the network's.
    void names.lookup('a.test', ['s:1', 'n:1'], never())
    void names.lookup('b.test', ['s:1', 'n:2'], never())
    const waiting = names.lookup('c.test', ['s:1', 'n:3'], never())
    await settle()
    // Network 3 is used and left by others meanwhile (and forgotten when idle).
    for (const host of ['d.test', 'e.test']) {
      const other = names.lookup(host, ['s:9', 'n:3'], never())
      await settle()
      dns.answer(host, OK)
      await other
    }
    // Network 3 now busy with two others; when session 1's turn comes, c.test must wait for network 3.
    void names.lookup('f.test', ['s:7', 'n:3'], never())
    void names.lookup('g.test', ['s:8', 'n:3'], never())
    await settle()
    dns.answer('a.test', OK)
    await settle()
    expect(dns.asked).not.toContain('c.test')
    dns.answer('f.test', OK)
    await settle()
    expect(dns.asked).toContain('c.test')
    dns.answer('c.test', OK)
    expect(await waiting).toEqual(OK)
  })
})

import { describe, expect, test } from 'bun:test'
import { decide, peek, spokenDuration, type CounterReading } from '../../src/domain/rate-window'

const policy = { limit: 30, windowMs: 600_000 }
const NOW = 1_800_000_000_000
const empty: CounterReading = { used: 0, oldestAt: null }
const reading = (used: number, oldestAgoMs: number): CounterReading => ({ used, oldestAt: NOW - oldestAgoMs })

describe('decide: admitted', () => {
  test('a first request on fresh counters leaves limit - 1 and resets one window from now', () => {
    expect(decide([empty, empty], policy, NOW)).toEqual({ admitted: true, limit: 30, remaining: 29, resetAt: NOW + 600_000 })
  })

  test('remaining is the smaller of the counters after this request', () => {
    const status = decide([reading(3, 10_000), reading(20, 50_000)], policy, NOW)
    expect(status.admitted).toBe(true)
    expect(status.remaining).toBe(30 - 21)
  })

  test("reset_at is when the binding counter's oldest hit leaves the window", () => {
    // The network counter binds (fewer left), although the session's oldest hit is older.
    const status = decide([reading(3, 500_000), reading(20, 50_000)], policy, NOW)
    expect(status.resetAt).toBe(NOW - 50_000 + 600_000)
    // The other way round.
    const other = decide([reading(25, 100_000), reading(2, 550_000)], policy, NOW)
    expect(other.remaining).toBe(4)
    expect(other.resetAt).toBe(NOW - 100_000 + 600_000)
  })

  test('the last request of the allowance is admitted with remaining 0', () => {
    const status = decide([reading(29, 120_000), reading(5, 1_000)], policy, NOW)
    expect(status).toEqual({ admitted: true, limit: 30, remaining: 0, resetAt: NOW - 120_000 + 600_000 })
  })

  test('a fresh counter alongside a used one: the used one binds', () => {
    const status = decide([empty, reading(10, 30_000)], policy, NOW)
    expect(status.remaining).toBe(19)
    expect(status.resetAt).toBe(NOW - 30_000 + 600_000)
  })

  test('no retryAfter on an admitted request', () => {
    expect(decide([empty], policy, NOW).retryAfter).toBeUndefined()
  })
})

describe('decide: refused', () => {
  test('a full counter refuses, whatever the other one has left', () => {
    const status = decide([reading(30, 200_000), reading(1, 1_000)], policy, NOW)
    expect(status.admitted).toBe(false)
    expect(status.remaining).toBe(0)
    expect(status.resetAt).toBe(NOW - 200_000 + 600_000)
    expect(status.retryAfter).toBe(400)
  })

  test('with both counters full, the request waits for the later of the two', () => {
    const status = decide([reading(30, 500_000), reading(30, 100_000)], policy, NOW)
    expect(status.resetAt).toBe(NOW + 500_000)
    expect(status.retryAfter).toBe(500)
  })

  test('retryAfter is whole seconds rounded up, and at least 1', () => {
    expect(decide([reading(30, 600_000 - 1_001)], policy, NOW).retryAfter).toBe(2) // 1.001 s
    expect(decide([reading(30, 600_000 - 1_000)], policy, NOW).retryAfter).toBe(1) // exactly 1 s
    expect(decide([reading(30, 600_000 - 1)], policy, NOW).retryAfter).toBe(1) // 1 ms
    expect(decide([reading(30, 1)], policy, NOW).retryAfter).toBe(600) // 599.999 s
    expect(Number.isInteger(decide([reading(30, 123_456)], policy, NOW).retryAfter)).toBe(true)
  })

  test('a refused request counts nothing: deciding again gives the same answer', () => {
    const readings = [reading(30, 200_000), reading(12, 5_000)]
    const first = decide(readings, policy, NOW)
    expect(readings).toEqual([reading(30, 200_000), reading(12, 5_000)])
    expect(decide(readings, policy, NOW)).toEqual(first)
  })
})

describe('peek', () => {
  test('reports the allowance without counting a request', () => {
    expect(peek([reading(7, 60_000)], policy, NOW)).toEqual({ admitted: false, limit: 30, remaining: 23, resetAt: NOW + 540_000 })
    expect(peek([empty], policy, NOW)).toEqual({ admitted: false, limit: 30, remaining: 30, resetAt: NOW })
  })

  test('agrees with decide on the binding counter', () => {
    const readings = [reading(4, 300_000), reading(9, 20_000)]
    const peeked = peek(readings, policy, NOW)
    const decided = decide(readings, policy, NOW)
    expect(peeked.remaining).toBe(decided.remaining + 1)
    expect(peeked.resetAt).toBe(decided.resetAt)
  })
})

describe('spokenDuration', () => {
  test('whole hours, whole minutes, else seconds; singular for one', () => {
    expect([4, 2, 1, 90, 60, 600, 3600, 7200, 5400].map(spokenDuration)).toEqual([
      '4 seconds',
      '2 seconds',
      '1 second',
      '90 seconds',
      '1 minute',
      '10 minutes',
      '1 hour',
      '2 hours',
      '90 minutes',
    ])
  })
})

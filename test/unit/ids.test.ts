import { describe, expect, test } from 'bun:test'
import { newId } from '../../src/domain/ids'
import { EVENT_ID } from '../../src/domain/events'
import { POLICY_REF } from '../../src/domain/policy-ref'

describe('newId: the form partners see, in the order the indexes want', () => {
  test('20 lower-case hex digits, so policy refs and event ids keep their published form', () => {
    for (const id of [newId(), newId(0), newId(Date.UTC(2527, 0, 1))]) {
      expect(id).toMatch(/^[0-9a-f]{20}$/)
      expect(`pol_sbx_${id}`).toMatch(POLICY_REF)
      expect(`evt_${id}`).toMatch(EVENT_ID)
    }
  })

  test('ids of later milliseconds sort after earlier ones, however the random part falls', () => {
    const start = Date.UTC(2026, 10, 28, 12)
    const ids = Array.from({ length: 2_000 }, (_, index) => newId(start + index))
    expect(ids.toSorted()).toEqual(ids)
  })

  test('a process never makes one twice, even within one millisecond', () => {
    const ids = Array.from({ length: 1_000_000 }, () => newId(Date.UTC(2026, 10, 28, 12)))
    expect(new Set(ids).size).toBe(ids.length)
  })
})

/**
 * @module `Idempotency-Key` (IETF idempotency-key draft) for issue and modify: within a session, a
 * repeat with the same body answers the first result again; with another body it is refused.
 * The check, the work and the stored answer share one transaction, so concurrent repeats, from one
 * process or several sharing the file, create exactly one policy.
 */
import { createHash } from 'node:crypto'
import { ApiError } from '../../errors'
import { immediate } from '../../storage/driver'
import type { Services } from '../../services'

const KEY_SHAPE = /^[!-~]{1,255}$/

/** The header's value, checked: 1 to 255 visible ASCII characters, or absent. */
export function idempotencyKey(headers: Headers): string | undefined {
  const key = headers.get('idempotency-key')
  if (key === null) return undefined
  if (!KEY_SHAPE.test(key)) {
    throw new ApiError('validation_failed', 'The request has invalid fields; see details.', [
      { field: 'Idempotency-Key', issue: 'must be 1 to 255 visible ASCII characters' },
    ])
  }
  return key
}

/** A digest of what was asked: the operation and its body, object keys in sorted order. */
export function fingerprint(operation: string, body: unknown): string {
  const canonical = JSON.stringify(body, (_, value) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  )
  return createHash('sha256').update(`${operation}\n${canonical}`).digest('hex')
}

/** Runs `work` once per key; answers `{ data, replayed }`. Failures are not stored. */
export function once<T>(services: Services, sessionId: number, key: string | undefined, print: string, work: () => T): { data: T; replayed: boolean } {
  return immediate(services.db, () => {
    if (key === undefined) return { data: work(), replayed: false }
    const stored = services.idempotency.find(sessionId, key)
    if (stored) {
      if (stored.fingerprint !== print) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request.')
      }
      return { data: stored.response as T, replayed: true }
    }
    const data = work()
    services.idempotency.save(sessionId, key, print, data, services.clock())
    return { data, replayed: false }
  })
}

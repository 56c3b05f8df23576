/**
 * @module `Idempotency-Key` (IETF idempotency-key draft) for issue and modify: within a session, a
 * repeat with the same body answers the first result again; with another body it is refused.
 * The last check, the write and the stored answer share one transaction, so concurrent repeats, from
 * one process or several sharing the file, create exactly one policy.
 */
import { createHash, randomUUID } from 'node:crypto'
import { ApiError, throwIfInvalid } from '../../errors'
import { immediate } from '../../storage/driver'
import type { Services } from '../../services'

const KEY_SHAPE = /^[!-~]{1,255}$/

/** The header's value, checked: 1 to 255 visible ASCII characters, or absent. */
export function idempotencyKey(headers: Headers): string | undefined {
  const key = headers.get('idempotency-key')
  if (key === null) return undefined
  if (!KEY_SHAPE.test(key)) throwIfInvalid([{ field: 'Idempotency-Key', issue: 'must be 1 to 255 visible ASCII characters' }])
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

/** A stored first answer for this key and body (`replayed: true`), or undefined; another body is refused. */
function stored<T>(services: Services, sessionId: number, key: string, print: string): { data: T; replayed: true } | undefined {
  const first = services.idempotency.find(sessionId, key)
  if (!first) return undefined
  if (first.fingerprint !== print) {
    throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request.')
  }
  return { data: first.response as T, replayed: true }
}

/**
 * The first answer for this key, if there is one, read before any slow work (an insurer call) so
 * that a repeat answers at once.
 */
export function earlierAnswer<T>(services: Services, sessionId: number, key: string | undefined, print: string) {
  // A plain read: commitOnce looks again under the write lock before anything is written.
  return key === undefined ? undefined : stored<T>(services, sessionId, key, print)
}

/**
 * Runs `commit` in one transaction with a last look for a first answer, and stores its result under
 * the key: of concurrent repeats, exactly one commits, the others replay it. Failures are not stored.
 */
export function commitOnce<T>(services: Services, sessionId: number, key: string | undefined, print: string, commit: () => T): { data: T; replayed: boolean } {
  return immediate(services.db, () => {
    if (key === undefined) return { data: commit(), replayed: false }
    const first = stored<T>(services, sessionId, key, print)
    if (first) return first
    const data = commit()
    services.idempotency.save(sessionId, key, print, data, services.clock())
    return { data, replayed: false }
  })
}

/**
 * The key forwarded to the insurer: the same for a repeat of the same request in the same session,
 * so a retry, or a repeat after a crash, never issues twice upstream.
 */
export function upstreamKey(sessionRef: string, key: string | undefined, operation: string): string {
  if (key === undefined) return randomUUID()
  return createHash('sha256').update(`${sessionRef}\n${operation}\n${key}`).digest('hex')
}

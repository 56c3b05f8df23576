/**
 * @module `Idempotency-Key` (IETF idempotency-key draft) for issue and modify: within a session, a
 * repeat with the same body answers the first result again; with another body it is refused.
 * The last check, the write and the stored answer share one transaction, so concurrent repeats, from
 * one process or several sharing the file, create exactly one policy.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto'
import { ApiError, throwIfInvalid } from '../../errors'
import type { IdempotencyStore, Storage, Stores } from '../../storage/storage'
import { inLiveSession } from '../session/service'

const KEY_SHAPE = /^[!-~]{1,255}$/

/**
 * The header's value as stored and compared: checked (1 to 255 visible ASCII characters), then
 * HMAC-SHA256 under the session's cookie token, or undefined when absent (null). A partner may send
 * an e-mail as a key; the database then holds only a hash that, without the token (never stored,
 * only its SHA-256), cannot be reversed or matched against guesses.
 */
export function checkedKey(key: string | null, sessionToken: string): string | undefined {
  if (key === null) return undefined
  if (!KEY_SHAPE.test(key)) throwIfInvalid([{ field: 'Idempotency-Key', issue: 'must be 1 to 255 visible ASCII characters' }])
  return createHmac('sha256', sessionToken).update(key).digest('hex')
}

/**
 * A digest of what was asked under `key`: the operation and its body, object keys in sorted order.
 * Without a key nothing is compared, so nothing is digested ('').
 */
export function fingerprint(key: string | undefined, operation: string, body: unknown): string {
  if (key === undefined) return ''
  const canonical = JSON.stringify(body, (_, value) =>
    value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))) : value,
  )
  return createHash('sha256').update(`${operation}\n${canonical}`).digest('hex')
}

/** A stored first answer for this key and body (`replayed: true`), or undefined; another body is refused. */
async function stored<T>(store: IdempotencyStore, sessionId: number, key: string, print: string): Promise<{ data: T; replayed: true } | undefined> {
  const first = await store.find(sessionId, key)
  if (!first) return undefined
  if (first.fingerprint !== print) {
    throw new ApiError('idempotency_key_reused')
  }
  return { data: first.response as T, replayed: true }
}

/**
 * The first answer for this key, if there is one, read before any slow work (an insurer call) so
 * that a repeat answers at once.
 */
export function earlierAnswer<T>(storage: Storage, sessionId: number, key: string | undefined, print: string) {
  // A plain read: commitOnce looks again, holding the key, before anything is written.
  return key === undefined ? undefined : stored<T>(storage.idempotency, sessionId, key, print)
}

/**
 * Runs `commit` in one transaction in the live session, with a last look for a first answer, and
 * stores its result under the key: of concurrent repeats, exactly one commits, the others replay it.
 * Failures are not stored.
 */
export function commitOnce<T>(
  storage: Storage,
  session: { id: number; now: number },
  key: string | undefined,
  print: string,
  commit: (stores: Stores) => Promise<T>,
): Promise<{ data: T; replayed: boolean }> {
  return inLiveSession(storage, session.id, session.now, async (stores) => {
    if (key === undefined) return { data: await commit(stores), replayed: false }
    const first = await stored<T>(stores.idempotency, session.id, key, print)
    if (first) return first
    const data = await commit(stores)
    await stores.idempotency.save(session.id, key, print, data, session.now)
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

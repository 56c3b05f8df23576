/** @module PostgreSQL faults (server states and lost connections) as the seam's `StorageUnavailable`. */
import { StorageUnavailable } from '../storage'
import { guarded as guardedBy } from '../stores'
import { STORAGE_DEADLINE_MS } from './driver'

/**
 * SQLSTATE classes and codes that mean "the database cannot serve now": connection exceptions (08),
 * insufficient resources (53: disk full, out of memory, too many connections), operator intervention
 * (57: shutdown, cannot connect now), system errors (58), a read-only database (25006),
 * serialization failures and deadlocks (40001, 40P01), lock and statement time-outs (55P03, 57014),
 * and a database or a login that is gone (3D000, 28: dropped, renamed, credentials revoked).
 */
const UNAVAILABLE = /^(08|28|53|57|58)|^(3D000|25006|40001|40P01|55P03)$/
/** The client's own words for a connection it lost or never had. */
const CONNECTION = /^(CONNECTION_|CONNECT_TIMEOUT|E(CONNREFUSED|CONNRESET|PIPE|HOSTUNREACH|NETUNREACH|TIMEDOUT|AI_AGAIN)|ENOTFOUND)/

/** `StorageUnavailable` for a storage fault; any other error as it was. */
export function asStorageError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && (UNAVAILABLE.test(code) || CONNECTION.test(code))) return new StorageUnavailable(code)
  return error
}

/**
 * `work`'s result, its faults as `StorageUnavailable`, and so is no answer within the deadline: a
 * query postgres.js never settles (driver.ts) must not hold a partner's call for ever.
 */
export const guarded = <T>(work: () => T | Promise<T>): Promise<T> => guardedBy(() => withinDeadline(work), asStorageError)

function withinDeadline<T>(work: () => T | Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageUnavailable(`no answer within ${STORAGE_DEADLINE_MS} ms`)), STORAGE_DEADLINE_MS)
  })
  return Promise.race([Promise.resolve().then(work), late]).finally(() => clearTimeout(timer))
}

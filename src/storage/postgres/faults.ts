/** @module PostgreSQL faults (server states and lost connections) as the seam's `StorageUnavailable`. */
import { StorageUnavailable } from '../storage'
import { guarded as guardedBy } from '../stores'

/**
 * SQLSTATE classes and codes that mean "the database cannot serve now": connection exceptions (08),
 * insufficient resources (53: disk full, out of memory, too many connections), operator intervention
 * (57: shutdown, cannot connect now), system errors (58), a read-only database (25006),
 * serialization failures and deadlocks (40001, 40P01), lock and statement time-outs (55P03, 57014),
 * and a database or a login that is gone (3D000, 28: dropped, renamed, credentials revoked).
 */
const UNAVAILABLE = /^(08|28|53|57|58)|^(3D000|25006|40001|40P01|55P03)$/
/** The client's own words for a connection it lost or never had, and a stream or TLS layer that failed under it. */
const CONNECTION =
  /^(CONNECTION_|CONNECT_TIMEOUT|E(CONNREFUSED|CONNRESET|CONNABORTED|PIPE|HOSTUNREACH|NETUNREACH|NETDOWN|NETRESET|TIMEDOUT|AI_AGAIN)|ENOTFOUND|ERR_(STREAM|SSL|TLS)_)/

/**
 * Whether the connection a query ran on is gone after `error`: the client's words for a lost one, or
 * a FATAL from the server, which ends the session.
 */
export function connectionLost(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown }
  return severity === 'FATAL' || (typeof code === 'string' && CONNECTION.test(code))
}

/** `StorageUnavailable` for a storage fault; any other error as it was. */
export function asStorageError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && (UNAVAILABLE.test(code) || CONNECTION.test(code))) return new StorageUnavailable(code)
  return error
}

/** `work`'s result, its faults as `StorageUnavailable`. */
export const guarded = <T>(work: () => T | Promise<T>): Promise<T> => guardedBy(work, asStorageError)

/**
 * How long a single statement on the pool may take: past lock_timeout (5 s), the longest a sandbox
 * statement waits when the database works.
 */
export const STATEMENT_DEADLINE_MS = 6_000

/**
 * As `guarded`, and no answer within `STATEMENT_DEADLINE_MS` is `StorageUnavailable` too. For single
 * statements on the pool: postgres.js 3.4.9 was seen not to settle one after its database was
 * dropped (the storage-faults test, 2 runs in 30 with a busy core; cause not found). One answered so
 * may still run later: this serves reads, admission (a counter, or a session nobody was told of,
 * swept when it expires) and a plan search's quotes, never a transaction (driver.ts has its own
 * deadline, safe to commit).
 */
export function guardedWithin<T>(work: () => T | Promise<T>, deadlineMs = STATEMENT_DEADLINE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageUnavailable(`no answer within ${deadlineMs} ms`)), deadlineMs)
  })
  return guarded(() => Promise.race([Promise.resolve().then(work), late]).finally(() => clearTimeout(timer)))
}

/**
 * @module Sessions of the embedded engine: served from memory, SQLite as their log. Only a hash of
 * the cookie token is stored, never the token. A new session is written behind (write-behind.ts),
 * and in the transaction of anything written for it first (a policy's session is durable with it).
 * The file serves one process, so ids are numbered here, after the highest the file holds.
 */
import type { SessionRow } from '../storage'
import type { SqliteConnection } from './connection'
import { unwritten } from './unwritten'

export interface NewSessionRow extends SessionRow {
  tokenHash: string
  createdAt: number
}

export function sessionStore(db: SqliteConnection) {
  const byTokenHash = db.prepare<{ id: number; ref: string; expires_at: number; purged: number; clock_offset_ms: number }>(
    'SELECT id, ref, expires_at, purged, clock_offset_ms FROM sessions WHERE token_hash = ?',
  )
  const offsetOf = db.prepare<{ clock_offset_ms: number }>('SELECT clock_offset_ms FROM sessions WHERE id = ?')
  const setOffset = db.prepare('UPDATE sessions SET clock_offset_ms = ? WHERE id = ?')
  const byPublicRef = db.prepare<{ id: number; token_hash: string; expires_at: number; clock_offset_ms: number }>(
    'SELECT id, token_hash, expires_at, clock_offset_ms FROM sessions WHERE ref = ? AND purged = 0',
  )
  const insert = db.prepare('INSERT INTO sessions (id, ref, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)')
  const live = db.prepare<{ live: number }>('SELECT 1 AS live FROM sessions WHERE id = ? AND expires_at > ? AND purged = 0')
  let lastId = db.prepare<{ id: number | null }>('SELECT MAX(id) AS id FROM sessions').get()?.id ?? 0
  // Live sessions seen since start, by token hash and by id; the log answers for the others.
  const byToken = new Map<string, SessionRow>()
  const tokenOf = new Map<number, string>()
  const created = unwritten<NewSessionRow[]>(
    () => [],
    (held) => held.length,
    (taken, newer) => taken.concat(newer),
  )

  function remember(tokenHash: string, session: SessionRow): SessionRow {
    byToken.set(tokenHash, session)
    tokenOf.set(session.id, tokenHash)
    return session
  }

  // Offsets set by the transaction in its turn (one at a time), applied to memory once it commits.
  const settingOffsets = new Map<number, number>()

  function remembered(id: number): SessionRow | undefined {
    const tokenHash = tokenOf.get(id)
    return tokenHash === undefined ? undefined : byToken.get(tokenHash)
  }

  /**
   * Whether the session still runs at `now`: not expired, not swept (the seam's `SessionStore.isLive`).
   * Memory drops a session as the sweep purges it (`forget`), so a remembered one is not purged.
   */
  function isLive(id: number, now: number): boolean {
    const session = remembered(id)
    return session ? session.expiresAt > now : live.get(id, now) !== undefined
  }

  return {
    /** The session with this token hash as memory has it, or undefined when only the log can tell. */
    cached(tokenHash: string): SessionRow | undefined {
      return byToken.get(tokenHash)
    },
    /**
     * The session with this token hash from the log (expired ones too: a late call gets
     * `session_expired`). Only a live one is remembered: one the sweep purged (its request read the
     * clock before the sweep did) is left to the log, whose `isLive` knows it ended.
     */
    read(tokenHash: string, now: number): SessionRow | undefined {
      const row = byTokenHash.get(tokenHash)
      if (!row) return undefined
      const session = { id: row.id, ref: row.ref, expiresAt: row.expires_at, clockOffsetMs: row.clock_offset_ms }
      return session.expiresAt > now && !row.purged ? remember(tokenHash, session) : session
    },
    create(ref: string, tokenHash: string, now: number, expiresAt: number): SessionRow {
      const session = { id: ++lastId, ref, expiresAt, clockOffsetMs: 0 }
      created.held.push({ ...session, tokenHash, createdAt: now })
      return remember(tokenHash, session)
    },
    isLive,
    /** The session's clock offset while it runs at `now` (null once it ended): set in this transaction, else as memory or the file has it. */
    clockOffset(id: number, now: number): number | null {
      if (!isLive(id, now)) return null
      return settingOffsets.get(id) ?? remembered(id)?.clockOffsetMs ?? offsetOf.get(id)?.clock_offset_ms ?? 0
    },
    /**
     * In a transaction, which has written the session first (write-behind.ts). Memory follows once
     * it commits (`offsetsCommitted`), and forgets it if it rolls back, so that it never runs a
     * clock the file does not hold.
     */
    setClockOffset(id: number, offsetMs: number): void {
      setOffset.run(offsetMs, id)
      settingOffsets.set(id, offsetMs)
    },
    /**
     * The live session with this ref as the file has it (the engine writes memory's first), its clock
     * as memory has it (the file follows once committed).
     */
    byRef(ref: string, now: number): (SessionRow & { tokenHash: string }) | undefined {
      const row = byPublicRef.get(ref)
      if (!row || row.expires_at <= now) return undefined
      const session = remembered(row.id) ?? { id: row.id, ref, expiresAt: row.expires_at, clockOffsetMs: row.clock_offset_ms }
      return { ...session, tokenHash: row.token_hash }
    },
    /** The transaction committed: memory takes the offsets it set. */
    offsetsCommitted(): void {
      for (const [id, offsetMs] of settingOffsets) {
        const session = remembered(id)
        if (session) session.clockOffsetMs = offsetMs
      }
      settingOffsets.clear()
    },
    /** The transaction rolled back: its offsets are forgotten. */
    offsetsRolledBack(): void {
      settingOffsets.clear()
    },
    /** The sweep purged this session: only the log answers for it from now on. */
    forget(id: number): void {
      const tokenHash = tokenOf.get(id)
      if (tokenHash === undefined) return
      tokenOf.delete(id)
      byToken.delete(tokenHash)
    },
    /** The sessions created and not yet written. */
    unwritten: created,
    write(taken: NewSessionRow[]): void {
      for (const session of taken) insert.run(session.id, session.ref, session.tokenHash, session.createdAt, session.expiresAt)
    },
  }
}

export type SessionStore = ReturnType<typeof sessionStore>

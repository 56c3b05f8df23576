/**
 * @module One process per embedded file. SQLite serves one process: its limits, idempotency and
 * sequences are exact because one process holds them (several processes or instances share a
 * PostgreSQL database instead). The process holds the write lock of `<file>.lock` for as long as it
 * runs; the operating system lets it go when the process ends, however it ends (a crash too).
 */
import type { SqliteConnection } from './connection'

/** Another process holds the embedded file. */
export class FileInUse extends Error {}

/** The lock's connection, to close when the process lets the file go; FileInUse when another process holds it. */
export function ownFile(path: string, open: (path: string) => SqliteConnection): SqliteConnection {
  const lock = open(`${path}.lock`)
  try {
    // No wait: a lock still held after start-up is held by a process that runs.
    lock.exec('PRAGMA busy_timeout = 0')
    lock.exec('BEGIN IMMEDIATE')
    return lock
  } catch (error) {
    lock.close()
    if (/busy|locked/i.test(`${(error as { code?: unknown }).code} ${(error as Error).message}`)) throw new FileInUse(path)
    throw error
  }
}

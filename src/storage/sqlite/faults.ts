/** @module SQLite's storage faults, from any of the three drivers, as the seam's `StorageUnavailable`. */
import { StorageUnavailable } from '../storage'

const STORAGE_FAULTS = /^SQLITE_(READONLY|FULL|IOERR|CANTOPEN|BUSY|LOCKED|CORRUPT|NOTADB)/

/** SQLite's primary result codes for the same faults: `node:sqlite` reports only the number. */
const FAULT_NUMBERS: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  26: 'SQLITE_NOTADB',
}

/** The storage fault behind an error, or undefined when it is not one. */
function faultOf(error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown }
  if (typeof code === 'string' && STORAGE_FAULTS.test(code)) return code
  return typeof errcode === 'number' ? FAULT_NUMBERS[errcode & 0xff] : undefined
}

/** `StorageUnavailable` for a storage fault; any other error as it was. */
export function asStorageError(error: unknown): unknown {
  const fault = faultOf(error)
  return fault ? new StorageUnavailable(fault) : error
}

/**
 * Whether the error is SQLITE_BUSY, from a driver or as the seam's `StorageUnavailable`: another
 * connection holds the lock (the checkpoint worker restarting the WAL).
 */
export const isBusy = (error: unknown): boolean => (error instanceof StorageUnavailable ? error.reason : faultOf(error))?.startsWith('SQLITE_BUSY') === true

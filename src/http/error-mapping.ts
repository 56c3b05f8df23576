/**
 * @module Maps anything thrown while serving a request to a contract error. Framework errors
 * (routing, validation, parse) and storage faults get their contract code; anything else is an
 * `internal_error` that is logged with the request id and reveals nothing.
 */
import { ApiError } from '../errors'
import { isSandboxRoute } from './paths'
import { detailsFromSchemaErrors } from './validation-details'

const STORAGE_FAULTS = /^SQLITE_(READONLY|FULL|IOERR|CANTOPEN|BUSY|LOCKED|CORRUPT|NOTADB)/

/** SQLite's primary result codes for the same faults: `node:sqlite` reports only the number. */
const FAULT_NUMBERS: Record<number, string> = {
  5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED', 8: 'SQLITE_READONLY', 10: 'SQLITE_IOERR', 11: 'SQLITE_CORRUPT', 13: 'SQLITE_FULL', 14: 'SQLITE_CANTOPEN', 26: 'SQLITE_NOTADB',
}

/** The storage fault behind an error from any of the three drivers, or undefined. */
function storageFault(error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown }
  if (typeof code === 'string' && STORAGE_FAULTS.test(code)) return code
  return typeof errcode === 'number' ? FAULT_NUMBERS[errcode & 0xff] : undefined
}

export function toApiError(code: unknown, error: unknown, path: string, requestId: string, log: (line: string) => void): ApiError {
  if (error instanceof ApiError) return error
  switch (code) {
    case 'NOT_FOUND':
      return isSandboxRoute(path)
        ? new ApiError('method_not_allowed', 'Sandbox calls use POST.')
        : new ApiError('not_found', 'No such sandbox endpoint.')
    case 'VALIDATION': {
      const { type, all } = error as { type: string; all: Parameters<typeof detailsFromSchemaErrors>[0] }
      // A path parameter that does not decode (`%E0%A4%A`) is a malformed policy_ref.
      if (type === 'params') return new ApiError('policy_not_found', 'No policy with this policy_ref exists in this session.')
      if (type === 'body') return new ApiError('validation_failed', 'The request has invalid fields; see details.', detailsFromSchemaErrors(all))
      break // an answer that breaks its own schema is our fault, not the caller's
    }
    case 'PARSE':
      return new ApiError('invalid_json', 'The body is not valid JSON.')
  }
  const sqliteCode = storageFault(error)
  if (sqliteCode) {
    log(JSON.stringify({ time: new Date().toISOString(), level: 'error', request_id: requestId, error: sqliteCode }))
    return new ApiError('storage_unavailable', 'Sandbox storage is unavailable; try again shortly.', undefined, 5)
  }
  log(JSON.stringify({ time: new Date().toISOString(), level: 'error', request_id: requestId, error: String(error), stack: (error as Error)?.stack }))
  return new ApiError('internal_error', 'Something went wrong on our side. Quote the request_id if you report it.')
}

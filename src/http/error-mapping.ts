/**
 * @module Maps anything thrown while serving a request to a contract error. Framework errors
 * (routing, validation, parse) and storage faults get their contract code; anything else is an
 * `internal_error` that is logged with the request id and reveals nothing.
 */
import { ApiError } from '../errors'
import type { Log } from '../log'
import { StorageUnavailable } from '../storage/storage'
import { allowedMethod, PATHS } from './paths'
import { detailsFromSchemaErrors } from './validation-details'

export function toApiError(code: unknown, error: unknown, path: string, requestId: string, log: Log): ApiError {
  if (error instanceof ApiError) return error
  switch (code) {
    case 'NOT_FOUND': {
      const allowed = allowedMethod(path)
      if (allowed === 'POST') return new ApiError('method_not_allowed', { variant: 'post' })
      if (allowed === 'GET') return new ApiError('method_not_allowed', { variant: 'get' })
      return new ApiError('not_found')
    }
    case 'VALIDATION': {
      const { type, all } = error as { type: string; all: Parameters<typeof detailsFromSchemaErrors>[0] }
      // A path parameter that does not decode (`%E0%A4%A`) is a malformed reference of its kind.
      if (type === 'params') return malformedReference(path)
      if (type === 'body') return new ApiError('validation_failed', { variant: 'fields', details: detailsFromSchemaErrors(all) })
      break // an answer that breaks its own schema is our fault, not the caller's
    }
    case 'PARSE':
      return new ApiError('invalid_json', { variant: 'notJson' })
  }
  if (error instanceof StorageUnavailable) {
    log({ level: 'error', request_id: requestId, error: error.message })
    return new ApiError('storage_unavailable', { retryAfter: 5 })
  }
  log({ level: 'error', request_id: requestId, error: String(error), stack: (error as Error)?.stack })
  return new ApiError('internal_error')
}

/** The not-found error of the reference a path carries: a logged call's, an event's, else a policy's. */
function malformedReference(path: string): ApiError {
  if (path.startsWith(`${PATHS.requestLog}/`)) return new ApiError('request_not_found')
  if (path.startsWith(`${PATHS.events}/`)) return new ApiError('event_not_found')
  return new ApiError('policy_not_found')
}

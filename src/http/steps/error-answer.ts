/**
 * @module How any failure of a sandbox call is answered: the error envelope with its status, the
 * allowance headers, `Retry-After` and `Allow` where the contract gives them, and a closed
 * connection where what is left of the request can never be one.
 */
import { Elysia } from 'elysia'
import type { Config } from '../../config'
import type { RateStatus } from '../../domain/rate-window'
import type { Log } from '../../log'
import type { Storage } from '../../storage/storage'
import { delayAnswer } from '../delay'
import { failure, rateLimitHeaders } from '../envelope'
import { toApiError } from '../error-mapping'
import { allowedMethod, pathOf } from '../paths'
import { UnreadableBody } from './request-body'
import { stateOf, type RequestState } from '../request-state'
import { withSessionHint } from '../session-hint'

export interface ErrorAnswerDeps {
  config: Pick<Config, 'rateLimit' | 'rateWindowSeconds'>
  clock: () => number
  storage: Pick<Storage, 'allowance'>
  log: Log
}

export function errorAnswer({ config, clock, storage, log }: ErrorAnswerDeps) {
  /** The network's allowance for an answer refused before the rate check; unknown when storage fails. */
  async function allowanceOrFull(state: RequestState): Promise<RateStatus> {
    const now = clock()
    try {
      return await storage.allowance([state.network], now)
    } catch {
      return { admitted: false, limit: config.rateLimit, remaining: config.rateLimit, resetAt: now }
    }
  }

  return new Elysia({ name: 'sandbox-error-answer' }).onError({ as: 'global' }, async ({ code, error, request, set }) => {
    const state = stateOf(request)
    const path = pathOf(request.url)
    const apiError = withSessionHint(toApiError(code, error, path, state.requestId, log), state.implicitSession)
    const rate = state.rate ?? (await allowanceOrFull(state))
    Object.assign(set.headers, rateLimitHeaders(rate, config.rateWindowSeconds, clock()))
    if (apiError.retryAfter !== undefined) set.headers['retry-after'] = String(apiError.retryAfter)
    if (apiError.code === 'method_not_allowed') set.headers.allow = allowedMethod(path)!
    // A client too slow to send its body, declaring one too large to read, or whose body could not
    // be read, gets the connection closed after the answer: what it has not sent or we have not
    // read can never be a request.
    // A chunked body is cut at the limit instead: closing while its chunks still arrive would reset
    // the connection and lose the 413 at the client (seen on Bun under load).
    if (
      apiError.code === 'request_timeout' ||
      apiError instanceof UnreadableBody ||
      (apiError.code === 'payload_too_large' && request.headers.has('content-length'))
    ) {
      set.headers.connection = 'close'
    }
    set.status = apiError.status
    await delayAnswer(state.delayMs, request.signal)
    return failure(state, rate, apiError)
  })
}

/**
 * @module The request pipeline every sandbox route shares, in the contract's order: route and
 * method (the router), session expiry, rate limit, body size and media type, JSON parse, personal
 * data; then the route's schema validation and handler. Errors from any step become the envelope.
 */
import { randomBytes } from 'node:crypto'
import { Elysia, type Cookie } from 'elysia'
import { ApiError } from '../errors'
import { rejectPersonalData } from '../domain/personal-data'
import { SESSION_COOKIE, lookupSession, mintSession } from '../modules/session/service'
import type { Services } from '../services'
import { arrivedOverHttps, clientAddress, networkOf } from './client-address'
import { failure, rateLimitHeaders, type RequestState } from './envelope'
import type { RateStatus } from '../domain/rate-window'
import { toApiError } from './error-mapping'
import { readJsonBody } from './request-body'
import { PATHS } from './paths'

/** Header budget: more than any client needs, less than any runtime lets through. */
export const MAX_HEADER_FIELDS = 100
export const MAX_HEADER_BYTES = 16 * 1024

/**
 * `headers_too_large` for a flood the runtime's own parser let through (Node accepts 2000 fields).
 * `Headers` joins repeated names, so this counts distinct names; their values count in the bytes.
 */
function refuseHeaderFloods(headers: Headers): void {
  let fields = 0
  let bytes = 0
  headers.forEach((value, name) => {
    fields++
    bytes += name.length + value.length + 4
  })
  if (fields > MAX_HEADER_FIELDS || bytes > MAX_HEADER_BYTES) {
    throw new ApiError('headers_too_large', `At most ${MAX_HEADER_FIELDS} distinct header names and ${MAX_HEADER_BYTES / 1024} KiB of headers.`)
  }
}

/** Placeholder body: Elysia must not read the stream before the session and rate checks. */
const BODY_DEFERRED = Symbol('body deferred')

export function createPipeline(services: Services) {
  const { config, clock, sessions, rates } = services
  const states = new WeakMap<Request, RequestState>()

  const networkKey = (request: Request) =>
    `n:${networkOf(clientAddress(request, services.peerAddress(request), config.trustProxy))}`

  /** The network's allowance for an answer refused before the rate check; unknown when storage fails. */
  function allowanceOrFull(request: Request): RateStatus {
    const now = clock()
    try {
      return rates.peek([networkKey(request)], now)
    } catch {
      return { admitted: false, limit: config.rateLimit, remaining: config.rateLimit, resetAt: now }
    }
  }

  /** Session expiry, then the rate limit; a session is created only for an admitted request. */
  function admit(state: RequestState, request: Request, cookie: Cookie<unknown>, explicitCreate: boolean, headers: Record<string, unknown>) {
    const now = clock()
    const found = explicitCreate ? { kind: 'none' as const } : lookupSession(sessions, cookie.value, now)
    const network = networkKey(request)
    const cookieAttributes = {
      httpOnly: true,
      sameSite: 'strict' as const,
      path: '/',
      secure: arrivedOverHttps(request, config.trustProxy),
    }
    if (found.kind === 'expired') {
      cookie.set({ ...cookieAttributes, value: '', maxAge: 0 })
      throw new ApiError('session_expired', 'This session has ended. Call again without the cookie, or create a new session.')
    }
    const live = found.kind === 'live' ? found.session : null
    state.session = live
    // A new session is minted only for an admitted request; its counter is empty until then.
    const { status, admitted } = rates.admit(live ? [`s:${live.ref}`, network] : [network], now, () => {
      if (live) return { admitted: { session: live, token: null as string | null } }
      const minted = mintSession()
      const session = sessions.insert(minted.ref, minted.tokenHash, now, now + config.sessionTtlSeconds * 1000)
      return { admitted: { session, token: minted.token }, newKey: `s:${session.ref}` }
    })
    state.rate = status
    Object.assign(headers, rateLimitHeaders(status, config.rateWindowSeconds, now))
    if (!admitted) {
      throw new ApiError('rate_limited', `Fair-use limit: ${status.limit} requests per ${config.rateWindowSeconds / 60} minutes per session and per network.`, undefined, status.retryAfter)
    }
    state.session = admitted.session
    if (admitted.token) cookie.set({ ...cookieAttributes, value: admitted.token, maxAge: config.sessionTtlSeconds })
  }

  return new Elysia({ name: 'sandbox-pipeline' })
    .onRequest(({ request, set }) => {
      const requestId = `req_${randomBytes(12).toString('hex')}`
      states.set(request, { requestId, startedAt: performance.now(), mode: services.insurer ? 'uat_gateway' : 'simulation', session: null, rate: null })
      Object.assign(set.headers, { 'x-request-id': requestId, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
      refuseHeaderFloods(request.headers)
    })
    .onParse({ as: 'global' }, () => BODY_DEFERRED)
    .derive({ as: 'global' }, ({ request, cookie, path, set }) => {
      const state = states.get(request)!
      admit(state, request, cookie[SESSION_COOKIE]!, path === PATHS.session, set.headers)
      return { sandbox: state }
    })
    .onTransform({ as: 'global' }, async (context) => {
      const body = await readJsonBody(context.request)
      rejectPersonalData(body)
      context.body = body
    })
    .onError({ as: 'global' }, ({ code, error, request, set, path }) => {
      const state = states.get(request)!
      const apiError = toApiError(code, error, path, state.requestId, services.log)
      const rate = state.rate ?? allowanceOrFull(request)
      Object.assign(set.headers, rateLimitHeaders(rate, config.rateWindowSeconds, clock()))
      if (apiError.retryAfter !== undefined) set.headers['retry-after'] = String(apiError.retryAfter)
      if (apiError.code === 'method_not_allowed') set.headers.allow = 'POST'
      // A client too slow to send its body gets the connection closed after the answer.
      if (apiError.code === 'request_timeout') set.headers.connection = 'close'
      set.status = apiError.status
      return failure(state, rate, apiError)
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, path }) => {
      const state = states.get(request)
      if (!state) return
      services.log(JSON.stringify({
        time: new Date().toISOString(),
        request_id: state.requestId,
        method: request.method,
        path,
        status: set.status ?? 200,
        duration_ms: Math.round((performance.now() - state.startedAt) * 100) / 100,
        session_ref: state.session?.ref ?? null,
      }))
    })
}

export type Pipeline = ReturnType<typeof createPipeline>

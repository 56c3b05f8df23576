/** @module The sandbox's public routes, in one place for the router, the 405 answer and the log. */
import { POLICY_REF } from '../domain/policy-ref'

export const PATHS = {
  session: '/api/sandbox/session',
  search: '/api/sandbox/plans/search',
  issue: '/api/sandbox/policy/new',
  modify: '/api/sandbox/policy/:policy_ref/modify',
  cancel: '/api/sandbox/policy/:policy_ref/cancel',
  read: '/api/sandbox/policy/:policy_ref/read',
  certificate: '/api/sandbox/policy/:policy_ref/documents/policy_certificate',
  events: '/api/sandbox/events',
  resend: '/api/sandbox/events/:event_id/resend',
  webhook: '/api/sandbox/webhook',
  webhookTest: '/api/sandbox/webhook/test',
  clock: '/api/sandbox/test_helpers/clock',
  advanceClock: '/api/sandbox/test_helpers/clock/advance',
  insurerCancel: '/api/sandbox/test_helpers/policy/:policy_ref/insurer_cancel',
  reissueCertificate: '/api/sandbox/test_helpers/policy/:policy_ref/reissue_certificate',
  requestLog: '/api/sandbox/requests',
  requestLogEntry: '/api/sandbox/requests/:request_id',
  policies: '/api/sandbox/policies',
  console: '/api/sandbox/console',
} as const

/** Reading the request log is not itself logged: a partner's look at it would push calls out of it. */
export const UNLOGGED_ROUTES: ReadonlySet<string> = new Set([PATHS.requestLog, PATHS.requestLogEntry])

/** The documentation: the OpenAPI document and the docs page for people (with its two assets). */
export const DOCS_PATH = '/api/sandbox/docs'
export const SPEC_PATH = '/api/sandbox/openapi.json'
/** The front doors, which point to the documentation. */
export const INDEX_PATHS = ['/', '/api/sandbox'] as const

/** A path under one policy: modify, cancel, read-back, the certificate, and the insurer's side (test helpers). */
const POLICY_PATH =
  /^\/api\/sandbox\/(?:policy\/[^/]+\/(?:modify|cancel|read|documents\/policy_certificate)|test_helpers\/policy\/[^/]+\/(?:insurer_cancel|reissue_certificate))$/
/** Every sandbox call's path, whatever its references hold. */
const CALL_PATHS = [
  /^\/api\/sandbox\/session$/,
  /^\/api\/sandbox\/plans\/search$/,
  /^\/api\/sandbox\/policy\/new$/,
  POLICY_PATH,
  /^\/api\/sandbox\/(?:events|webhook|webhook\/test|events\/[^/]+\/resend)$/,
  /^\/api\/sandbox\/test_helpers\/clock(?:\/advance)?$/,
  /^\/api\/sandbox\/(?:requests|requests\/[^/]+|policies|console)$/,
]
/** A session's console: its page, the page's files and its data, read with its own token, not the session cookie. */
const CONSOLE_PAGES = /^\/api\/sandbox\/console\/(?:[^/]+|[^/]+\/data|assets\/console\.(?:js|css))$/
const DOCUMENTS = new Set<string>([...INDEX_PATHS, SPEC_PATH, DOCS_PATH, `${DOCS_PATH}/swagger-ui.css`, `${DOCS_PATH}/swagger-ui-bundle.js`])

/** The one method a known path answers (so that another is 405, not 404); undefined for an unknown path. */
export function allowedMethod(path: string): 'POST' | 'GET' | undefined {
  if (CALL_PATHS.some((pattern) => pattern.test(path))) return 'POST'
  return DOCUMENTS.has(path) || CONSOLE_PAGES.test(path) ? 'GET' : undefined
}

/**
 * The path of a request URL. Not Elysia's `path`, which assumes `scheme://host` ahead of it: without
 * a usable Host (HTTP/1.0, an empty `Host:`) Bun hands over a bare `/api/...`, whose first segments
 * Elysia then cuts off.
 */
export function pathOf(url: string): string {
  const start = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const query = url.indexOf('?', start)
  return url.slice(start, query < 0 ? undefined : query)
}

const OUR_PATHS = [...Object.values(PATHS), ...DOCUMENTS, '/healthz', '/readyz']
/** Our paths without references: logged as they are, without a look at each segment. */
const FIXED_PATHS = new Set(OUR_PATHS.filter((path) => !path.includes(':')))
const ROUTE_WORDS = new Set(OUR_PATHS.flatMap((path) => path.split('/')))

/**
 * The path as logged: our own routes' words and well-formed references only; any other segment (an
 * e-mail in place of a `policy_ref`, say) becomes a placeholder, so that no caller text is logged.
 */
export function loggedPath(path: string): string {
  if (FIXED_PATHS.has(path)) return path
  const placeholder = POLICY_PATH.test(path) ? ':policy_ref' : ':segment'
  return path
    .split('/')
    .map((segment) => (ROUTE_WORDS.has(segment) || POLICY_REF.test(segment) ? segment : placeholder))
    .join('/')
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT'])

/** The method as logged: any other word (Deno passes unknown ones through as sent) is caller text. */
export function loggedMethod(method: string): string {
  return METHODS.has(method) ? method : 'OTHER'
}

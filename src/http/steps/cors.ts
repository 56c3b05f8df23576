/**
 * @module Optional CORS (`SANDBOX_CORS_ORIGINS`), for browser-based tools on another origin: the
 * listed origins get the preflight and the credentialed answers they need; any other origin gets
 * no CORS headers, so its browser refuses to read the answer. Off (no headers, no preflight) when
 * the list is empty.
 */
import { Elysia } from 'elysia'
import { cors } from '@elysiajs/cors'

/** What a browser script may send: the body's type and the sandbox's request headers. */
const ALLOWED_HEADERS = ['content-type', 'idempotency-key', 'sandbox-outcome', 'sandbox-delay-ms']
/** What it may read besides the body: the request id, the allowance and the replay and file headers. */
const EXPOSED_HEADERS = ['x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'idempotent-replayed', 'content-disposition']

/**
 * The CORS step. Typed as a plain plugin: the preflight routes it adds are for browsers, not for
 * the typed client, whose routes must not change with the configuration.
 */
export function corsPolicy(origins: string[]): Elysia {
  if (origins.length === 0) return new Elysia({ name: 'sandbox-cors-off' })
  return cors({
    origin: origins,
    credentials: true,
    methods: ['GET', 'POST'],
    allowedHeaders: ALLOWED_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  }) as unknown as Elysia
}

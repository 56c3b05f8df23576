/**
 * @module Routes of the documentation: the OpenAPI document, a docs page for people that works
 * offline (Swagger UI served from the package, embedded in every build), and the front doors `/`
 * and `/api/sandbox`, which point to both. None of them needs a session or counts against any
 * allowance.
 */
// Types the Swagger assets imported as text, also for a project that type-checks the client from source.
/// <reference path="../../types/assets.d.ts" />
import { gzipSync } from 'node:zlib'
import { Elysia } from 'elysia'
import swaggerScript from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'text' }
import swaggerStyle from 'swagger-ui-dist/swagger-ui.css' with { type: 'text' }
import { todayDayNumber } from '../../domain/dates'
import { requestOrigin } from '../../http/client-address'
import { staticAsset } from '../../http/static-asset'
import { DOCS_PATH, INDEX_PATHS, SPEC_PATH } from '../../http/paths'
import type { Services } from '../services'
import { openApiDocument } from './document'

const HIDDEN = ['/healthz', '/readyz', ...INDEX_PATHS, SPEC_PATH, DOCS_PATH, `${DOCS_PATH}/swagger-ui.css`, `${DOCS_PATH}/swagger-ui-bundle.js`]

// No Authorize button: the session cookie is HttpOnly, so no person could type its value, and the
// browser sends it by itself once the first call has set it.
const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Travel protection sandbox: API</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script>SwaggerUIBundle({ url: '${SPEC_PATH}', dom_id: '#swagger-ui', withCredentials: true })</script>
</body>
</html>`

const asset = (body: string, type: string) => staticAsset(body, type, 86_400)

/** RFC 8631 links: the docs page for people, the OpenAPI document for tools. */
const LINKS = `<${DOCS_PATH}>; rel="service-doc", <${SPEC_PATH}>; rel="service-desc"`

/** The front door: a browser goes to the docs page; any other client is told where things are. */
function frontDoor(version: string) {
  const body = JSON.stringify({
    name: 'Travel protection sandbox',
    version,
    docs: DOCS_PATH,
    openapi: SPEC_PATH,
    health: '/healthz',
    api: 'POST /api/sandbox/session, then plans/search, policy/new, policy/{policy_ref}/modify (see the docs)',
  })
  return ({ request }: { request: Request }) => {
    if (request.headers.get('accept')?.includes('text/html')) {
      return new Response(null, { status: 302, headers: { location: DOCS_PATH, link: LINKS } })
    }
    return new Response(body, { headers: { 'content-type': 'application/json', link: LINKS, 'cache-control': 'no-store' } })
  }
}

/** Whether an `Accept-Encoding` takes gzip: named, or `*` when gzip is not named; not with `q=0`. */
function takesGzip(accept: string | null): boolean {
  const entries = (accept ?? '').split(',').map((entry) => entry.trim().toLowerCase())
  const coding = (entry: string) => entry.split(';')[0]!.trim()
  const chosen = entries.find((entry) => coding(entry) === 'gzip') ?? entries.find((entry) => coding(entry) === '*')
  return chosen !== undefined && !/;\s*q=0(\.0*)?$/.test(chosen)
}

/** The document's bytes for one origin, plain, and gzipped once a client has asked for that. */
interface Served {
  plain: string
  gzipped?: Uint8Array<ArrayBuffer>
}

/** Origins whose bytes are kept; past this many (Host is the caller's text), the cache starts over. */
const ORIGINS_KEPT = 16

export function docsRoutes(version: string, services: Pick<Services, 'catalogue' | 'config' | 'insurer' | 'clock'>) {
  // Built on first request and again each UTC day, so that the examples' trip dates stay ahead.
  let document: { day: number; body: Record<string, unknown>; served: Map<string, Served> } | undefined
  const docs = new Elysia({ name: 'docs-routes' })
  const door = frontDoor(version)
  const served = (origin: string, now: number): Served => {
    if (document?.day !== todayDayNumber(now)) {
      document = { day: todayDayNumber(now), body: openApiDocument(docs, version, services, now, HIDDEN), served: new Map() }
    }
    let bytes = document.served.get(origin)
    if (!bytes) {
      const plain = JSON.stringify({ ...document.body, servers: [{ url: origin, description: 'The sandbox serving this document' }] })
      bytes = { plain }
      if (document.served.size >= ORIGINS_KEPT) document.served.clear()
      document.served.set(origin, bytes)
    }
    return bytes
  }
  return docs
    .get(
      SPEC_PATH,
      ({ request }) => {
        const bytes = served(requestOrigin(request, services.config.trustProxy), services.clock())
        const gzip = takesGzip(request.headers.get('accept-encoding'))
        if (gzip) bytes.gzipped ??= new Uint8Array(gzipSync(bytes.plain))
        return new Response(gzip ? bytes.gzipped! : bytes.plain, {
          headers: { 'content-type': 'application/json', vary: 'Accept-Encoding', ...(gzip && { 'content-encoding': 'gzip' }) },
        })
      },
      { detail: { hide: true } },
    )
    .get(DOCS_PATH, asset(page, 'text/html'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui-bundle.js`, asset(swaggerScript, 'text/javascript'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui.css`, asset(swaggerStyle, 'text/css'), { detail: { hide: true } })
    .get(INDEX_PATHS[0], door, { detail: { hide: true } })
    .get(INDEX_PATHS[1], door, { detail: { hide: true } })
}

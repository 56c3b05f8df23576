/**
 * @module The OpenAPI document, generated from the routes' own TypeBox schemas, and a docs page
 * for people that works offline: Swagger UI is served from the package, embedded in every build.
 */
// Types the Swagger assets imported as text, also for a project that type-checks the client from source.
/// <reference path="../types/assets.d.ts" />
import { Elysia, type AnyElysia } from 'elysia'
import { toOpenAPISchema } from '@elysiajs/openapi'
import swaggerScript from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'text' }
import swaggerStyle from 'swagger-ui-dist/swagger-ui.css' with { type: 'text' }
import type { Config } from '../config'
import { spokenDuration } from '../domain/rate-window'
import { FORCED_OUTCOMES_AT } from './forced-outcome'
import { DOCS_PATH, PATHS, SPEC_PATH } from './paths'


/** The document's introduction, with the limits this server runs with. */
function description(config: Config): string {
  return `Test a travel-protection integration with no signup, no API key and no personal data.
Open an anonymous session (a cookie), search normalised plans for a trip and traveller ages, issue a
sandbox policy against a returned plan, and apply one of four correction scenarios to it.

Every answer is one envelope: \`ok\`, \`mode\`, \`request_id\`, \`data\` or \`error\`, and \`meta\`
(session expiry and the fair-use allowance). Fair use: ${config.rateLimit} requests in any rolling
${spokenDuration(config.rateWindowSeconds)}, per session and per client network; the allowance is repeated in the IETF draft
\`RateLimit\` and \`RateLimit-Policy\` headers, and a refused call carries \`Retry-After\`. A session
lasts ${spokenDuration(config.sessionTtlSeconds)} from its creation; ask for a shorter one (\`lifetime_minutes\`) to test expiry.
Read a policy back, with its endorsement history, and download its certificate (a specimen PDF).

To test how your integration handles failures it cannot cause on demand, send \`Sandbox-Outcome: <code>\`
(listed per operation): the call fails exactly as that failure would, counts against the allowance,
and changes nothing.

Sandbox artefacts never carry over to production; prices are indicative only.`
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'IETF idempotency-key draft: a repeat in this session with the same body answers the first result again '
    + '(header `Idempotent-Replayed: true`); with another body it is `idempotency_key_reused`.',
  schema: { type: 'string', pattern: '^[!-~]{1,255}$', minLength: 1, maxLength: 255 },
}

const SANDBOX_OUTCOME = (codes: readonly string[]) => ({
  name: 'Sandbox-Outcome',
  in: 'header',
  required: false,
  description: 'Testing aid: the call fails exactly as this failure would (status, envelope, `Retry-After`; `session_expired` '
    + 'also clears the cookie). Checked after the rate limit and before the body, so it counts like any other call and '
    + 'changes nothing. Another value is `validation_failed`.',
  schema: { type: 'string', enum: codes },
})

/** The certificate's success: the PDF, with the headers every sandbox answer carries. */
const PDF_ANSWER = {
  description: 'The specimen certificate. The same bytes for the same policy state.',
  headers: Object.fromEntries(Object.entries({
    'X-Request-Id': 'The request id (no envelope carries it here).',
    RateLimit: 'IETF draft: `"sandbox";r=<remaining>;t=<seconds until reset>`.',
    'RateLimit-Policy': 'IETF draft: `"sandbox";q=<limit>;w=<window seconds>`.',
    'Content-Disposition': '`attachment; filename="policy_certificate_<policy_ref>.pdf"`.',
  }).map(([name, description]) => [name, { description, schema: { type: 'string' } }])),
  content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
}

type Operation = { parameters?: unknown[]; requestBody?: { required?: boolean }; responses?: Record<string, unknown> }

/**
 * The generator sees the pipeline's global body parser (a function that defers reading the body
 * until the session and rate checks have run) and, unable to name a function's media type, lists
 * none: every request body came out as `content: {}`. The body is always read as JSON
 * (request-body.ts), so the generator is shown the routes with that parser named.
 */
function withJsonParser(app: AnyElysia): AnyElysia {
  // What the generator reads of an app (Elysia's types mark both methods protected).
  const source = app as unknown as { getGlobalRoutes(): { hooks: object }[]; getGlobalDefinitions(): unknown }
  const routes = source.getGlobalRoutes().map((route) => ({ ...route, hooks: { ...route.hooks, parse: [{ fn: 'application/json' }] } }))
  return { getGlobalRoutes: () => routes, getGlobalDefinitions: () => source.getGlobalDefinitions() } as unknown as AnyElysia
}

/**
 * What the routes' schemas cannot say: optional bodies, the Idempotency-Key and Sandbox-Outcome
 * headers, and the certificate's PDF.
 */
function refine(paths: Record<string, Record<string, Operation>>) {
  const post = (path: string) => paths[path.replace(/:(\w+)/g, '{$1}')]!.post!
  for (const path of [PATHS.session, PATHS.read, PATHS.certificate]) post(path).requestBody!.required = false
  for (const path of [PATHS.issue, PATHS.modify]) post(path).parameters = [...(post(path).parameters ?? []), IDEMPOTENCY_KEY]
  for (const [path, codes] of Object.entries(FORCED_OUTCOMES_AT)) post(path).parameters = [...(post(path).parameters ?? []), SANDBOX_OUTCOME(codes)]
  post(PATHS.certificate).responses!['200'] = PDF_ANSWER
  return paths
}

/** The OpenAPI document of every route the app has; built once, on the first request for it. */
function openApiDocument(app: AnyElysia, version: string, config: Config) {
  const { paths, components } = toOpenAPISchema(withJsonParser(app), { paths: HIDDEN })
  return {
    openapi: '3.1.2',
    info: { title: 'Travel protection sandbox', version, description: description(config) },
    servers: [{ url: '/', description: 'The sandbox serving this document' }],
    paths: refine(paths as Record<string, Record<string, Operation>>),
    components: {
      ...components,
      securitySchemes: {
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'sbx_session',
          description: 'Set by the sandbox on the first call (HttpOnly, SameSite=Strict); send it back on later calls. Optional: a call without it opens a new session.',
        },
      },
    },
    security: [{}, { session: [] }],
  }
}

const HIDDEN = ['/healthz', '/readyz', SPEC_PATH, DOCS_PATH, `${DOCS_PATH}/swagger-ui.css`, `${DOCS_PATH}/swagger-ui-bundle.js`]

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

const asset = (body: string, type: string) => () =>
  new Response(body, { headers: { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'public, max-age=86400' } })

export function docsRoutes(version: string, config: Config) {
  let document: ReturnType<typeof openApiDocument> | undefined
  const docs = new Elysia({ name: 'docs-routes' })
  return docs
    .get(SPEC_PATH, () => (document ??= openApiDocument(docs, version, config)), { detail: { hide: true } })
    .get(DOCS_PATH, asset(page, 'text/html'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui-bundle.js`, asset(swaggerScript, 'text/javascript'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui.css`, asset(swaggerStyle, 'text/css'), { detail: { hide: true } })
}

/**
 * @module The OpenAPI document, generated from the routes' own TypeBox schemas, and a docs page
 * for people that works offline: Swagger UI is served from the package, embedded in every build.
 */
import { Elysia } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import swaggerScript from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'text' }
import swaggerStyle from 'swagger-ui-dist/swagger-ui.css' with { type: 'text' }

export const DOCS_PATH = '/api/sandbox/docs'
export const SPEC_PATH = '/api/sandbox/openapi.json'

const DESCRIPTION = `Test a travel-protection integration with no signup, no API key and no personal data.
Open an anonymous session (a cookie), search normalised plans for a trip and traveller ages, issue a
sandbox policy against a returned plan, and apply one of four correction scenarios to it.

Every answer is one envelope: \`ok\`, \`mode\`, \`request_id\`, \`data\` or \`error\`, and \`meta\`
(session expiry and the fair-use allowance). Fair use: 30 requests in any rolling 10 minutes, per
session and per client network; the allowance is repeated in the IETF draft \`RateLimit\` and
\`RateLimit-Policy\` headers, and a refused call carries \`Retry-After\`.

Sandbox artefacts never carry over to production; prices are indicative only.`

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

export function docsRoutes(version: string) {
  return new Elysia({ name: 'docs-routes' })
    .use(openapi({
      path: DOCS_PATH,
      specPath: SPEC_PATH,
      provider: null,
      exclude: { paths: ['/healthz', '/readyz', SPEC_PATH, DOCS_PATH, `${DOCS_PATH}/swagger-ui.css`, `${DOCS_PATH}/swagger-ui-bundle.js`] },
      documentation: {
        info: { title: 'Travel protection sandbox', version, description: DESCRIPTION },
        servers: [{ url: '/', description: 'The sandbox serving this document' }],
        components: {
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
      },
    }))
    .get(DOCS_PATH, asset(page, 'text/html'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui-bundle.js`, asset(swaggerScript, 'text/javascript'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui.css`, asset(swaggerStyle, 'text/css'), { detail: { hide: true } })
}

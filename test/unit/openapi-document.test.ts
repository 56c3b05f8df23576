/**
 * The OpenAPI document as code generators read it: named operations under their resources, the
 * shared shapes named once, a `servers` entry that works as given, gzip when asked. Tools we did not
 * write check the document too (test/http/openapi-tools.spec.ts, generated-clients.spec.ts).
 */
import { describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { inProcessApp } from './support/app'

const SPEC = '/api/sandbox/openapi.json'

async function fetchDocument(app: Awaited<ReturnType<typeof inProcessApp>>['app'], origin = 'http://localhost', headers: Record<string, string> = {}) {
  const response = await app.handle(new Request(`${origin}${SPEC}`, { headers }))
  expect(response.status).toBe(200)
  return response
}

const operations = (document: any) =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods as object).map(([method, operation]) => ({ path, method, ...operation })))

const sandbox = await inProcessApp()

describe('the OpenAPI document', () => {
  test("every operation has a short camelCase operationId of its own and one of the document's tags", async () => {
    const document: any = await (await fetchDocument(sandbox.app)).json()
    const tags = document.tags.map((tag: { name: string }) => tag.name)
    expect(tags).toEqual(['Session', 'Plans', 'Policies', 'Events', 'Test helpers', 'Request log'])
    const ids = Object.fromEntries(operations(document).map((operation: any) => [operation.path, [operation.operationId, ...operation.tags]]))
    expect(ids).toEqual({
      '/api/sandbox/session': ['createSession', 'Session'],
      '/api/sandbox/plans/search': ['searchPlans', 'Plans'],
      '/api/sandbox/policy/new': ['issuePolicy', 'Policies'],
      '/api/sandbox/policy/{policy_ref}/modify': ['modifyPolicy', 'Policies'],
      '/api/sandbox/policy/{policy_ref}/cancel': ['cancelPolicy', 'Policies'],
      '/api/sandbox/policy/{policy_ref}/read': ['readPolicy', 'Policies'],
      '/api/sandbox/policy/{policy_ref}/documents/policy_certificate': ['downloadPolicyCertificate', 'Policies'],
      '/api/sandbox/webhook': ['registerWebhook', 'Events'],
      '/api/sandbox/webhook/test': ['sendTestEvent', 'Events'],
      '/api/sandbox/events': ['listEvents', 'Events'],
      '/api/sandbox/events/{event_id}/resend': ['resendEvent', 'Events'],
      '/api/sandbox/test_helpers/clock': ['readClock', 'Test helpers'],
      '/api/sandbox/test_helpers/clock/advance': ['advanceClock', 'Test helpers'],
      '/api/sandbox/test_helpers/policy/{policy_ref}/reissue_certificate': ['reissuePolicyCertificate', 'Test helpers'],
      '/api/sandbox/test_helpers/policy/{policy_ref}/insurer_cancel': ['insurerCancelPolicy', 'Test helpers'],
      '/api/sandbox/policies': ['listPolicies', 'Policies'],
      '/api/sandbox/requests': ['listRequests', 'Request log'],
      '/api/sandbox/requests/{request_id}': ['readRequest', 'Request log'],
      '/api/sandbox/console': ['openConsole', 'Request log'],
    })
    // The paths in the flow's order (its examples run in it): the clock advanced before the cancel's preview, the insurer's cancel,
    // then what the session holds: its policies, and its request log (which shows the issue call).
    expect(Object.keys(document.paths)).toEqual([
      '/api/sandbox/session',
      '/api/sandbox/plans/search',
      '/api/sandbox/policy/new',
      '/api/sandbox/policy/{policy_ref}/modify',
      '/api/sandbox/policy/{policy_ref}/read',
      '/api/sandbox/policy/{policy_ref}/documents/policy_certificate',
      '/api/sandbox/test_helpers/clock',
      '/api/sandbox/test_helpers/clock/advance',
      '/api/sandbox/policy/{policy_ref}/cancel',
      '/api/sandbox/webhook',
      '/api/sandbox/webhook/test',
      '/api/sandbox/events',
      '/api/sandbox/events/{event_id}/resend',
      '/api/sandbox/test_helpers/policy/{policy_ref}/reissue_certificate',
      '/api/sandbox/test_helpers/policy/{policy_ref}/insurer_cancel',
      '/api/sandbox/policies',
      '/api/sandbox/requests',
      '/api/sandbox/requests/{request_id}',
      '/api/sandbox/console',
    ])
    for (const [type, webhook] of Object.entries(document.webhooks) as [string, any][]) {
      expect(webhook.post.operationId).toMatch(/^[a-z][A-Za-z]+Event$/)
      expect(webhook.post.operationId.toLowerCase()).toBe(`${type.replace(/[._]/g, '')}event`)
    }
  })

  test('the shared shapes are named components, each referred to where it is used and written out nowhere else', async () => {
    const text = await (await fetchDocument(sandbox.app)).text()
    const document = JSON.parse(text)
    const named = [
      'Plan',
      'Policy',
      'IssuedPolicy',
      'Trip',
      'Traveller',
      'Refund',
      'Endorsement',
      'Event',
      'Meta',
      'Mode',
      'ErrorDetail',
      'ErrorEnvelope',
      'Clock',
      'AdvanceRequest',
      'Advance',
      'Coverage',
      'CancelledBy',
      'PolicyList',
      'ListedPolicy',
      'RequestLogQuery',
      'RequestLog',
      'LoggedCall',
    ]
    for (const name of named) {
      expect(document.components.schemas[name], name).toBeDefined()
      expect(text, name).toContain(`"$ref":"#/components/schemas/${name}"`)
    }
    // Request headers described the same on every operation that takes them, once.
    for (const name of ['Sandbox-Delay-Ms', 'Idempotency-Key', 'Sandbox-Signature']) {
      expect(document.components.parameters[name], name).toBeDefined()
      expect(text, name).toContain(`"$ref":"#/components/parameters/${name}"`)
    }
    expect(text.match(/"name":"Sandbox-Delay-Ms"/g)).toHaveLength(1)
    // A property only these shapes have appears once, in its component.
    // The policy's four forms: issued, read back, in an event, in an event of format 1.
    expect(text.match(/"svc_insurance_id":\{/g)).toHaveLength(4)
    expect(text.match(/"benefits_summary":\{/g)).toHaveLength(1)
    expect(text.match(/"origin_country":\{/g)).toHaveLength(1)
    // Every $ref names something the document has.
    for (const [, section, name] of text.matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g))
      expect(document.components[section!]?.[name!], `${section}/${name}`).toBeDefined()
    // 492 KB when each operation wrote out its own copy of every shape. 143 KB before the policies list and the request log;
    // they add three operations of 2.4 to 3.6 KB each without examples (as the others), five shapes (5 KB) and examples: 163 KB.
    expect(text.length).toBeLessThan(185_000)
  })

  test('the same document the next day, whatever the routes answered meanwhile (their compiled validators change nothing in it)', async () => {
    const sandbox = await inProcessApp()
    // Examples hold the day's dates: the rest is compared.
    const shape = async () =>
      JSON.stringify(JSON.parse(await (await fetchDocument(sandbox.app)).text(), (key, value) => (key === 'example' || key === 'examples' ? undefined : value)))
    const first = await shape()
    for (const path of ['session', 'plans/search', 'policy/new', 'events', 'test_helpers/clock', 'policy/pol_sbx_00/documents/policy_certificate'])
      await sandbox.call(path, {})
    sandbox.advance(86_400_000)
    const next = await shape()
    expect(next.length).toBe(first.length)
    expect(next === first, "the next day's document differs").toBe(true)
  })

  test('each error status lists only the codes it carries, and any other answer is the envelope with every code', async () => {
    const document: any = await (await fetchDocument(sandbox.app)).json()
    const issue = document.paths['/api/sandbox/policy/new'].post.responses
    expect(issue['404'].description).toBe('Error codes: `plan_not_found`.')
    expect(issue['404'].content['application/json'].schema.properties.error.properties.code).toEqual({ type: 'string', const: 'plan_not_found' })
    expect(issue['409'].content['application/json'].schema.properties.error.properties.code.enum).toEqual([
      'plan_mismatch',
      'price_changed',
      'clock_not_movable',
    ])
    expect(issue.default.content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorEnvelope')
    expect(document.components.schemas.Error.properties.code.enum).toContain('plan_not_found')
    // An answer every route gives the same is written once.
    expect(issue['429'].$ref).toBe('#/components/responses/RateLimited')
  })

  test('servers names the origin the document was fetched from, so a generated client needs no base URL', async () => {
    const document: any = await (await fetchDocument(sandbox.app, 'http://127.0.0.1:4321')).json()
    expect(document.servers).toEqual([{ url: 'http://127.0.0.1:4321', description: 'The sandbox serving this document' }])
    // Forwarded headers are the caller's text unless a proxy is trusted.
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'sandbox.example.org' }
    expect(((await (await fetchDocument(sandbox.app, 'http://10.0.0.5:3000', forwarded)).json()) as any).servers[0].url).toBe('http://10.0.0.5:3000')
    const proxied = await inProcessApp({ SANDBOX_TRUST_PROXY: '1' })
    expect(((await (await fetchDocument(proxied.app, 'http://10.0.0.5:3000', forwarded)).json()) as any).servers[0].url).toBe('https://sandbox.example.org')
    const garbled = { 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'a b' }
    expect(((await (await fetchDocument(proxied.app, 'http://10.0.0.5:3000', garbled)).json()) as any).servers[0].url).toBe('http://10.0.0.5:3000')
  })

  test('gzip when the client takes it, the same document either way', async () => {
    const plain = await fetchDocument(sandbox.app)
    expect(plain.headers.get('content-encoding')).toBeNull()
    expect(plain.headers.get('vary')).toBe('Accept-Encoding')
    const text = await plain.text()
    for (const accept of ['gzip', 'br, gzip;q=0.5', 'GZIP', '*', 'br;q=1, *;q=0.1']) {
      const zipped = await fetchDocument(sandbox.app, 'http://localhost', { 'accept-encoding': accept })
      expect(zipped.headers.get('content-encoding'), accept).toBe('gzip')
      const bytes = new Uint8Array(await zipped.arrayBuffer())
      expect(bytes.length).toBeLessThan(text.length / 5)
      expect(gunzipSync(bytes).toString('utf8')).toBe(text)
    }
    for (const accept of ['gzip;q=0', 'br', 'identity', 'gzipx', 'gzip;q=0, *']) {
      const refused = await fetchDocument(sandbox.app, 'http://localhost', { 'accept-encoding': accept })
      expect(refused.headers.get('content-encoding'), accept).toBeNull()
    }
  })

  test("the webhook's example URL is a documentation address, which no one's service answers", async () => {
    const document: any = await (await fetchDocument(sandbox.app)).json()
    const register = document.paths['/api/sandbox/webhook'].post
    const url = new URL(register.requestBody.content['application/json'].example.url)
    expect(url.hostname).toMatch(/^192\.0\.2\.\d+$/) // TEST-NET-1, RFC 5737
    // A sandbox that others can reach refuses it; one on loopback takes it, and its deliveries go nowhere.
    const hosted = await inProcessApp({ HOST: '0.0.0.0' })
    const refused = await hosted.call('webhook', { url: url.href })
    expect(refused.status).toBe(422)
    expect(refused.body.error.details[0].issue).toContain('public addresses')
    expect((await (await inProcessApp({ HOST: '127.0.0.1' })).call('webhook', { url: url.href })).status).toBe(200)
  })

  test('Redocly lints it clean: no error, no warning (redocly.yaml: the recommended rules, examples checked against their schemas)', async () => {
    const root = resolve(import.meta.dir, '../..')
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-openapi-'))
    try {
      writeFileSync(join(dir, 'openapi.json'), await (await fetchDocument(sandbox.app, 'http://sandbox.example.org')).text())
      const lint = spawnSync(join(root, 'node_modules', '.bin', 'redocly'), ['lint', join(dir, 'openapi.json'), '--format', 'summary'], {
        cwd: root,
        encoding: 'utf8',
      })
      expect(lint.status, lint.stdout + lint.stderr).toBe(0)
      // Redocly reports on stderr.
      expect(lint.stderr).toContain('Your API description is valid')
      expect(lint.stderr).not.toMatch(/You have \d+ warnings?/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

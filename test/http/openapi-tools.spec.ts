/**
 * @module The OpenAPI document as partners on other stacks meet it, proven by tools we did not write,
 * against a real server: a generated client (openapi-typescript + openapi-fetch, type-checked and
 * run), a validating proxy (Prism, request and response validation), a real browser on the docs page
 * (Chromium from @sparticuz/chromium), the packed typed client installed into a fresh project, and
 * the README's curl walk-through. Bun target only: the document is the same on every target.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { APIRequestContext } from '@playwright/test'
import { openBrowser } from './support/browser'
import { addDays, ages, API, expect, searchBody, sleep, test, tripFrom } from './support/client'
import { ROOT, testPort } from './support/server'

const BIN = join(ROOT, 'node_modules', '.bin')
const TMP = join(ROOT, '.tmp', 'openapi-tools')
const SPEC = '/api/sandbox/openapi.json'

/** The test helpers' paths (API in support/client.ts has the partner calls). */
const HELPERS = {
  clock: '/api/sandbox/test_helpers/clock',
  advance: '/api/sandbox/test_helpers/clock/advance',
  reissue: (policyRef: string) => `/api/sandbox/test_helpers/policy/${encodeURIComponent(policyRef)}/reissue_certificate`,
  insurerCancel: (policyRef: string) => `/api/sandbox/test_helpers/policy/${encodeURIComponent(policyRef)}/insurer_cancel`,
}

test.beforeEach(({}, info) => test.skip(info.project.name !== 'bun', 'the document is the same on every target; these tools run once'))

/** Runs a command to completion; its output is in the failure message when it fails. */
function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, encoding: 'utf8', timeout: 60_000 })
  expect(result.status, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0)
  return result
}

/** The document a server serves, saved for a tool that reads files. */
async function saveDocument(baseUrl: string, name: string): Promise<string> {
  const response = await fetch(`${baseUrl}${SPEC}`)
  expect(response.status).toBe(200)
  mkdirSync(TMP, { recursive: true })
  const path = join(TMP, `${name}.json`)
  writeFileSync(path, await response.text())
  return path
}

test('generated client: openapi-typescript types and openapi-fetch drive the whole flow, strict tsc passes', async ({ privateServer }) => {
  test.setTimeout(60_000)
  const server = await privateServer('openapi-client')
  const dir = join(ROOT, 'test', 'openapi', 'client')
  run(join(ROOT, 'test', 'tools', 'node_modules', '.bin', 'openapi-typescript'), [`${server.url}${SPEC}`, '-o', join(dir, 'schema.d.ts')])
  // The shared shapes are named schemas, and the answers refer to them: flow.ts types the chosen
  // plan and the read-back policy as components['schemas']['Plan'] and ['Policy'].
  const schema = readFileSync(join(dir, 'schema.d.ts'), 'utf8')
  const schemas = /^export interface components \{\n {4}schemas: \{\n([\s\S]*?)\n {4}\};/m.exec(schema)?.[1] ?? ''
  for (const name of ['Plan', 'Policy']) expect(schemas, `components.schemas.${name}`).toMatch(new RegExp(`^ {8}${name}: \\{$`, 'm'))
  expect(schema).toContain('plans: components["schemas"]["Plan"][];')
  run(join(BIN, 'tsc'), ['-p', join(dir, 'tsconfig.json')])
  const flow = run('bun', [join(dir, 'flow.ts'), server.url])
  expect(JSON.parse(flow.stdout.trim())).toMatchObject({ endorsements: 4, error: 'policy_not_found', refund: 'full_before_start' })
})

test('Postman collection: the Portman command docs/api.md shows converts the document with docs/portman-config.json, and newman runs every operation with its own examples: each 2xx, each answer valid against the document', async ({
  privateServer,
}) => {
  test.setTimeout(90_000)
  const server = await privateServer('portman')
  // The command as a partner pastes it from a checkout, only the address changed; contract tests per
  // operation (status 2xx, content type, JSON body, schema validation), and from the configuration
  // the one thing added: the policy_ref that issue answers (and a listed event_id), carried into the
  // calls whose path takes it.
  const command = readmeBlock('### Postman and newman', 'sh', 'docs/api.md').trim()
  expect(command).toContain('-c docs/portman-config.json')
  expect(command).toContain('--runNewman')
  mkdirSync(TMP, { recursive: true })
  const dir = mkdtempSync(join(TMP, 'portman-'))
  try {
    // From a folder of its own (Portman keeps its working files in ./tmp, the collection lands
    // there too), with docs/ beside it as in a checkout.
    symlinkSync(join(ROOT, 'docs'), join(dir, 'docs'))
    const report = join(dir, 'newman-report.json')
    // Added after the command as written: newman's JSON report, for the checks below. npx finds
    // the installed Portman (test/tools); offline, so the suite never downloads one.
    run(
      'bash',
      [
        '-c',
        `${command.replaceAll('http://localhost:3000', server.url)} "$@"`,
        'bash',
        '--newmanRunOptions',
        JSON.stringify({ reporters: ['cli', 'json'], reporter: { json: { export: report } } }),
      ],
      { cwd: dir, env: { npm_config_offline: 'true' } },
    )
    // One folder per tag, in the order of the document's tags (the paths' order within each); the base URL is the document's servers.
    const collection = JSON.parse(readFileSync(join(dir, 'collection.json'), 'utf8'))
    expect(collection.item.map((folder: any) => [folder.name, folder.item.length])).toEqual([
      ['Session', 1],
      ['Plans', 1],
      ['Policies', 6],
      ['Events', 4],
      ['Test helpers', 4],
      ['Request log', 3],
    ])
    expect(collection.variable).toContainEqual(expect.objectContaining({ key: 'baseUrl', value: server.url }))
    const { run: newman } = JSON.parse(readFileSync(report, 'utf8'))
    const calls = newman.executions.map((execution: any) => [execution.item.name, execution.response.code])
    expect(calls).toEqual([
      ['Create a session', 200],
      ['Search plans', 200],
      ['Issue a policy', 200],
      ['Modify a policy', 200],
      ['Read a policy', 200],
      ['Download the policy certificate', 200],
      ['Cancel a policy', 200],
      ['List the policies of this session', 200],
      ['Register the webhook endpoint', 200],
      ['Send a test event', 200],
      ['List events', 200],
      ['Resend an event', 200],
      ["Read the session's clock", 200],
      ["Advance the session's clock", 200],
      ['The insurer reissues the certificate', 200],
      ['The insurer cancels a policy', 200],
      ['List the calls of this session', 200],
      ['Read one call', 200],
      ["This session's console link", 200],
    ])
    const assertions = newman.executions.flatMap((execution: any) => execution.assertions ?? [])
    expect(assertions.filter((assertion: any) => /Schema is valid/.test(assertion.assertion))).toHaveLength(18) // every JSON answer
    expect(assertions.filter((assertion: any) => assertion.error).map((assertion: any) => assertion.assertion)).toEqual([])
    expect(newman.stats.assertions.failed).toBe(0)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

interface Step {
  label: string
  status: number
  code?: string
}

/** Starts Prism's validating proxy (`--errors`: a violation answers an error instead of passing). */
async function startPrism(document: string, upstream: string) {
  const port = await testPort()
  const child = spawn(join(BIN, 'prism'), ['proxy', document, upstream, '--errors', '-p', String(port), '-h', '127.0.0.1'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  // Until it answers or exits: its start-up (a Node process reading the whole document) took over
  // 30 s once on a loaded machine, so only the test's own time-out bounds it.
  for (; ; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`prism exited:\n${output}`)
    if (
      await fetch(`${url}/healthz`).then(
        () => true,
        () => false,
      )
    )
      break
  }
  return { url, output: () => output, stop: () => child.kill() }
}

/**
 * Sends one call through the proxy and records what came back: the sandbox's own answer, or a
 * Prism problem (a request or response violation).
 */
async function through(client: APIRequestContext, problems: string[], step: Step, path: string, data?: unknown, headers?: Record<string, string>) {
  const response = await client.post(path, { ...(data !== undefined && { data }), ...(headers && { headers }) })
  const text = await response.text()
  const problem = (response.headers()['content-type'] ?? '').includes('problem+json') || response.headers()['sl-violations'] !== undefined
  if (problem) problems.push(`${step.label}: ${response.status()} ${response.headers()['sl-violations'] ?? text.slice(0, 300)}`)
  else if (response.status() !== step.status) problems.push(`${step.label}: expected ${step.status}, got ${response.status()} ${text.slice(0, 200)}`)
  // The certificate answers its PDF, which Prism checks against the document as it passes.
  const pdf = !problem && response.headers()['content-type'] === 'application/pdf'
  if (pdf && !text.startsWith('%PDF-')) problems.push(`${step.label}: a PDF that does not start with %PDF-`)
  const body = problem || pdf ? undefined : JSON.parse(text)
  if (body && step.code && body.error?.code !== step.code) problems.push(`${step.label}: expected ${step.code}, got ${body.error?.code}`)
  return { ...body, cookie: /^sbx_session=[^;]*/.exec(response.headers()['set-cookie'] ?? '')?.[0] }
}

test('validating proxy: every operation, its success and its error statuses pass Prism with no violation', async ({ privateServer, newClient }) => {
  test.setTimeout(240_000)
  // One server with room for the whole tour; one with a 1-second session and an allowance of 2.
  const [roomy, tight] = await Promise.all([
    privateServer('prism-roomy', { SANDBOX_RATE_LIMIT: '1000' }),
    privateServer('prism-tight', { SANDBOX_RATE_LIMIT: '2', SANDBOX_SESSION_TTL_SECONDS: '1' }),
  ])
  const [roomyProxy, tightProxy] = await Promise.all([
    startPrism(await saveDocument(roomy.url, 'prism-roomy'), roomy.url),
    startPrism(await saveDocument(tight.url, 'prism-tight'), tight.url),
  ])
  const problems: string[] = []
  let calls = 0
  try {
    const client = await newClient({ baseURL: roomyProxy.url })
    const call = (step: Step, path: string, data?: unknown, headers?: Record<string, string>) => (calls++, through(client, problems, step, path, data, headers))
    const trip = tripFrom(10, 10)
    await call({ label: 'session, no body', status: 200 }, API.session)
    await call({ label: 'session, {}', status: 200 }, API.session, {})
    const search = await call({ label: 'search', status: 200 }, API.search, searchBody(trip, ages(34, 8), 'EUR'))
    const planId = search?.data.plans[0].plan_id ?? 'plan_missing'
    const issueBody = { plan_id: planId, trip, travellers: ages(8, 34), partner_reference: 'BK-1' }
    const issued = await call({ label: 'issue', status: 200 }, API.issue, issueBody, { 'idempotency-key': 'tour-1' })
    await call({ label: 'issue, replayed', status: 200 }, API.issue, issueBody, { 'idempotency-key': 'tour-1' })
    const ref = issued?.data.policy_ref ?? 'pol_sbx_0'
    const scenarios = [
      { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 5) },
      { scenario: 'shorten_end_date', new_end_date: addDays(trip.end_date, 2) },
      { scenario: 'correct_destination', destination_country: 'DE' },
      { scenario: 'correct_partner_reference', partner_reference: 'BK-2' },
    ]
    for (const body of scenarios) await call({ label: body.scenario, status: 200 }, API.modify(ref), body)

    // Errors that well-formed requests meet: the proxy passes them on, and checks the answers.
    await call(
      { label: 'issue, key reused', status: 422, code: 'idempotency_key_reused' },
      API.issue,
      { ...issueBody, partner_reference: 'BK-9' },
      { 'idempotency-key': 'tour-1' },
    )
    await call({ label: 'issue, unknown plan', status: 404, code: 'plan_not_found' }, API.issue, { ...issueBody, plan_id: 'plan_unknown' })
    await call({ label: 'issue, other ages', status: 409, code: 'plan_mismatch' }, API.issue, { ...issueBody, travellers: ages(40) })
    await call({ label: 'issue, e-mail reference', status: 422, code: 'pii_not_allowed' }, API.issue, { ...issueBody, partner_reference: 'ann@example.com' })
    await call({ label: 'search, 181 days', status: 422, code: 'trip_too_long' }, API.search, searchBody(tripFrom(10, 181)))
    await call({ label: 'search, 7 travellers', status: 422, code: 'too_many_travellers' }, API.search, searchBody(trip, ages(1, 2, 3, 4, 5, 6, 7)))
    await call({ label: 'search, unknown currency', status: 422, code: 'unsupported_currency' }, API.search, searchBody(trip, ages(30), 'XYZ'))
    await call(
      { label: 'search, no such date', status: 422, code: 'validation_failed' },
      API.search,
      searchBody({ ...trip, end_date: `${trip.end_date.slice(0, 4)}-02-30` }),
    )
    await call({ label: 'search, 17 KiB', status: 413, code: 'payload_too_large' }, API.search, searchBody(trip, ages(...Array(1700).fill(30))))
    const flood = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`x-filler-${index}`, 'x']))
    await call({ label: 'session, 101 headers', status: 431, code: 'headers_too_large' }, API.session, undefined, flood)
    await call({ label: 'modify, unknown policy', status: 404, code: 'policy_not_found' }, API.modify('pol_sbx_0000'), scenarios[0])
    await call({ label: 'modify, not later', status: 422, code: 'scenario_not_applicable' }, API.modify(ref), {
      scenario: 'extend_end_date',
      new_end_date: trip.start_date,
    })
    await call({ label: 'modify, 181 days', status: 422, code: 'trip_too_long' }, API.modify(ref), {
      scenario: 'extend_end_date',
      new_end_date: addDays(trip.start_date, 181),
    })

    // Read-back, the certificate (a PDF, not the envelope), and a short session.
    await call({ label: 'read', status: 200 }, API.read(ref))
    await call({ label: 'read, {}', status: 200 }, API.read(ref), {})
    await call({ label: 'certificate', status: 200 }, API.certificate(ref))
    await call({ label: 'read, unknown policy', status: 404, code: 'policy_not_found' }, API.read('pol_sbx_0000'))
    await call({ label: 'certificate, unknown policy', status: 404, code: 'policy_not_found' }, API.certificate('pol_sbx_0000'))

    // Test helpers: the clock into the trip (it starts in 10 days) and past its end (the corrections
    // made it end 2 days later), its refusals, and the insurer's side; every answer carries meta.session_clock.
    await call({ label: 'clock', status: 200 }, HELPERS.clock)
    await call({ label: 'clock, {}', status: 200 }, HELPERS.clock, {})
    await call({ label: 'advance, 12 days', status: 200 }, HELPERS.advance, { days: 12 })
    await call({ label: 'cancel preview, in the trip', status: 200 }, API.cancel(ref), { preview: true })
    await call({ label: 'advance, to a date', status: 200 }, HELPERS.advance, { to: addDays(trip.end_date, 3) })
    await call({ label: 'advance, to an instant', status: 200 }, HELPERS.advance, { to: `${addDays(trip.end_date, 4)}T12:30:00Z` })
    await call({ label: 'advance, backwards', status: 409, code: 'clock_backwards' }, HELPERS.advance, { to: trip.start_date })
    await call({ label: 'advance, too far', status: 422, code: 'clock_too_far' }, HELPERS.advance, { days: 730 })
    await call({ label: 'read, cover ended', status: 200 }, API.read(ref))
    await call({ label: 'modify, cover ended', status: 422, code: 'scenario_not_applicable' }, API.modify(ref), scenarios[0])
    await call({ label: 'reissue', status: 200 }, HELPERS.reissue(ref))
    await call({ label: 'reissue, unknown policy', status: 404, code: 'policy_not_found' }, HELPERS.reissue('pol_sbx_0000'))
    await call({ label: 'insurer cancel', status: 200 }, HELPERS.insurerCancel(ref))
    await call({ label: 'insurer cancel, again', status: 409, code: 'policy_cancelled' }, HELPERS.insurerCancel(ref))
    await call({ label: 'read, cancelled by the insurer', status: 200 }, API.read(ref))

    // Forced outcomes: the fault answers, each through the proxy on an endpoint where it can happen.
    const forced = (code: string) => ({ 'sandbox-outcome': code })
    await call({ label: 'forced upstream_unavailable', status: 503, code: 'upstream_unavailable' }, API.issue, issueBody, forced('upstream_unavailable'))
    await call({ label: 'forced upstream_invalid', status: 502, code: 'upstream_invalid' }, API.search, searchBody(trip), forced('upstream_invalid'))
    await call({ label: 'forced storage_unavailable', status: 503, code: 'storage_unavailable' }, API.modify(ref), scenarios[0], forced('storage_unavailable'))
    await call({ label: 'forced internal_error', status: 500, code: 'internal_error' }, API.certificate(ref), undefined, forced('internal_error'))
    await call({ label: 'forced rate_limited', status: 429, code: 'rate_limited' }, API.session, undefined, forced('rate_limited'))
    await call({ label: 'forced session_expired', status: 401, code: 'session_expired' }, API.read(ref), undefined, forced('session_expired'))
    await call({ label: 'session, 1 minute', status: 200 }, API.session, { lifetime_minutes: 1 })

    const short = await newClient({ baseURL: tightProxy.url })
    const shortCall = (step: Step, path: string, data?: unknown, headers?: Record<string, string>) => (
      calls++, through(short, problems, step, path, data, headers)
    )
    const opened = await shortCall({ label: 'session (tight)', status: 200 }, API.session)
    // Past the end the server reported; the client's jar still holds the cookie and sends it.
    await sleep(Date.parse(opened?.data?.expires_at ?? '') - Date.now() + 100)
    await shortCall({ label: 'search, session ended', status: 401, code: 'session_expired' }, API.search, searchBody(trip))
    await shortCall({ label: 'session (tight, 2nd)', status: 200 }, API.session)
    await shortCall({ label: 'session, allowance spent', status: 429, code: 'rate_limited' }, API.session)
  } finally {
    roomyProxy.stop()
    tightProxy.stop()
  }
  console.log(`prism: ${calls} calls, ${problems.length} problems`)
  expect(problems).toEqual([])
})

/**
 * The calls of the docs page's Try it out (Swagger UI's `<tag>-<operationId>`, a space in the tag an
 * underscore), in the order a partner makes them (the document's examples follow it): the clock is
 * advanced ten days, into the trip, before the cancel's preview, and the insurer cancels last.
 */
const TRY_IT_OUT = [
  { id: 'Session-createSession', path: API.session },
  { id: 'Plans-searchPlans', path: API.search },
  { id: 'Policies-issuePolicy', path: API.issue },
  { id: 'Policies-modifyPolicy', path: API.modify },
  { id: 'Policies-readPolicy', path: API.read },
  { id: 'Policies-downloadPolicyCertificate', path: API.certificate },
  { id: 'Test_helpers-readClock', path: HELPERS.clock },
  { id: 'Test_helpers-advanceClock', path: HELPERS.advance },
  { id: 'Policies-cancelPolicy', path: API.cancel },
  { id: 'Events-registerWebhook', path: '/api/sandbox/webhook' },
  { id: 'Events-sendTestEvent', path: '/api/sandbox/webhook/test' },
  { id: 'Events-listEvents', path: '/api/sandbox/events' },
  { id: 'Events-resendEvent', path: (eventId: string) => `/api/sandbox/events/${eventId}/resend` },
  { id: 'Test_helpers-reissuePolicyCertificate', path: HELPERS.reissue },
  { id: 'Test_helpers-insurerCancelPolicy', path: HELPERS.insurerCancel },
  { id: 'Policies-listPolicies', path: '/api/sandbox/policies' },
  { id: 'Request_log-listRequests', path: '/api/sandbox/requests' },
  { id: 'Request_log-readRequest', path: (requestId: string) => `/api/sandbox/requests/${requestId}` },
  { id: 'Request_log-openConsole', path: '/api/sandbox/console' },
] as const

/** The event types, each a section of the page's webhooks. */
const EVENT_TYPE_COUNT = 7

test('real browser: the docs page renders offline, and Try it out runs the whole flow with its pre-filled bodies unchanged', async ({ privateServer }) => {
  // 66–70 s alone on a 2-core machine; over 120 s once, beside the other worker's tests.
  test.setTimeout(240_000)
  const server = await privateServer('docs-browser')
  const browser = await openBrowser()
  try {
    const page = await browser.newPage()
    const consoleErrors: string[] = []
    const outside: string[] = []
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()))
    page.on('pageerror', (error) => consoleErrors.push(error.message))
    page.on('request', (request) => !request.url().startsWith(server.url) && outside.push(request.url()))
    const answers: { path: string; status: number; cookie: string | undefined; sent: string | null; body: any }[] = []
    page.on('response', async (response) => {
      if (response.request().method() !== 'POST') return
      const headers = await response.request().allHeaders()
      const pdf = response.headers()['content-type'] === 'application/pdf'
      answers.push({
        path: new URL(response.url()).pathname,
        status: response.status(),
        cookie: headers.cookie,
        sent: response.request().postData(),
        body: pdf ? 'application/pdf' : await response.json(),
      })
    })
    // The front door sends a browser to the docs page.
    await page.goto(server.url)
    expect(new URL(page.url()).pathname).toBe('/api/sandbox/docs')
    // Every operation, and the event types of the webhooks section.
    await expect(page.locator('.opblock')).toHaveCount(TRY_IT_OUT.length + EVENT_TYPE_COUNT)
    await expect(page.getByText('The policy.started event')).toBeVisible()
    await expect(page.getByText('The policy.cancelled event')).toBeVisible()
    // Nothing to authorize: the session cookie is HttpOnly, and the browser sends it by itself.
    await expect(page.locator('.btn.authorize')).toHaveCount(0)

    // The things typed in: the policy_ref that issue answered, and for a resend an event_id the list answered.
    const typed: Record<string, string> = {}
    for (const [index, call] of TRY_IT_OUT.entries()) {
      const operation = page.locator(`#operations-${call.id}`)
      await operation.locator('.opblock-summary').click()
      await operation.getByRole('button', { name: 'Try it out' }).click()
      for (const [name, value] of Object.entries(typed)) {
        const input = operation.locator(`tr[data-param-name="${name}"] input`)
        if (await input.count()) await input.fill(value)
      }
      await operation.getByRole('button', { name: 'Execute' }).click()
      // The certificate renders a PDF and the page then shows it: on a loaded machine, more than expect's 5 s.
      await expect(operation.locator('.live-responses-table tr.response .response-col_status')).toHaveText('200', { timeout: 30_000 })
      await expect.poll(() => answers.length).toBe(index + 1)
      if (call.path === API.issue) typed.policy_ref = answers[index]!.body.data.policy_ref
      if (call.id === 'Events-listEvents') typed.event_id = answers[index]!.body.data.events[0].id
      if (call.id === 'Request_log-listRequests') typed.request_id = answers[index]!.body.data.calls[0].request_id
      // Closed once answered (the certificate's stays open, for its download link below): Swagger UI
      // re-renders every open answer on each change, and with all of them open a step took 25 s.
      if (index !== 5) await operation.locator('.opblock-summary').click()
    }

    const [opened, searched, issued, modified, read, certificate, clock, advanced, cancelPreview, webhook, testEvent, events, , reissued, insurerCancelled] =
      answers
    expect(answers.map((answer) => [answer.path, answer.status])).toEqual(
      TRY_IT_OUT.map((call) => [
        typeof call.path === 'string'
          ? call.path
          : call.path(call.id === 'Events-resendEvent' ? typed.event_id! : call.id === 'Request_log-readRequest' ? typed.request_id! : typed.policy_ref!),
        200,
      ]),
    )
    expect(webhook!.body.data.secret).toMatch(/^whsec_/)
    // The advance passed the trip's start: policy.started is recorded then, dated at the start.
    expect(events!.body.data.events.map((event: { type: string }) => event.type)).toEqual([
      'policy.issued',
      'document.ready',
      'policy.endorsed',
      'policy.started',
      'webhook.test',
    ])
    expect(events!.body.data.events.at(-1).id).toBe(testEvent!.body.data.id)
    // The bodies went as the document pre-filled them: the search's plan is the one issue names.
    expect(JSON.parse(issued!.sent!).plan_id).toBe(searched!.body.data.plans[0].plan_id)
    expect(modified!.body.data).toMatchObject({ status: 'endorsed', endorsement: { sequence: 1, scenario: 'extend_end_date' } })
    expect(read!.body.data.endorsements).toHaveLength(1)
    expect(read!.body.data.coverage).toBe('upcoming')
    expect(certificate!.body).toBe('application/pdf')
    // The clock: real time until advanced; ten days on, inside the trip, and said so in every later answer's meta.
    expect(clock!.body.data.offset_seconds).toBe(0)
    expect(clock!.body.meta.session_clock).toBeUndefined()
    expect(JSON.parse(advanced!.sent!)).toEqual({ days: 10 })
    expect(advanced!.body.data).toMatchObject({ offset_seconds: 864_000, recorded_events: [{ type: 'policy.started', policy_ref: typed.policy_ref }] })
    expect(advanced!.body.data.today).toBe(addDays(clock!.body.data.today, 10))
    expect(JSON.parse(issued!.sent!).trip.start_date <= advanced!.body.data.today).toBe(true)
    for (const answer of answers.slice(answers.indexOf(advanced!)))
      expect(answer.body.meta.session_clock, answer.path).toMatchObject({ offset_seconds: 864_000 })
    expect(cancelPreview!.body.data).toMatchObject({ preview: true, status: 'endorsed', refund: { rule: 'pro_rata_unused_days' } })
    // The insurer's side: the certificate's second version, then its cancellation with the whole premium back.
    expect(reissued!.body.data.documents[0]).toMatchObject({ state: 'ready', version: 2 })
    expect(insurerCancelled!.body.data).toMatchObject({
      status: 'cancelled',
      cancelled_by: 'insurer',
      refund: { rule: 'full_insurer_cancellation', amount: reissued!.body.data.premium },
    })
    await expect(page.locator(`#operations-${TRY_IT_OUT[5].id} .live-responses-table a[download]`)).toHaveText(/Download file/)
    // Every call after the first sent the cookie the first set: one session throughout.
    for (const answer of answers.slice(1)) expect(answer.cookie).toMatch(/sbx_session=/)
    // Real time for the session's expiry, before and after the advance.
    for (const answer of [searched, issued, modified, read, advanced, insurerCancelled])
      expect(answer!.body.meta.session_expires_at).toBe(opened!.body.data.expires_at)
    expect(consoleErrors).toEqual([])
    expect(outside).toEqual([])
  } finally {
    await browser.close()
  }
})

/** The ```lang block that follows a heading of a Markdown file (the README by default). */
function readmeBlock(heading: string, lang: string, file = 'README.md', nth = 0): string {
  const readme = readFileSync(join(ROOT, file), 'utf8')
  const from = readme.indexOf(`\n${heading}\n`)
  expect(from, `${file} has "${heading}"`).toBeGreaterThan(-1)
  let start = from
  for (let skip = 0; skip <= nth; skip++) start = readme.indexOf(`\`\`\`${lang}\n`, start) + lang.length + 4
  return readme.slice(start, readme.indexOf('```', start))
}

/**
 * The two ways a partner's TypeScript project resolves a package: `tsc --init`'s default
 * (`module: nodenext`, compiled and run by Node) with the project's TypeScript 7, and bundler
 * resolution (run by Bun as is) with TypeScript 5.
 */
const PROJECTS = [
  { kind: 'nodenext', tsc: join(BIN, 'tsc'), tsconfig: (text: string) => text, run: ['node', 'example.js'] },
  {
    kind: 'bundler',
    tsc: join(ROOT, 'test', 'tools', 'node_modules', '.bin', 'tsc'),
    tsconfig: (text: string) => text.replace('"module": "nodenext"', '"module": "preserve", "noEmit": true'),
    run: ['bun', 'example.ts'],
  },
] as const

for (const project of PROJECTS) {
  test(`installed client (${project.kind}): the packed package installs without the server's dependencies, type-checks its README example and runs it`, async ({
    privateServer,
  }) => {
    test.setTimeout(120_000)
    const server = await privateServer(`client-${project.kind}`)
    mkdirSync(TMP, { recursive: true })
    const dir = mkdtempSync(join(TMP, `partner-${project.kind}-`))
    try {
      // The client README's two commands as it writes them, comments dropped. Its `npm run
      // build:client &&` is left out: `npm run build` built dist/client before this suite ran, and
      // building it again would empty the folder under the other installed-client test packing it.
      const [pack, install] = readmeBlock('## Install', 'sh', 'src/client/README.md')
        .trim()
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, ''))
      const packCommand = pack!.split(' && ').pop()!
      expect(packCommand).toMatch(/^npm pack /)
      // Run from the clone, as the README says; npm_config_pack_destination has npm write the
      // tarball into this test's folder, not the clone's root, where two runs' tarballs would meet.
      const packed = run('bash', ['-c', packCommand], { env: { npm_config_pack_destination: dir } })
        .stdout.trim()
        .split('\n')
        .pop()!
      // The tarball is the one the README names, and its install line takes its path.
      const named = /\/path\/to\/(\S+\.tgz)/.exec(install!)?.[1]
      expect(packed).toBe(named?.replace('<version>', JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version))
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'partner', private: true, type: 'module' }))
      // From the npm cache the suite's own install filled.
      run('bash', ['-c', `${install!.replace(`/path/to/${named}`, join(dir, packed))} --prefer-offline --no-audit --no-fund`], { cwd: dir })
      const installed = readFileSync(join(dir, 'package-lock.json'), 'utf8')
      for (const name of ['better-sqlite3', 'postgres', 'pdf-lib', 'swagger-ui-dist', '@elysiajs/openapi'])
        expect(installed).not.toContain(`node_modules/${name}"`)
      run(project.tsc, ['--init'], { cwd: dir })
      const tsconfig = project.tsconfig(readFileSync(join(dir, 'tsconfig.json'), 'utf8'))
      writeFileSync(join(dir, 'tsconfig.json'), tsconfig)
      const example = readmeBlock('## Example', 'ts', 'src/client/README.md')
      expect(example).toContain("createSandboxClient('http://localhost:3000')")
      writeFileSync(join(dir, 'example.ts'), example.replace('http://localhost:3000', server.url))
      // A body the server would refuse does not compile.
      writeFileSync(
        join(dir, 'wrong.ts'),
        `import { createSandboxClient } from 'travel-protection-sandbox-client'
await createSandboxClient('${server.url}').api.sandbox.plans.search.post({ trip: 'x', travellers: [{ age: 30, name: 'Ann' }] })\n`,
      )
      const refused = spawnSync(project.tsc, ['-p', '.', '--pretty', 'false'], { cwd: dir, encoding: 'utf8' })
      expect(refused.stdout).toMatch(/wrong\.ts\(2,\d+\): error TS\d+/)
      rmSync(join(dir, 'wrong.ts'))
      run(project.tsc, ['-p', '.'], { cwd: dir })
      // Plain text: Playwright sets FORCE_COLOR, and Bun would colour the values it prints.
      const output = run(project.run[0], [...project.run.slice(1)], { cwd: dir, env: { FORCE_COLOR: '0', NO_COLOR: '1' } }).stdout
      expect(output).toContain('upstream_unavailable')
      expect(output).toMatch(/endorsements: 1\b/)
      expect(output).toMatch(/certificateBytes: \d{4,}/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('README walk-through with curl: the script the README shows runs as pasted', async ({ privateServer }) => {
  const server = await privateServer('walkthrough')
  const script = readFileSync(join(ROOT, 'test', 'walkthrough.sh'), 'utf8')
  expect(script).toContain(readmeBlock('### Walk-through with curl', 'sh'))
  mkdirSync(TMP, { recursive: true })
  const dir = mkdtempSync(join(TMP, 'curl-'))
  try {
    const output = run('bash', [join(ROOT, 'test', 'walkthrough.sh')], { cwd: dir, env: { SANDBOX: server.url } }).stdout
    expect(output).toMatch(/"console_url":"http:\/\/[^"]+\/api\/sandbox\/console\/sbx_[0-9a-f]{20}\.[\w-]{43}"/)
    expect(output).toMatch(/^plan_id: plan_\w+$/m)
    expect(output).toMatch(/^policy_ref: pol_sbx_[0-9a-f]+$/m)
    expect(output).toContain('"status":"endorsed"')
    expect(output).toContain('"endorsements":[{"sequence":1,"scenario":"extend_end_date","field":"trip.end_date"')
    expect(output).toMatch(/^certificate: \d{4,} bytes$/m)
    expect(readFileSync(join(dir, 'certificate.pdf')).subarray(0, 5).toString('latin1')).toBe('%PDF-')
    expect(output).toMatch(/^HTTP\/1\.1 503 /m)
    expect(output).toMatch(/^retry-after: \d+\r?$/im)
    expect(output).toContain('"code":"upstream_unavailable"')
    // Ten days on, the trip (from day 5) has begun: its start is recorded, and the refund is pro rata.
    expect(output).toMatch(/"offset_seconds":864000,"recorded_events":\[\{"event_id":"evt_[0-9a-f]+","type":"policy.started"/)
    expect(output).toMatch(
      /"preview":true,"policy_ref":"pol_sbx_[0-9a-f]+","status":"endorsed","refund":\{"amount":[\d.]+,"currency":"EUR","rule":"pro_rata_unused_days","unused_days":10,"cover_days":16\}/,
    )
    expect(output).toMatch(/"status":"cancelled","refund":\{"amount":[\d.]+,"currency":"EUR","rule":"pro_rata_unused_days".*"cancelled_at":"/)
    expect(output).toMatch(/"session_clock":\{"now":"[^"]+","today":"\d{4}-\d{2}-\d{2}","offset_seconds":864000\}/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('README receiver: pasted in order after the walk-through, it verifies a real delivery and refuses a forged one', async ({ privateServer }) => {
  test.setTimeout(150_000)
  const server = await privateServer('readme-receiver')
  mkdirSync(TMP, { recursive: true })
  const dir = mkdtempSync(join(TMP, 'receiver-'))
  const port = await testPort()
  // The README's blocks in its order, in one shell: the walk-through (its session and helpers),
  // registering, the receiver saved and started with the secret, the test event. Only the
  // receiver's port moves from 4000 to a free one.
  const register = readmeBlock('### Receive signed events', 'sh')
  const start = readmeBlock('### Receive signed events', 'sh', 'README.md', 1)
  expect(register).toContain('localhost:4000')
  writeFileSync(join(dir, 'receiver.mjs'), readmeBlock('### Receive signed events', 'js'))
  const script = [readmeBlock('### Walk-through with curl', 'sh'), register.replace('localhost:4000', `localhost:${port}`), start].join('\n')
  const shell = spawn('bash', ['-c', script], { cwd: dir, detached: true, env: { ...process.env, SANDBOX: server.url, PORT: String(port) } })
  let output = ''
  shell.stdout!.on('data', (chunk) => (output += chunk))
  shell.stderr!.on('data', (chunk) => (output += chunk))
  try {
    // Pasted, the receiver may not listen yet when the test event goes: the retries (1, 5 and 30 s
    // later) deliver it then, so the wait covers the walk-through and three of them.
    await expect.poll(() => output, { timeout: 100_000 }).toMatch(/^verified \{"id":"evt_[0-9a-f]+","type":"webhook\.test"/m)
    // The test event the last curl printed is the one the receiver verified.
    const sent = /^(\{"ok":true,"mode":"\w+","request_id":"req_[0-9a-f]+","data":(\{"id":"evt_.*?\}),"meta":)/m.exec(output)
    expect(sent, output).not.toBeNull()
    expect(output).toContain(`verified ${sent![2]}`)
    expect(await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).then((r) => r.status)).toBe(400)
    await expect.poll(() => output).toMatch(/^REJECTED \{\}$/m)
  } finally {
    try {
      process.kill(-shell.pid!, 'SIGTERM') // the shell and the receiver it left running
    } catch {} // none of them is left
    rmSync(dir, { recursive: true, force: true })
  }
})

/**
 * @module The OpenAPI document, generated from the routes' own TypeBox schemas, with what schemas
 * cannot say added: optional bodies, the headers' names and rules, the certificate's PDF, and an
 * example of every request and answer (examples.ts).
 */
import { type AnyElysia } from 'elysia'
import { toOpenAPISchema } from '@elysiajs/openapi'
import { unwrapSchema } from '@elysiajs/openapi/openapi'
import type { Config } from '../../config'
import { spokenDuration } from '../../domain/rate-window'
import type { ErrorCode } from '../../errors'
import type { Mode } from '../../http/request-state'
import { HEADER_DOCS } from '../../http/headers-model'
import { PATHS } from '../../http/paths'
import type { Services } from '../services'
import { ADVANCE_DAYS, FLOW, exampleEnvelope, exampleFlow, type ExampleFlow, type FlowPath } from './examples'
import { EVENT_TYPES } from '../../domain/events'
import { MAX_CLOCK_AHEAD_DAYS } from '../../domain/session-clock'
import { RETRY_SCHEDULE } from '../events/delivery'
import { EventBody } from '../events/model'
import { withComponents } from './components'

/** The document's introduction, with the limits this server runs with. */
function description(config: Config): string {
  return `Test a travel-protection integration with no signup, no API key and no personal data.
Open an anonymous session, search normalised plans for a trip and traveller ages, issue a sandbox
policy against a returned plan, apply one of four correction scenarios to it, cancel it, and receive
signed events about it. Every example in this document is a call that works as shown, in the
document's order: session, search, issue, modify, read, certificate, then the session's clock read
and advanced ${ADVANCE_DAYS} days into the trip (Test helpers), the cancel's preview (pro rata then), the webhook
and events, the insurer's side, and last what the session holds: its policies and its request log
(type in the \`policy_ref\` that issue answers, for a resend an \`event_id\` the events list answers,
and for one logged call a \`request_id\` the log lists; the webhook's example URL reaches no one:
put your receiver's there).

The session is a cookie, \`sbx_session\` (HttpOnly): the first call without it opens a session and sets
it; send it back on later calls (a browser, or any client with a cookie jar, does so by itself).

Every answer is one envelope: \`ok\`, \`mode\`, \`request_id\`, \`data\` or \`error\`, and \`meta\`
(session expiry, the fair-use allowance, and the session's clock once advanced). Fair use: ${config.rateLimit} requests in any rolling
${spokenDuration(config.rateWindowSeconds)}, per session and per client network; the allowance is repeated in the IETF draft
\`RateLimit\` and \`RateLimit-Policy\` headers, and a refused call carries \`Retry-After\`. A session
lasts ${spokenDuration(config.sessionTtlSeconds)} from its creation; ask for a shorter one (\`lifetime_minutes\`) to test expiry.
Read a policy back, with its endorsement history, and download its certificate (a specimen PDF).

To test how your integration handles failures it cannot cause on demand, send \`Sandbox-Outcome: <code>\`
(listed per operation): the call fails exactly as that failure would, counts against the allowance,
and changes nothing; on issue it also forces an insurer's decline, a price change at bind or a late
certificate. \`Sandbox-Delay-Ms\` slows an answer, to test your time-outs.

Test helpers (\`/api/sandbox/test_helpers/…\`, calls no production API has) rehearse what happens
after the booking. Each session has a clock: real time until advanced, then ahead of it (at most
${MAX_CLOCK_AHEAD_DAYS} days), never back. Trip dates, refunds, which corrections remain, cover (\`coverage\`, with the
\`policy.started\` and \`policy.ended\` events), certificates and the times in answers and events follow
it; the session's expiry, fair use and webhook retries stay on real time, and once it was advanced
every answer's \`meta.session_clock\` says where it stands. The insurer's side of a simulation policy
comes on demand: it cancels (the whole premium back) or reissues the certificate.

Every call a session makes, refused ones included, is kept in its request log (\`POST /api/sandbox/requests\`):
what was sent and what was answered, with the testing headers, the newest 200, each body cut at 16 KiB,
and never personal data (a body refused as such keeps only its field paths). It is written behind: a
call is listed within about 200 ms. Print it when a test fails.

Events (see Webhooks) are listed by \`POST /api/sandbox/events\` and POSTed to the endpoint a session
registers, signed in \`Sandbox-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">\`
with the secret registration answers.

Sandbox artefacts never carry over to production; prices are indicative only.`
}

/** The certificate's success: the PDF, with the headers every sandbox answer carries. */
const PDF_ANSWER = {
  description: 'The specimen certificate. The same bytes for the same policy state.',
  headers: Object.fromEntries(
    Object.entries({
      'X-Request-Id': 'The request id (no envelope carries it here).',
      RateLimit: 'IETF draft: `"sandbox";r=<remaining>;t=<seconds until reset>`.',
      'RateLimit-Policy': 'IETF draft: `"sandbox";q=<limit>;w=<window seconds>`.',
      'Content-Disposition': '`attachment; filename="policy_certificate_<policy_ref>.pdf"`.',
    }).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
  ),
  content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
}

/** Every operation's `default`: a generated client gets one error type for any status. */
const ANY_ERROR = {
  description: 'Any error: the failure envelope (each status above lists the codes it carries).',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
}

interface Parameter {
  name: string
  in: string
  description?: string
  schema?: object
}
interface Answer {
  description?: string
  content?: Record<string, { schema?: object; example?: unknown }>
}
interface Operation {
  operationId?: string
  tags?: string[]
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Record<string, { example?: unknown; examples?: object }> }
  responses: Record<string, Answer>
}

/**
 * The generator sees the body step's global parser (http/steps/request-body.ts: a function that defers reading the body
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

/** Each call's name as a generated client gives its function, and the resource it is listed under. */
const NAMES: Record<FlowPath, readonly [operationId: string, tag: string]> = {
  [PATHS.session]: ['createSession', 'Session'],
  [PATHS.search]: ['searchPlans', 'Plans'],
  [PATHS.issue]: ['issuePolicy', 'Policies'],
  [PATHS.modify]: ['modifyPolicy', 'Policies'],
  [PATHS.read]: ['readPolicy', 'Policies'],
  [PATHS.certificate]: ['downloadPolicyCertificate', 'Policies'],
  [PATHS.clock]: ['readClock', 'Test helpers'],
  [PATHS.advanceClock]: ['advanceClock', 'Test helpers'],
  [PATHS.cancel]: ['cancelPolicy', 'Policies'],
  [PATHS.webhook]: ['registerWebhook', 'Events'],
  [PATHS.webhookTest]: ['sendTestEvent', 'Events'],
  [PATHS.events]: ['listEvents', 'Events'],
  [PATHS.resend]: ['resendEvent', 'Events'],
  [PATHS.reissueCertificate]: ['reissuePolicyCertificate', 'Test helpers'],
  [PATHS.insurerCancel]: ['insurerCancelPolicy', 'Test helpers'],
  [PATHS.policies]: ['listPolicies', 'Policies'],
  [PATHS.requestLog]: ['listRequests', 'Request log'],
  [PATHS.requestLogEntry]: ['readRequest', 'Request log'],
  [PATHS.console]: ['openConsole', 'Request log'],
}

/** The flow's calls in the order a partner makes them (examples.ts: the position is the call's number). */
const OPERATIONS = FLOW.map((path) => [path, ...NAMES[path]] as const)

const TAGS = [
  { name: 'Session', description: 'The anonymous session: a cookie that every later call sends back.' },
  { name: 'Plans', description: "Plans for a trip and the travellers' ages." },
  { name: 'Policies', description: 'Issue a policy against a plan, correct it, read it back, download its certificate, cancel it.' },
  { name: 'Events', description: "What happened to the session's policies, listed and POSTed, signed, to its webhook endpoint." },
  {
    name: 'Test helpers',
    description:
      "Calls with no production counterpart (the `test_helpers` prefix says so): the session's clock, read and advanced, and the " +
      "insurer's side of a policy on demand (it cancels, it reissues the certificate).",
  },
  {
    name: 'Request log',
    description:
      "The session's own calls as the sandbox received and answered them (the newest 200, bodies cut at 16 KiB, no personal data), " +
      'newest first, filtered and paged, or one by its `request_id`. Reading the log is not itself logged.',
  },
]

/** Calls whose body may be left out (an empty body is `{}`). */
const OPTIONAL_BODY = new Set<string>([
  PATHS.session,
  PATHS.read,
  PATHS.certificate,
  PATHS.cancel,
  PATHS.webhookTest,
  PATHS.events,
  PATHS.resend,
  PATHS.clock,
  PATHS.reissueCertificate,
  PATHS.insurerCancel,
  PATHS.policies,
  PATHS.requestLog,
  PATHS.requestLogEntry,
])

/** Adds the examples: the request of each call of the flow, and an envelope for each of its answers. */
function addExamples(operation: Operation, path: FlowPath, flow: ExampleFlow, config: Config, mode: Mode) {
  const call = FLOW.indexOf(path)
  const body = operation.requestBody!.content['application/json']!
  if (path === PATHS.modify) body.examples = flow.scenarios
  else if (path === PATHS.cancel) body.examples = flow.cancellations
  else if (path === PATHS.advanceClock) body.examples = flow.advances
  else body.example = flow.requests[path]
  for (const [status, answer] of Object.entries(operation.responses)) {
    const json = answer.content?.['application/json']
    if (!json) continue
    const data = (flow.data as Record<string, unknown>)[path]
    const code = status === '200' ? undefined : firstCode(answer)
    // An error's example is the same on every operation (as if after the flow), so that one answer
    // can be written once for all of them (components.ts).
    json.example = code ? exampleEnvelope(config, mode, flow, FLOW.length, { code }) : exampleEnvelope(config, mode, flow, call, { data })
  }
}

/** The first error code an answer's schema lists (its description names them in order). */
const firstCode = (answer: Answer) => /`([a-z_]+)`/.exec(answer.description ?? '')?.[1] as ErrorCode

/** A route's path as the document writes it: `/policy/{policy_ref}/read`. */
const templated = (path: string) => path.replace(/:(\w+)/g, '{$1}')

/**
 * An answer's schema as the route declares it. Elysia compiles a route's answer validators on its
 * first request and, doing so, sets `additionalProperties: false` on each answer's top-level schema,
 * in place (elysia/dist/schema.mjs, getSchemaValidator); the routes declare none there. Without this,
 * the document built after some calls (the next UTC day's, or any but the first app's in a process
 * where the certificate's module-level answers were compiled) differed from the first, and no longer
 * matched its components: 118 KB grew to 191 KB.
 */
function declared(operation: Operation): void {
  for (const answer of Object.values(operation.responses)) {
    const json = answer.content?.['application/json']
    if (!json?.schema || !('additionalProperties' in json.schema)) continue
    const { additionalProperties: _added, ...schema } = json.schema as Record<string, unknown>
    json.schema = schema
  }
}

/**
 * What the routes' schemas cannot say: optional bodies, the headers' proper names and rules, the
 * certificate's PDF, and the examples; the paths in the flow's order, which tools that run every
 * operation follow (the test helpers sit among the others: the clock is advanced before the cancel's
 * preview, and the insurer cancels last).
 */
function refine(paths: Record<string, Record<string, Operation>>, flow: ExampleFlow, config: Config, mode: Mode) {
  for (const [path, operationId, tag] of OPERATIONS) {
    const operation = paths[templated(path)]!.post!
    Object.assign(operation, { operationId, tags: [tag] })
    for (const parameter of operation.parameters ?? []) {
      const docs = HEADER_DOCS[parameter.name as keyof typeof HEADER_DOCS]
      if (parameter.in !== 'header' || !docs) continue
      Object.assign(parameter, { name: docs.name, description: docs.description, schema: { ...parameter.schema, ...docs.schema } })
    }
    if (OPTIONAL_BODY.has(path)) operation.requestBody!.required = false
    declared(operation)
    addExamples(operation, path, flow, config, mode)
  }
  paths[templated(PATHS.certificate)]!.post!.responses['200'] = PDF_ANSWER
  for (const [path] of OPERATIONS) paths[templated(path)]!.post!.responses.default = ANY_ERROR
  const ordered = Object.fromEntries(OPERATIONS.map(([path]) => [templated(path), paths[templated(path)]!]))
  return { ...ordered, ...paths }
}

/** What the sandbox POSTs to a session's webhook endpoint, one entry per event type (OpenAPI 3.1 `webhooks`). */
function webhooks(flow: ExampleFlow) {
  const example = flow.data[PATHS.webhookTest]
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `${type.replace(/[._](\w)/g, (_match, letter: string) => letter.toUpperCase())}Event`,
          tags: ['Events'],
          summary: `The ${type} event`,
          description:
            `POSTed to the registered endpoint; answer 2xx within 5 s, or it is attempted again: ${RETRY_SCHEDULE}. ` +
            'A resend delivers the same `id` again: drop repeats by `id`.',
          parameters: [
            {
              name: 'Sandbox-Signature',
              in: 'header',
              required: true,
              schema: { type: 'string' },
              description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the endpoint\'s secret>`; reject a `t` more than 5 minutes off.',
            },
            { name: 'Sandbox-Event-Id', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'Sandbox-Event-Type', in: 'header', required: true, schema: { type: 'string', enum: [type] } },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: unwrapSchema(EventBody), ...(type === 'webhook.test' && { example }) } } },
          responses: { 200: { description: 'Any 2xx: delivered. Anything else, or no answer within 5 s: attempted again.' } },
        },
      },
    ]),
  )
}

/** The OpenAPI document of every route the app has, with examples for the UTC day of `now`. */
export function openApiDocument(app: AnyElysia, version: string, services: Pick<Services, 'catalogue' | 'config' | 'insurer'>, now: number, hidden: string[]) {
  const { config } = services
  const { paths } = toOpenAPISchema(withJsonParser(app), { paths: hidden })
  const mode: Mode = services.insurer ? 'uat_gateway' : 'simulation'
  const flow = exampleFlow(services, now, mode)
  const named = withComponents(refine(paths as Record<string, Record<string, Operation>>, flow, config, mode) as never, webhooks(flow) as never)
  return {
    // 3.1.0 says what 3.1.2 does (patch versions only fix the text), and every common parser reads it.
    openapi: '3.1.0',
    info: { title: 'Travel protection sandbox', version, description: description(config) },
    tags: TAGS,
    ...named,
    // No credentials to present: the session cookie is set and sent back by the client itself.
    security: [],
  }
}

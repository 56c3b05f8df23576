/**
 * @module The request headers a route reads, as TypeBox schemas: the typed client offers them per
 * call, and the OpenAPI document lists them. Their rules are checked by the steps that read them
 * (forced-outcome.ts, policies/idempotency.ts), in the contract's order, so the schemas accept any
 * text where those steps answer with their own details.
 */
import { t } from 'elysia'
import { DELAY_SHAPE } from './delay'
import { literals } from './envelope-model'
import { FORCED_OUTCOMES_AT, type Route } from './forced-outcome'

/**
 * How the OpenAPI document names and describes each header (the generator lists the schemas'
 * lower-case names and drops a union's description), with the rules the document can state.
 */
export const HEADER_DOCS = {
  'sandbox-outcome': {
    name: 'Sandbox-Outcome',
    description:
      'Testing aid: the call fails exactly as this failure would (status, envelope, `Retry-After`; `session_expired` ' +
      'also clears the cookie). Checked after the rate limit and before the body, so it counts like any other call and ' +
      'changes nothing. Another value is `validation_failed`.',
    schema: {},
  },
  'sandbox-delay-ms': {
    name: 'Sandbox-Delay-Ms',
    description:
      'Testing aid for client time-outs: the answer waits this many milliseconds (0 to 10000, at most 5 digits) before it is sent. ' +
      'The call is done first: a client that gives up has still had it applied (retry with the same `Idempotency-Key`). ' +
      'Checked with `Sandbox-Outcome`, after the rate limit; another value is `validation_failed`.',
    schema: { pattern: DELAY_SHAPE.source },
  },
  'idempotency-key': {
    name: 'Idempotency-Key',
    description:
      'IETF idempotency-key draft: a repeat in this session with the same body answers the first result again ' +
      '(header `Idempotent-Replayed: true`); with another body it is `idempotency_key_reused`.',
    schema: { pattern: '^[!-~]{1,255}$', minLength: 1, maxLength: 255 },
  },
} as const

const outcomeHeader = <Path extends Route>(route: Path) => t.Optional(literals<(typeof FORCED_OUTCOMES_AT)[Path][number]>(FORCED_OUTCOMES_AT[route]))

const textHeader = t.Optional(t.String())

/** Headers of a route that reads only the testing aids (`Sandbox-Outcome`, `Sandbox-Delay-Ms`); any other header passes. */
export const outcomeHeaders = <Path extends Route>(route: Path) =>
  t.Object({ 'sandbox-outcome': outcomeHeader(route), 'sandbox-delay-ms': textHeader }, { additionalProperties: true })

/** Headers of a route that also takes an `Idempotency-Key`. */
export const idempotentHeaders = <Path extends Route>(route: Path) =>
  t.Object({ 'sandbox-outcome': outcomeHeader(route), 'sandbox-delay-ms': textHeader, 'idempotency-key': textHeader }, { additionalProperties: true })

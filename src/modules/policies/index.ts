/**
 * @module Routes: `POST /api/sandbox/policy/new`, `…/{policy_ref}/modify`, `…/{policy_ref}/cancel`,
 * `…/{policy_ref}/read` and `…/{policy_ref}/documents/policy_certificate` (the PDF).
 */
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import { success } from '../../http/envelope'
import type { RequestState } from '../../http/request-state'
import { PATHS } from '../../http/paths'
import type { Services } from '../services'
import type { SessionAdmission } from '../../http/steps/admission'
import { NoFields, responses } from '../../http/envelope-model'
import { idempotentHeaders, outcomeHeaders } from '../../http/headers-model'
import { certificateInput, renderCertificate } from './certificate'
import { CancelBody, CancelData, IssueBody, ModifyBody, ModifyData, PoliciesBody, PoliciesData, PolicyData, PolicyParams, ReadData } from './model'
import { listPolicies } from './list'
import { policyView, readPolicy } from './read'
import { issuePolicy } from './issue'
import { modifyPolicy } from './modify'
import { cancelPolicy } from './cancel'
import type { Answer, Caller } from './operation'
import { ApiError } from '../../errors'
import { FORCED_OUTCOME_HEADER } from '../../http/forced-outcome'
import { isBusinessOutcome } from '../../domain/business-outcomes'
import { isoTimestamp } from '../../domain/dates'
import { businessNow } from '../../domain/session-clock'

const REPLAYED = { 'idempotent-replayed': 'true' }

/** The certificate's errors are the envelope; its success is the PDF's bytes (the document says application/pdf, docs.ts). */
const { 200: _json, ...certificateErrors } = responses(ReadData, ['policy_not_found', 'document_not_ready'])
const CertificateResponses = { ...certificateErrors, 200: Type.Uint8Array({ description: 'The specimen certificate, application/pdf.' }) }

const caller = (sandbox: RequestState, request: Request): Caller => {
  const outcome = request.headers.get(FORCED_OUTCOME_HEADER)
  return {
    session: sandbox.session!,
    sessionToken: sandbox.sessionToken!,
    requestId: sandbox.requestId,
    idempotencyKey: request.headers.get('idempotency-key'),
    outcome: isBusinessOutcome(outcome) ? outcome : null,
  }
}

/** The envelope of an operation's answer, marked `Idempotent-Replayed` when it repeats the first one. */
function answer<Result extends { data: Answer<unknown>; replayed: boolean }>(sandbox: RequestState, headers: object, result: Result) {
  if (result.replayed) Object.assign(headers, REPLAYED)
  sandbox.mode = result.data.mode
  return success(sandbox, result.data.data as Result['data']['data'])
}

/** `document_not_ready` until the certificate's `ready_at`, with the seconds left as `Retry-After`. */
function refuseUntilReady(readyAt: number, now: number): void {
  if (now >= readyAt) return
  throw new ApiError('document_not_ready', { values: { readyAt: isoTimestamp(readyAt) }, retryAfter: Math.ceil((readyAt - now) / 1000) })
}

export function policyRoutes(admission: SessionAdmission, services: Services) {
  return new Elysia({ name: 'policy-routes' })
    .use(admission)
    .post(PATHS.issue, async ({ sandbox, body, request, set }) => answer(sandbox, set.headers, await issuePolicy(services, caller(sandbox, request), body)), {
      body: IssueBody,
      headers: idempotentHeaders(PATHS.issue),
      response: responses(PolicyData, [
        'trip_too_long',
        'too_many_travellers',
        'plan_not_found',
        'plan_mismatch',
        'price_changed',
        'insurer_declined',
        'idempotency_key_reused',
        'clock_not_movable',
        'upstream_unavailable',
        'upstream_invalid',
      ]),
      detail: {
        summary: 'Issue a policy',
        description:
          'Issues a sandbox policy against a plan from a search in this session. Send `Idempotency-Key` to make retries safe. ' +
          "`Sandbox-Outcome: insurer_declined`, `price_changed` or `document_pending` answers as the insurer's decline, a price change at bind " +
          'or a late certificate would, after every other check.',
      },
    })
    .post(
      PATHS.modify,
      async ({ sandbox, body, params, request, set }) =>
        answer(sandbox, set.headers, await modifyPolicy(services, caller(sandbox, request), params.policy_ref, body)),
      {
        body: ModifyBody,
        params: PolicyParams,
        headers: idempotentHeaders(PATHS.modify),
        response: responses(ModifyData, [
          'trip_too_long',
          'policy_not_found',
          'policy_cancelled',
          'scenario_not_applicable',
          'idempotency_key_reused',
          'upstream_unavailable',
          'upstream_invalid',
        ]),
        detail: {
          summary: 'Modify a policy',
          description:
            'Applies one correction scenario. Send `Idempotency-Key` to make retries safe. With `"preview": true`, answers what the ' +
            'correction would do (the changed field, the new premium, `premium_change`) and changes nothing.',
        },
      },
    )
    .post(
      PATHS.cancel,
      async ({ sandbox, body, params, request, set }) =>
        answer(sandbox, set.headers, await cancelPolicy(services, caller(sandbox, request), params.policy_ref, body)),
      {
        body: CancelBody,
        params: PolicyParams,
        headers: idempotentHeaders(PATHS.cancel),
        response: responses(CancelData, ['policy_not_found', 'policy_cancelled', 'idempotency_key_reused', 'upstream_unavailable', 'upstream_invalid']),
        detail: {
          summary: 'Cancel a policy',
          description:
            'Cancels the policy with a refund: the whole premium before the start date, the unused whole days pro rata from the start ' +
            "date, nothing after the end date, each on the session's clock (advance it with the test helpers to rehearse a cancel " +
            'mid-trip or after it). With `{"preview": true}`, answers the refund and changes nothing. ' +
            'Send `Idempotency-Key` to make retries safe.',
        },
      },
    )
    .post(
      PATHS.read,
      async ({ sandbox, params }) => {
        const { policy, endorsements } = await readPolicy(services, sandbox.session!, params.policy_ref)
        sandbox.mode = policy.source
        return success(sandbox, policyView(services, policy, endorsements, businessNow(services.clock(), sandbox.session!)))
      },
      {
        body: NoFields,
        params: PolicyParams,
        headers: outcomeHeaders(PATHS.read),
        response: responses(ReadData, ['policy_not_found']),
        detail: {
          summary: 'Read a policy',
          description:
            'The policy as it stands (current trip, partner_reference, status, premium, documents, its cancellation and refund) ' +
            'and every endorsement, oldest first. Changes nothing.',
        },
      },
    )
    .post(
      PATHS.certificate,
      async ({ sandbox, params, set }) => {
        const { policy, endorsements } = await readPolicy(services, sandbox.session!, params.policy_ref)
        const now = businessNow(services.clock(), sandbox.session!)
        refuseUntilReady(policy.documentReadyAt, now)
        const pdf = await renderCertificate(certificateInput(services, policyView(services, policy, endorsements, now), policy.product))
        Object.assign(set.headers, {
          'content-type': 'application/pdf',
          'content-disposition': `attachment; filename="policy_certificate_${policy.ref}.pdf"`,
        })
        return pdf
      },
      {
        body: NoFields,
        params: PolicyParams,
        headers: outcomeHeaders(PATHS.certificate),
        response: CertificateResponses,
        detail: {
          summary: 'Download the policy certificate',
          description:
            'The `policy_certificate` document as a PDF: a specimen marked SPECIMEN — SANDBOX — NOT INSURANCE on every page, ' +
            '(and CANCELLED, with the refund, once cancelled), the same bytes for the same policy state. `document_not_ready` (with ' +
            '`Retry-After`) while the certificate is `pending`. Errors are the JSON envelope.',
        },
      },
    )
    .post(PATHS.policies, async ({ sandbox, body }) => success(sandbox, await listPolicies(services, sandbox.session!, body)), {
      body: PoliciesBody,
      headers: outcomeHeaders(PATHS.policies),
      response: responses(PoliciesData, []),
      detail: {
        summary: 'List the policies of this session',
        description: "Every policy of the session, newest first: status, cover on the session's clock, premium, and its refund once cancelled.",
      },
    })
}

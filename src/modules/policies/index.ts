/**
 * @module Routes: `POST /api/sandbox/policy/new`, `…/{policy_ref}/modify`, `…/{policy_ref}/read` and
 * `…/{policy_ref}/documents/policy_certificate` (the PDF).
 */
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import { success, type RequestState } from '../../http/envelope'
import { PATHS } from '../../http/paths'
import type { Services } from '../../services'
import type { SessionGuard } from '../session/guard'
import { responses } from '../../http/envelope-model'
import { idempotentHeaders, outcomeHeaders } from '../../http/headers-model'
import { certificateInput, renderCertificate } from './certificate'
import { IssueBody, ModifyBody, ModifyData, PolicyData, PolicyParams, ReadData } from './model'
import { policyView, readPolicy } from './read'
import { issuePolicy, modifyPolicy, type Caller } from './service'

const REPLAYED = { 'idempotent-replayed': 'true' }

/** Read-back and the certificate take no fields: an empty body or `{}`. */
const NoFields = Type.Object({}, { additionalProperties: false, 'x-issue': 'must be an empty object' })

/** The certificate's errors are the envelope; its success is the PDF's bytes (the document says application/pdf, docs.ts). */
const { 200: _json, ...certificateErrors } = responses(ReadData, ['policy_not_found'])
const CertificateResponses = { ...certificateErrors, 200: Type.Uint8Array({ description: 'The specimen certificate, application/pdf.' }) }

const caller = (sandbox: RequestState, request: Request): Caller => ({
  session: sandbox.session!,
  sessionToken: sandbox.sessionToken!,
  requestId: sandbox.requestId,
  idempotencyKey: request.headers.get('idempotency-key'),
})

export function policyRoutes(guard: SessionGuard, services: Services) {
  return new Elysia({ name: 'policy-routes' })
    .use(guard)
    .post(
      PATHS.issue,
      async ({ sandbox, body, request, set }) => {
        const { data, replayed } = await issuePolicy(services, caller(sandbox, request), body)
        if (replayed) Object.assign(set.headers, REPLAYED)
        sandbox.mode = data.mode
        return success(sandbox, data.data)
      },
      {
        body: IssueBody,
        headers: idempotentHeaders(PATHS.issue),
        response: responses(PolicyData, ['trip_too_long', 'too_many_travellers', 'plan_not_found', 'plan_mismatch', 'idempotency_key_reused', 'upstream_unavailable', 'upstream_invalid']),
        detail: { summary: 'Issue a policy', description: 'Issues a sandbox policy against a plan from a search in this session. Send `Idempotency-Key` to make retries safe.' },
      },
    )
    .post(
      PATHS.modify,
      async ({ sandbox, body, params, request, set }) => {
        const { data, replayed } = await modifyPolicy(services, caller(sandbox, request), params.policy_ref, body)
        if (replayed) Object.assign(set.headers, REPLAYED)
        sandbox.mode = data.mode
        return success(sandbox, data.data)
      },
      {
        body: ModifyBody,
        params: PolicyParams,
        headers: idempotentHeaders(PATHS.modify),
        response: responses(ModifyData, ['trip_too_long', 'policy_not_found', 'scenario_not_applicable', 'idempotency_key_reused', 'upstream_unavailable', 'upstream_invalid']),
        detail: { summary: 'Modify a policy', description: 'Applies one correction scenario. Send `Idempotency-Key` to make retries safe.' },
      },
    )
    .post(
      PATHS.read,
      async ({ sandbox, params }) => {
        const { policy, endorsements } = await readPolicy(services, sandbox.session!, params.policy_ref)
        sandbox.mode = policy.source
        return success(sandbox, policyView(services, policy, endorsements))
      },
      {
        body: NoFields,
        params: PolicyParams,
        headers: outcomeHeaders(PATHS.read),
        response: responses(ReadData, ['policy_not_found']),
        detail: { summary: 'Read a policy', description: 'The policy as it stands (current trip, partner_reference, status, premium, documents) and every endorsement, oldest first. Changes nothing.' },
      },
    )
    .post(
      PATHS.certificate,
      async ({ sandbox, params, set }) => {
        const { policy, endorsements } = await readPolicy(services, sandbox.session!, params.policy_ref)
        const pdf = await renderCertificate(certificateInput(services, policyView(services, policy, endorsements), policy.product))
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
          description: 'The `policy_certificate` document as a PDF: a specimen marked SPECIMEN — SANDBOX — NOT INSURANCE on every page, '
            + 'the same bytes for the same policy state. Errors are the JSON envelope.',
        },
      },
    )
}

/** @module Routes: `POST /api/sandbox/policy/new` and `POST /api/sandbox/policy/{policy_ref}/modify`. */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { PATHS } from '../../http/paths'
import type { Pipeline } from '../../http/pipeline'
import type { Services } from '../../services'
import { fingerprint, idempotencyKey, once } from './idempotency'
import { responses } from '../../http/envelope-model'
import { IssueBody, ModifyBody, ModifyData, ModifyParams, PolicyData } from './model'
import { issuePolicy, modifyPolicy } from './service'

const REPLAYED = { 'idempotent-replayed': 'true' }

export function policyRoutes(pipeline: Pipeline, services: Services) {
  return new Elysia({ name: 'policy-routes' })
    .use(pipeline)
    .post(
      PATHS.issue,
      ({ sandbox, body, request, set }) => {
        const sessionId = sandbox.session!.id
        const { data, replayed } = once(services, sessionId, idempotencyKey(request.headers), fingerprint('issue', body), () =>
          issuePolicy(services, sessionId, body),
        )
        if (replayed) Object.assign(set.headers, REPLAYED)
        return success(sandbox, data)
      },
      {
        body: IssueBody,
        response: responses(PolicyData, ['trip_too_long', 'too_many_travellers', 'plan_not_found', 'plan_mismatch', 'idempotency_key_reused', 'idempotency_in_progress']),
        detail: { summary: 'Issue a policy', description: 'Issues a sandbox policy against a plan from a search in this session. Send `Idempotency-Key` to make retries safe.' },
      },
    )
    .post(
      PATHS.modify,
      ({ sandbox, body, params, request, set }) => {
        const sessionId = sandbox.session!.id
        const print = fingerprint(`modify ${params.policy_ref}`, body)
        const { data, replayed } = once(services, sessionId, idempotencyKey(request.headers), print, () =>
          modifyPolicy(services, sessionId, params.policy_ref, body),
        )
        if (replayed) Object.assign(set.headers, REPLAYED)
        return success(sandbox, data)
      },
      {
        body: ModifyBody,
        params: ModifyParams,
        response: responses(ModifyData, ['trip_too_long', 'policy_not_found', 'scenario_not_applicable', 'idempotency_key_reused', 'idempotency_in_progress']),
        detail: { summary: 'Modify a policy', description: 'Applies one correction scenario. Send `Idempotency-Key` to make retries safe.' },
      },
    )
}

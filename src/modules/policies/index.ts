/** @module Routes: `POST /api/sandbox/policy/new` and `POST /api/sandbox/policy/{policy_ref}/modify`. */
import { Elysia } from 'elysia'
import { success, type RequestState } from '../../http/envelope'
import { PATHS } from '../../http/paths'
import type { Pipeline } from '../../http/pipeline'
import type { Services } from '../../services'
import { responses } from '../../http/envelope-model'
import { IssueBody, ModifyBody, ModifyData, ModifyParams, PolicyData } from './model'
import { issuePolicy, modifyPolicy, type Caller } from './service'

const REPLAYED = { 'idempotent-replayed': 'true' }

const caller = (sandbox: RequestState, request: Request): Caller => ({
  session: sandbox.session!,
  requestId: sandbox.requestId,
  headers: request.headers,
})

export function policyRoutes(pipeline: Pipeline, services: Services) {
  return new Elysia({ name: 'policy-routes' })
    .use(pipeline)
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
        response: responses(PolicyData, ['trip_too_long', 'too_many_travellers', 'plan_not_found', 'plan_mismatch', 'idempotency_key_reused', 'idempotency_in_progress']),
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
        params: ModifyParams,
        response: responses(ModifyData, ['trip_too_long', 'policy_not_found', 'scenario_not_applicable', 'idempotency_key_reused', 'idempotency_in_progress']),
        detail: { summary: 'Modify a policy', description: 'Applies one correction scenario. Send `Idempotency-Key` to make retries safe.' },
      },
    )
}

/**
 * @module Routes: `POST /api/sandbox/requests` (the session's calls, newest first) and
 * `POST /api/sandbox/requests/{request_id}` (one of them). Reading the log is not itself logged.
 */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { NoFields, responses } from '../../http/envelope-model'
import { outcomeHeaders } from '../../http/headers-model'
import { PATHS } from '../../http/paths'
import type { SessionAdmission } from '../../http/steps/admission'
import type { Services } from '../services'
import { CallModel, RequestLogBody, RequestLogData, RequestParams } from './model'
import { findCall, listCalls } from './service'

export function requestLogRoutes(admission: SessionAdmission, services: Services) {
  return new Elysia({ name: 'request-log-routes' })
    .use(admission)
    .post(PATHS.requestLog, async ({ sandbox, body }) => success(sandbox, await listCalls(services, sandbox.session!, body)), {
      body: RequestLogBody,
      headers: outcomeHeaders(PATHS.requestLog),
      response: responses(RequestLogData, []),
      detail: {
        summary: 'List the calls of this session',
        description:
          'Every call the session made (admitted or refused: 4xx, 429), newest first: request_id, time, path, status, error code, ' +
          'duration, the testing headers, the body sent and the envelope answered (each cut at 16 KiB). The newest 200 are kept, ' +
          'as long as the session. A body refused as personal data is not kept (only its field paths). Reading the log is not logged.',
      },
    })
    .post(PATHS.requestLogEntry, async ({ sandbox, params }) => success(sandbox, await findCall(services, sandbox.session!, params.request_id)), {
      body: NoFields,
      params: RequestParams,
      headers: outcomeHeaders(PATHS.requestLogEntry),
      response: responses(CallModel, ['request_not_found']),
      detail: { summary: 'Read one call', description: 'The call with this `request_id` (your own log printed it, or `X-Request-Id`).' },
    })
}

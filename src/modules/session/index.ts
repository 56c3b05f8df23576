/** @module Route: `POST /api/sandbox/session` creates a fresh anonymous session. */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { PATHS } from '../../http/paths'
import type { Pipeline } from '../../http/pipeline'
import type { Services } from '../../services'
import { responses } from '../../http/envelope-model'
import { SessionBody, SessionData } from './model'
import { sessionPayload } from './service'

export function sessionRoutes(pipeline: Pipeline, services: Services) {
  // The pipeline already created the session (explicit creation ignores any cookie sent).
  return new Elysia({ name: 'session-routes' })
    .use(pipeline)
    .post(PATHS.session, ({ sandbox }) => success(sandbox, sessionPayload(sandbox.session!, services.config)), {
      body: SessionBody,
      response: responses(SessionData, []),
      detail: { summary: 'Create a session', description: 'Always opens a fresh anonymous session and sets the `sbx_session` cookie.' },
    })
}

/** @module Route: `POST /api/sandbox/plans/search`. */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { PATHS } from '../../http/paths'
import type { Pipeline } from '../../http/pipeline'
import type { Services } from '../../services'
import { responses } from '../../http/envelope-model'
import { SearchBody, SearchData } from './model'
import { searchPlans } from './service'

export function planRoutes(pipeline: Pipeline, services: Services) {
  return new Elysia({ name: 'plan-routes' })
    .use(pipeline)
    .post(PATHS.search, async ({ sandbox, body }) => {
      const { mode, data } = await searchPlans(services, sandbox.session!.id, body, sandbox.requestId)
      sandbox.mode = mode
      return success(sandbox, data)
    }, {
      body: SearchBody,
      response: responses(SearchData, ['trip_too_long', 'too_many_travellers', 'unsupported_currency']),
      detail: { summary: 'Search plans', description: 'Normalised plans for a trip and traveller ages; recorded against the session for issue.' },
    })
}

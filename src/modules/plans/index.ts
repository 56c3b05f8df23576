/** @module Route: `POST /api/sandbox/plans/search`. */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { PATHS } from '../../http/paths'
import type { Services } from '../services'
import type { SessionAdmission } from '../../http/steps/admission'
import { responses } from '../../http/envelope-model'
import { outcomeHeaders } from '../../http/headers-model'
import { SearchBody, SearchData } from './model'
import { searchPlans } from './service'

export function planRoutes(admission: SessionAdmission, services: Services) {
  return new Elysia({ name: 'plan-routes' }).use(admission).post(
    PATHS.search,
    async ({ sandbox, body }) => {
      const { mode, data } = await searchPlans(services, { session: sandbox.session!, requestId: sandbox.requestId }, body)
      sandbox.mode = mode
      return success(sandbox, data)
    },
    {
      body: SearchBody,
      headers: outcomeHeaders(PATHS.search),
      response: responses(SearchData, ['trip_too_long', 'too_many_travellers', 'unsupported_currency', 'upstream_invalid']),
      detail: { summary: 'Search plans', description: 'Normalised plans for a trip and traveller ages; recorded against the session for issue.' },
    },
  )
}

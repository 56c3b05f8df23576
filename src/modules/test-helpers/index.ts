/**
 * @module Routes: test helpers, calls with no production counterpart (the `test_helpers` prefix says
 * so, as Stripe's does): `POST /api/sandbox/test_helpers/clock`, `…/clock/advance`, and the insurer's
 * side of a policy, `…/test_helpers/policy/{policy_ref}/insurer_cancel` and `…/reissue_certificate`.
 */
import { Elysia, t } from 'elysia'
import { success } from '../../http/envelope'
import { ClockModel, NoFields, responses } from '../../http/envelope-model'
import { outcomeHeaders } from '../../http/headers-model'
import { PATHS } from '../../http/paths'
import type { SessionAdmission } from '../../http/steps/admission'
import { CancelData, PolicyParams, ReadData } from '../policies/model'
import type { Services } from '../services'
import { AdvanceBody, RecordedEvents } from './model'
import { advanceClock, insurerCancel, readClock, reissueCertificate } from './service'

/** The clock an advance set, and the cover events it recorded. */
const AdvanceData = t.Object({ ...ClockModel.properties, ...RecordedEvents })

export function testHelperRoutes(admission: SessionAdmission, services: Services) {
  return new Elysia({ name: 'test-helper-routes' })
    .use(admission)
    .post(PATHS.clock, ({ sandbox }) => success(sandbox, readClock(sandbox.admittedAt, sandbox.session!)), {
      body: NoFields,
      headers: outcomeHeaders(PATHS.clock),
      response: responses(ClockModel, []),
      detail: {
        summary: "Read the session's clock",
        description:
          "The session's business time: real time until advanced, then ahead of it. Trip dates, refunds, cover and the times in answers " +
          'and events follow it; the session expiry, the fair-use window and webhook retries stay on real time.',
      },
    })
    .post(PATHS.advanceClock, async ({ sandbox, body }) => success(sandbox, await advanceClock(services, sandbox.session!, sandbox.admittedAt, body)), {
      body: AdvanceBody,
      headers: outcomeHeaders(PATHS.advanceClock),
      response: responses(AdvanceData, ['clock_backwards', 'clock_too_far', 'clock_not_movable']),
      detail: {
        summary: "Advance the session's clock",
        description:
          'Moves this session\'s clock forward by `{"days": n}` or to `{"to": "YYYY-MM-DD"}` (that day\'s start, UTC) or an instant, ' +
          'at most 730 days ahead of real time, never back. Records the cover events it passes (`policy.started`, `policy.ended`), in ' +
          'date order, and delivers them like any other. Other sessions are not affected. Refused (`clock_not_movable`) in a session ' +
          'holding a policy the test insurer issued (`uat_gateway`), whose clock cannot be moved.',
      },
    })
    .post(PATHS.insurerCancel, async ({ sandbox, params }) => success(sandbox, await insurerCancel(services, sandbox.session!, params.policy_ref)), {
      body: NoFields,
      params: PolicyParams,
      headers: outcomeHeaders(PATHS.insurerCancel),
      response: responses(CancelData, ['policy_not_found', 'policy_cancelled', 'insurer_side_unavailable']),
      detail: {
        summary: 'The insurer cancels a policy',
        description:
          'What an insurer-initiated cancellation does: the policy is cancelled with the whole premium refunded ' +
          '(`full_insurer_cancellation`), and `policy.cancelled` says `"cancelled_by": "insurer"`. Simulation policies only.',
      },
    })
    .post(PATHS.reissueCertificate, async ({ sandbox, params }) => success(sandbox, await reissueCertificate(services, sandbox.session!, params.policy_ref)), {
      body: NoFields,
      params: PolicyParams,
      headers: outcomeHeaders(PATHS.reissueCertificate),
      response: responses(ReadData, ['policy_not_found', 'policy_cancelled', 'insurer_side_unavailable']),
      detail: {
        summary: 'The insurer reissues the certificate',
        description:
          "The certificate's next version (`documents[0].version`), ready at once, and `document.ready` again. Answers the policy " +
          'as read-back shows it. Simulation policies only.',
      },
    })
}

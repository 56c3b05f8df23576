/**
 * @module Routes: `POST /api/sandbox/events` (the session's events, oldest first), `…/events/{event_id}/resend`,
 * `POST /api/sandbox/webhook` (register, replace or remove the endpoint) and `…/webhook/test`.
 */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { NoFields, responses } from '../../http/envelope-model'
import { outcomeHeaders } from '../../http/headers-model'
import { PATHS } from '../../http/paths'
import type { Services } from '../services'
import type { SessionAdmission } from '../../http/steps/admission'
import { RETRY_SCHEDULE } from './delivery'
import { EventBody, EventParams, EventsBody, EventsData, ResendData, WebhookBody, WebhookData } from './model'
import { listEvents, registerWebhook, resendEvent, sendTestEvent } from './service'

export function eventRoutes(admission: SessionAdmission, services: Services) {
  return new Elysia({ name: 'event-routes' })
    .use(admission)
    .post(PATHS.webhook, async ({ sandbox, body }) => success(sandbox, await registerWebhook(services, sandbox.session!, sandbox.network, body.url)), {
      body: WebhookBody,
      headers: outcomeHeaders(PATHS.webhook),
      response: responses(WebhookData, []),
      detail: {
        summary: 'Register the webhook endpoint',
        description:
          'Every later event of this session is POSTed there, signed with the `secret` answered (once) in `Sandbox-Signature: ' +
          `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">\`, and attempted again until it answers 2xx: ${RETRY_SCHEDULE}. ` +
          'Registering again replaces the endpoint and its secret; `{"url": null}` removes it. The example\'s URL is a documentation ' +
          "address (RFC 5737) that reaches no one: type in your receiver's (a sandbox others can reach delivers only to public addresses, " +
          'and refuses that one).',
      },
    })
    .post(PATHS.webhookTest, async ({ sandbox }) => success(sandbox, await sendTestEvent(services, sandbox.session!)), {
      body: NoFields,
      headers: outcomeHeaders(PATHS.webhookTest),
      response: responses(EventBody, ['webhook_not_registered']),
      detail: { summary: 'Send a test event', description: 'A `webhook.test` event, listed and delivered like any other.' },
    })
    .post(PATHS.events, async ({ sandbox, body }) => success(sandbox, await listEvents(services, sandbox.session!, body)), {
      body: EventsBody,
      headers: outcomeHeaders(PATHS.events),
      response: responses(EventsData, []),
      detail: {
        summary: 'List events',
        description:
          "The session's events, oldest first: `policy.issued`, `policy.endorsed`, `policy.cancelled`, `document.ready` and " +
          '`webhook.test`, each as delivered, with every delivery attempt. Page with `after` (the previous `next_cursor`).',
      },
    })
    .post(PATHS.resend, async ({ sandbox, params }) => success(sandbox, await resendEvent(services, sandbox.session!, params.event_id)), {
      body: NoFields,
      params: EventParams,
      headers: outcomeHeaders(PATHS.resend),
      response: responses(ResendData, ['event_not_found', 'webhook_not_registered']),
      detail: {
        summary: 'Resend an event',
        description: 'Delivers the event to the endpoint again, now, with the same id and body and a full set of attempts.',
      },
    })
}

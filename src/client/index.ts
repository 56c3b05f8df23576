/**
 * @module A typed client for partners, on Eden Treaty: every path, body and answer is checked by
 * TypeScript against the server's own schemas. It keeps the session cookie between calls, which a
 * browser does by itself but `fetch` in Node, Bun or Deno does not.
 *
 * @example
 * const sandbox = createSandboxClient('http://localhost:3000')
 * const { data } = await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: 34 }] })
 * await sandbox.api.sandbox.policy.new.post({ plan_id: data!.data.plans[0]!.plan_id, trip, travellers: [{ age: 34 }] })
 */
import { treaty, type Treaty } from '@elysiajs/eden'
import type { App } from '../app'

export type { App }
/** Verifies a webhook delivery's `Sandbox-Signature` against the raw body and your endpoint's secret. */
export { SIGNATURE_HEADER, verifyWebhook } from '../modules/events/signature'

/** `baseUrl` is the sandbox's address; tests may pass the app itself to call it in-process. */
export function createSandboxClient(baseUrl: string | App): Treaty.Create<App> {
  let cookie: string | undefined
  return treaty<App>(baseUrl, {
    // Dates stay strings, as the API sends them (Eden would turn `2026-12-20` into a Date).
    parseDate: false,
    headers: () => (cookie ? { cookie } : undefined),
    onResponse: async (response) => {
      const setCookie = response.headers.get('set-cookie')
      const session = setCookie?.match(/(?:^|,\s*)sbx_session=([^;]*)/)
      if (session) cookie = session[1] ? `sbx_session=${session[1]}` : undefined
      // The certificate's bytes, as its type says (Eden would read an unknown media type as text).
      if (response.headers.get('content-type') === 'application/pdf') return new Uint8Array(await response.arrayBuffer())
    },
  })
}

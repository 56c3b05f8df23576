/** @module The sandbox's public routes, in one place for the router and the 405 answer. */

export const PATHS = {
  session: '/api/sandbox/session',
  search: '/api/sandbox/plans/search',
  issue: '/api/sandbox/policy/new',
  modify: '/api/sandbox/policy/:policy_ref/modify',
} as const

const KNOWN = [/^\/api\/sandbox\/session$/, /^\/api\/sandbox\/plans\/search$/, /^\/api\/sandbox\/policy\/new$/, /^\/api\/sandbox\/policy\/[^/]+\/modify$/]

/** True for a path the sandbox serves (with POST), so another method is 405 rather than 404. */
export function isSandboxRoute(path: string): boolean {
  return KNOWN.some((pattern) => pattern.test(path))
}

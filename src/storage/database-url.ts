/**
 * @module What a `SANDBOX_DATABASE_URL` must look like. Apart from the rest of the storage, so that
 * the configuration can check the value without importing the engines (which import nothing of it).
 */

/** What is wrong with a value of `SANDBOX_DATABASE_URL`, or null when it names a database this build serves. */
export function databaseUrlProblem(raw: string): string | null {
  const url = URL.canParse(raw) ? new URL(raw) : null
  if (url && ['postgres:', 'postgresql:'].includes(url.protocol) && url.hostname) return null
  return 'must be a postgres://user:password@host:port/database URL'
}

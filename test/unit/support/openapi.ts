/** The OpenAPI document as the in-process app serves it, and its local `$ref`s followed. */
import { inProcessApp } from './app'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** The document `sandbox` serves at /api/sandbox/openapi.json. */
export async function servedDocument(sandbox: Awaited<ReturnType<typeof inProcessApp>>): Promise<Json> {
  const response = await sandbox.app.handle(new Request('http://localhost/api/sandbox/openapi.json'))
  if (!response.ok) throw new Error(`openapi.json answered ${response.status}`)
  return (await response.json()) as Json
}

/** The node a local `$ref` (a JSON pointer into the document) names. */
function pointed(document: Json, ref: string): Json {
  if (!ref.startsWith('#')) throw new Error(`not a local $ref: ${ref}`)
  const tokens = ref
    .slice(1)
    .split('/')
    .slice(1)
    .map((token) => decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~'))
  return tokens.reduce<Json>((node, token) => {
    const next = (node as Record<string, Json> | null)?.[token]
    if (next === undefined) throw new Error(`$ref ${ref} names nothing`)
    return next
  }, document)
}

/**
 * A node with its `$ref`s followed, however many in a row; keywords beside a `$ref` (OpenAPI 3.1
 * allows a description there) are kept over its target's.
 */
export function resolved(document: Json, node: Json | undefined): any {
  for (let hops = 0; node && typeof node === 'object' && !Array.isArray(node) && typeof node.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`$ref loop at ${node.$ref}`)
    const { $ref, ...beside } = node
    node = { ...(pointed(document, $ref) as object), ...beside }
  }
  return node
}

/** @module A file of a page the sandbox serves (the docs page's, the console's): its text, typed and cached. */

/** A handler answering `body` as `type`, cacheable for `maxAgeSeconds` (the files change only with a release). */
export const staticAsset = (body: string, type: string, maxAgeSeconds: number) => () =>
  new Response(body, {
    headers: { 'content-type': `${type}; charset=utf-8`, 'cache-control': `public, max-age=${maxAgeSeconds}`, 'x-content-type-options': 'nosniff' },
  })

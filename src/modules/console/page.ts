/**
 * @module The console page: a fixed shell (below), a stylesheet and a script (page/, embedded in
 * every build as text), none of which holds a value of the session's. The script fetches the
 * console's data (index.ts) every two seconds and puts each value in the page with `textContent`,
 * which the browser never reads as markup: a `partner_reference` of `<script>…` is shown as text.
 * The Content-Security-Policy allows nothing but these three files and that data. The tables scroll sideways on a phone, in boxes a keyboard can
 * reach (axe-core: scrollable-region-focusable).
 */

import consoleScript from './page/console.js' with { type: 'text' }
import consoleStyle from './page/console.css' with { type: 'text' }

export { consoleScript, consoleStyle }

/** Where the page's two files are served. */
export const CONSOLE_ASSETS = '/api/sandbox/console/assets'

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

export const consolePage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Travel protection sandbox: session console</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <link rel="stylesheet" href="${CONSOLE_ASSETS}/console.css">
  <script type="module" src="${CONSOLE_ASSETS}/console.js"></script>
</head>
<body>
  <header>
    <h1>Session console</h1>
    <p id="session">Loading…</p>
    <p id="status" role="status" aria-live="polite"></p>
  </header>
  <main>
    <section aria-labelledby="policies-heading">
      <h2 id="policies-heading">Policies</h2>
      <div class="scroll" tabindex="0" role="region" aria-labelledby="policies-heading"><table id="policies"><caption class="hidden">Policies of this session, newest first</caption>
        <thead><tr><th scope="col">Policy</th><th scope="col">Status</th><th scope="col">Cover</th><th scope="col">Trip</th><th scope="col">Premium</th><th scope="col">Partner reference</th><th scope="col">Refund</th></tr></thead>
        <tbody></tbody></table></div>
    </section>
    <section aria-labelledby="events-heading">
      <h2 id="events-heading">Events and deliveries</h2>
      <div class="scroll" tabindex="0" role="region" aria-labelledby="events-heading"><table id="events"><caption class="hidden">Events of this session, oldest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Event</th><th scope="col">Delivery</th></tr></thead>
        <tbody></tbody></table></div>
    </section>
    <section aria-labelledby="calls-heading">
      <h2 id="calls-heading">Calls</h2>
      <ol id="calls" class="calls"></ol>
    </section>
  </main>
</body>
</html>`

/**
 * @module The console page: a fixed shell, a stylesheet and a script, none of which holds a value of
 * the session's. The script fetches the console's data (index.ts) every two seconds and puts each
 * value in the page with `textContent`, which the browser never reads as markup: a
 * `partner_reference` of `<script>…` is shown as text. The Content-Security-Policy allows nothing
 * but these three files and that data. The tables scroll sideways on a phone, in boxes a keyboard can
 * reach (axe-core: scrollable-region-focusable).
 */

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
  <script src="${CONSOLE_ASSETS}/console.js" defer></script>
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

export const consoleStyle = `
body { font: 16px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; color: #1b1b1b; background: #fff; }
#session, .calls p, .calls ul { overflow-wrap: anywhere; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; min-width: 40rem; font-size: .9rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ccc; vertical-align: top; }
.calls { list-style: none; padding: 0; margin: 0; }
.calls > li { border: 1px solid #ccc; border-radius: 4px; margin: 0 0 .5rem; padding: .5rem; }
.calls > li.failed { border-color: #a4000f; background: #fff5f5; }
.badge { font-weight: 700; }
.failed .badge { color: #a4000f; }
pre { white-space: pre-wrap; word-break: break-word; background: #f4f4f4; padding: .5rem; font-size: .8rem; max-height: 24rem; overflow: auto; }
.hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
code { word-break: break-all; }
`

export const consoleScript = `
'use strict'
const dataUrl = location.pathname.replace(/\\/$/, '') + '/data'

function cell(row, text) {
  const td = document.createElement('td')
  td.textContent = text == null ? '' : String(text)
  row.append(td)
  return td
}

function fill(tbody, items, render) {
  tbody.replaceChildren(...items.map((item) => { const tr = document.createElement('tr'); render(tr, item); return tr }))
}

function block(label, value) {
  const details = document.createElement('details')
  const summary = document.createElement('summary')
  summary.textContent = label
  const pre = document.createElement('pre')
  pre.textContent = typeof value === 'string' ? value : JSON.stringify(value, null, 2)
  details.append(summary, pre)
  return details
}

function render(data) {
  document.getElementById('session').textContent =
    'Session ' + data.session_ref + ' · ends ' + data.expires_at + ' · its clock: ' + data.clock.now + (data.clock.offset_seconds > 0 ? ' (advanced)' : '')
  fill(document.querySelector('#policies tbody'), data.policies, (tr, p) => {
    cell(tr, p.policy_ref); cell(tr, p.status); cell(tr, p.coverage)
    cell(tr, p.trip.origin_country + ' → ' + p.trip.destination_country + ', ' + p.trip.start_date + ' to ' + p.trip.end_date)
    cell(tr, p.premium + ' ' + p.currency); cell(tr, p.partner_reference ?? '')
    cell(tr, p.cancellation ? p.cancellation.refund.amount + ' ' + p.cancellation.refund.currency + ' (' + p.cancellation.refund.rule + ')' : '')
  })
  fill(document.querySelector('#events tbody'), data.events, (tr, e) => {
    cell(tr, e.created_at); cell(tr, e.type); cell(tr, e.id)
    const d = e.delivery
    cell(tr, d == null ? 'no webhook' : d.state + ' after ' + d.attempts.length + ' attempt(s)' +
      (d.attempts.length ? ': ' + d.attempts.map((a) => a.status ?? a.error).join(', ') : ''))
  })
  const list = document.getElementById('calls')
  list.replaceChildren(...data.calls.map((c) => {
    const li = document.createElement('li')
    if (c.status >= 400) li.className = 'failed'
    const head = document.createElement('p')
    const badge = document.createElement('span')
    badge.className = 'badge'
    badge.textContent = (c.status >= 400 ? '✗ ' : '✓ ') + c.status + (c.error_code ? ' ' + c.error_code : '')
    head.append(badge, document.createTextNode(' ' + c.method + ' ' + c.path + ' · ' + c.at + ' · ' + c.duration_ms + ' ms · ' + c.request_id))
    li.append(head)
    const error = c.answer && c.answer.body && c.answer.body.error
    if (error && error.details) {
      const ul = document.createElement('ul')
      for (const detail of error.details) { const item = document.createElement('li'); item.textContent = detail.field + ': ' + detail.issue; ul.append(item) }
      li.append(ul)
    }
    li.append(block('Request body', c.request.body ?? c.request.note ?? '(none)'), block('Answer', c.answer.body ?? '(' + c.answer.content_type + ')'))
    return li
  }))
}

async function refresh() {
  const status = document.getElementById('status')
  try {
    const response = await fetch(dataUrl, { cache: 'no-store' })
    if (response.status === 429) {
      status.textContent = 'Too many console views from your network this minute; waiting.'
      return Number(response.headers.get('retry-after') ?? 60) * 1000
    }
    if (response.status === 404) { status.textContent = 'This session has ended, or the link is not one of a live session.'; return null }
    if (!response.ok) { status.textContent = 'The sandbox answered ' + response.status + '; trying again.'; return 2000 }
    render(await response.json())
    status.textContent = 'Updated ' + new Date().toLocaleTimeString()
  } catch {
    status.textContent = 'The sandbox did not answer; trying again.'
  }
  return 2000
}

// Every 2 s while the session lives; after a 429, once the console's allowance is back.
async function loop() { const wait = await refresh(); if (wait !== null) setTimeout(loop, wait) }
loop()
`

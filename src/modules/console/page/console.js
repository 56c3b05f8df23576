// The session console's script, a module (served as it is, under a CSP that allows no other): reads the
// console's data every 2 s and shows each value with textContent, never as markup.
const dataUrl = location.pathname.replace(/\/$/, '') + '/data'

function cell(row, text) {
  const td = document.createElement('td')
  td.textContent = text == null ? '' : String(text)
  row.append(td)
  return td
}

function fill(tbody, items, render) {
  tbody.replaceChildren(
    ...items.map((item) => {
      const tr = document.createElement('tr')
      render(tr, item)
      return tr
    }),
  )
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
    cell(tr, p.policy_ref)
    cell(tr, p.status)
    cell(tr, p.coverage)
    cell(tr, p.trip.origin_country + ' → ' + p.trip.destination_country + ', ' + p.trip.start_date + ' to ' + p.trip.end_date)
    cell(tr, p.premium + ' ' + p.currency)
    cell(tr, p.partner_reference ?? '')
    cell(tr, p.cancellation ? p.cancellation.refund.amount + ' ' + p.cancellation.refund.currency + ' (' + p.cancellation.refund.rule + ')' : '')
  })
  fill(document.querySelector('#events tbody'), data.events, (tr, e) => {
    cell(tr, e.created_at)
    cell(tr, e.type)
    cell(tr, e.id)
    const d = e.delivery
    cell(
      tr,
      d == null
        ? 'no webhook'
        : d.state + ' after ' + d.attempts.length + ' attempt(s)' + (d.attempts.length ? ': ' + d.attempts.map((a) => a.status ?? a.error).join(', ') : ''),
    )
  })
  const list = document.getElementById('calls')
  list.replaceChildren(
    ...data.calls.map((c) => {
      const li = document.createElement('li')
      if (c.status >= 400) li.className = 'failed'
      const head = document.createElement('p')
      const badge = document.createElement('span')
      badge.className = 'badge'
      badge.textContent = (c.status >= 400 ? '✗ ' : '✓ ') + c.status + (c.error_code ? ' ' + c.error_code : '')
      head.append(badge, document.createTextNode(' ' + c.method + ' ' + c.path + ' · ' + c.at + ' · ' + c.duration_ms + ' ms · ' + c.request_id))
      li.append(head)
      const error = c.answer?.body?.error
      if (error?.details) {
        const ul = document.createElement('ul')
        for (const detail of error.details) {
          const item = document.createElement('li')
          item.textContent = detail.field + ': ' + detail.issue
          ul.append(item)
        }
        li.append(ul)
      }
      li.append(block('Request body', c.request.body ?? c.request.note ?? '(none)'), block('Answer', c.answer.body ?? '(' + c.answer.content_type + ')'))
      return li
    }),
  )
}

async function refresh() {
  const status = document.getElementById('status')
  try {
    const response = await fetch(dataUrl, { cache: 'no-store' })
    if (response.status === 429) {
      status.textContent = 'Too many console views from your network this minute; waiting.'
      return Number(response.headers.get('retry-after') ?? 60) * 1000
    }
    if (response.status === 404) {
      status.textContent = 'This session has ended, or the link is not one of a live session.'
      return null
    }
    if (!response.ok) {
      status.textContent = 'The sandbox answered ' + response.status + '; trying again.'
      return 2000
    }
    render(await response.json())
    status.textContent = 'Updated ' + new Date().toLocaleTimeString()
  } catch {
    status.textContent = 'The sandbox did not answer; trying again.'
  }
  return 2000
}

// Every 2 s while the session lives; after a 429, once the console's allowance is back.
async function loop() {
  const wait = await refresh()
  if (wait !== null) setTimeout(loop, wait)
}
loop()

// Tandem web console: a completion streamed over SSE from /v1/completions, and a live view of the
// cluster fed by the router over the SockJS event-bus bridge (address tandem.console.cluster).
// Plain browser JavaScript, no build step; EventBus and SockJS come from /vendor.
(function () {
  'use strict';

  const CONSOLE_ADDRESS = 'tandem.console.cluster';
  const KEY_STORE = 'tandem.apiKey';
  /** A snapshot older than this while connected means the feed stalled. */
  const STALE_MS = 5000;

  const $ = (id) => document.getElementById(id);
  const el = {
    status: $('bridge-status'),
    routerId: $('router-id'),
    form: $('generate-form'),
    prompt: $('prompt'),
    maxTokens: $('max-tokens'),
    temperature: $('temperature'),
    apiKey: $('api-key'),
    generate: $('generate'),
    stop: $('stop'),
    genStatus: $('gen-status'),
    output: $('output'),
    updated: $('updated'),
    rps: $('stat-rps'),
    affinity: $('stat-affinity'),
    affinityDetail: $('stat-affinity-detail'),
    inFlight: $('stat-inflight'),
    workerCount: $('stat-workers'),
    workers: document.querySelector('#workers tbody'),
    routers: document.querySelector('#routers tbody'),
  };

  // ---- API key: optional, kept in this browser only ----

  function storedKey() {
    try { return localStorage.getItem(KEY_STORE) || ''; } catch (e) { return ''; }
  }

  function apiKey() {
    return el.apiKey.value.trim();
  }

  el.apiKey.value = storedKey();
  el.apiKey.addEventListener('change', () => {
    try {
      if (apiKey()) localStorage.setItem(KEY_STORE, apiKey()); else localStorage.removeItem(KEY_STORE);
    } catch (e) { /* storage disabled: the key lives as long as the page */ }
    connect(); // a refused registration is retried with the new key
  });

  // ---- the live cluster view over the SockJS bridge ----

  let bus = null;
  let lastSnapshotAt = 0;

  function setStatus(state, text) {
    el.status.dataset.state = state;
    el.status.textContent = text;
  }

  function connect() {
    if (bus) {
      const old = bus;
      bus = null;
      try { old.close(); } catch (e) { /* already closed */ }
    }
    // The client reconnects by itself (backing off up to 5 s) and calls onopen again each time.
    const b = new EventBus('/eventbus', { vertxbus_reconnect_delay_max: 5000 });
    bus = b;
    b.enableReconnect(true);
    setStatus('connecting', 'connecting…');
    b.onopen = () => {
      if (bus !== b) return;
      const key = apiKey();
      b.defaultHeaders = key ? { authorization: 'Bearer ' + key } : null;
      setStatus('open', 'live');
      b.registerHandler(CONSOLE_ADDRESS, (err, message) => {
        if (err) {
          setStatus('closed', err.failureType === 'unauthorized' ? 'API key needed' : 'refused: ' + err.message);
          return;
        }
        render(message.body);
      });
    };
    b.onclose = () => {
      if (bus !== b) return;
      setStatus('closed', 'disconnected, reconnecting…');
    };
    b.onerror = (err) => {
      if (bus === b && err && err.body === 'unauthorized') setStatus('closed', 'API key needed');
    };
  }

  setInterval(() => {
    if (el.status.dataset.state === 'open' && lastSnapshotAt && Date.now() - lastSnapshotAt > STALE_MS) {
      el.updated.textContent = 'no update for ' + Math.round((Date.now() - lastSnapshotAt) / 1000) + ' s';
    }
  }, 1000);

  function formatBytes(n) {
    if (n >= 1 << 30) return (n / (1 << 30)).toFixed(1) + ' GiB';
    if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
    if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
    return n + ' B';
  }

  function cell(row, text, className) {
    const td = document.createElement('td');
    if (className) td.className = className;
    if (text !== undefined) td.textContent = text;
    row.appendChild(td);
    return td;
  }

  /** One row per worker, kept across updates (keyed by role and id) so the KV bars animate. */
  function workerRow(role, w) {
    const key = role + '/' + w.worker_id;
    let row = el.workers.querySelector('tr[data-key="' + CSS.escape(key) + '"]');
    if (!row) {
      row = document.createElement('tr');
      row.dataset.key = key;
      row.dataset.role = role;
      row.dataset.worker = w.worker_id;
      cell(row, w.worker_id, 'id');
      const badge = document.createElement('span');
      badge.className = 'role ' + role;
      badge.textContent = role;
      cell(row).appendChild(badge);
      cell(row, '', 'model');
      cell(row, '', 'state');
      cell(row, '', 'num queued');
      cell(row, '', 'num sequences');
      cell(row, '', 'num in-flight');
      const kv = cell(row, undefined, 'kv');
      const bar = document.createElement('div');
      bar.className = 'bar';
      const fill = document.createElement('div');
      fill.className = 'fill';
      bar.appendChild(fill);
      const text = document.createElement('div');
      text.className = 'kv-text';
      kv.append(bar, text);
    }
    row.querySelector('.model').textContent = w.model;
    const state = row.querySelector('.state');
    state.textContent = w.draining ? 'draining' : 'active';
    state.className = 'state ' + (w.draining ? 'state-draining' : 'state-active');
    row.querySelector('.queued').textContent = w.queued_prefill_tokens;
    row.querySelector('.sequences').textContent = w.active_sequences;
    row.querySelector('.in-flight').textContent = w.in_flight;
    const used = w.kv_bytes_used;
    const capacity = w.kv_bytes_capacity;
    const share = capacity > 0 ? Math.min(1, used / capacity) : 0;
    const fill = row.querySelector('.fill');
    fill.style.width = (share * 100).toFixed(1) + '%';
    fill.classList.toggle('high', share >= 0.75 && share < 0.95);
    fill.classList.toggle('full', share >= 0.95);
    row.dataset.kvUsed = used;
    row.querySelector('.kv-text').textContent = capacity > 0
      ? formatBytes(used) + ' / ' + formatBytes(capacity) + ' (' + Math.round(share * 100) + '%)'
      : (role === 'prefill' ? 'hands KV to decode' : formatBytes(used));
    return row;
  }

  function render(s) {
    lastSnapshotAt = Date.now();
    el.routerId.textContent = 'router ' + s.router;
    el.rps.textContent = s.requests_per_second.toFixed(1);
    const a = s.affinity;
    el.affinity.textContent = a.hit_rate === null || a.hit_rate === undefined ? '–' : Math.round(a.hit_rate * 100) + '%';
    el.affinityDetail.textContent = a.hits + (a.hits === 1 ? ' hit, ' : ' hits, ')
      + a.misses + (a.misses === 1 ? ' miss' : ' misses');
    el.inFlight.textContent = s.in_flight;
    const prefill = s.workers.prefill || [];
    const decode = s.workers.decode || [];
    el.workerCount.textContent = prefill.length + ' + ' + decode.length;
    el.workerCount.title = prefill.length + ' prefill, ' + decode.length + ' decode';

    const rows = [];
    for (const w of prefill) rows.push(workerRow('prefill', w));
    for (const w of decode) rows.push(workerRow('decode', w));
    // Prefill first, then decode, each by id (the order the router sends); gone workers leave.
    el.workers.replaceChildren(...rows);

    const routerRows = [];
    for (const r of s.routers) {
      const row = document.createElement('tr');
      row.dataset.router = r.router;
      cell(row, r.router + (r.self ? ' (this one)' : ''), 'id');
      cell(row, r.node, 'id');
      cell(row, r.requests_in_flight, 'num');
      routerRows.push(row);
    }
    el.routers.replaceChildren(...routerRows);
    el.updated.textContent = 'updated ' + new Date(s.time).toLocaleTimeString();
  }

  // ---- a completion streamed over SSE ----

  let running = null;

  function setGenStatus(state, text) {
    el.genStatus.dataset.state = state;
    el.genStatus.textContent = text;
  }

  async function generate() {
    const body = {
      prompt: el.prompt.value,
      max_tokens: Number(el.maxTokens.value),
      temperature: Number(el.temperature.value),
      stream: true,
      stream_options: { include_usage: true },
    };
    const headers = { 'Content-Type': 'application/json' };
    if (apiKey()) headers.Authorization = 'Bearer ' + apiKey();
    const controller = new AbortController();
    running = controller;
    el.generate.disabled = true;
    el.stop.disabled = false;
    el.output.textContent = '';
    el.output.dataset.state = 'streaming';
    const text = document.createTextNode('');
    el.output.appendChild(text);
    setGenStatus('streaming', 'waiting for the first token…');

    const started = performance.now();
    let firstTokenMs = null;
    let finishReason = null;
    let usage = null;
    try {
      const res = await fetch('/v1/completions', {
        method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal,
      });
      if (!res.ok) {
        const err = await res.json().catch(() => null);
        throw new Error(res.status + ': ' + (err && err.error ? err.error.message : res.statusText));
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffered = '';
      let done = false;
      while (!done) {
        const next = await reader.read();
        if (next.done) break;
        buffered += decoder.decode(next.value, { stream: true }).replace(/\r\n/g, '\n');
        let end;
        // One SSE event per blank-line-terminated block; only its data: lines matter here.
        while (!done && (end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          for (const line of event.split('\n')) {
            if (!line.startsWith('data:')) continue;
            const data = line.slice(5).trim();
            if (data === '[DONE]') { done = true; break; }
            const chunk = JSON.parse(data);
            if (chunk.error) throw new Error(chunk.error.message);
            if (chunk.usage) usage = chunk.usage;
            for (const choice of chunk.choices || []) {
              if (choice.text) {
                if (firstTokenMs === null) firstTokenMs = performance.now() - started;
                text.appendData(choice.text);
                el.output.scrollTop = el.output.scrollHeight;
                setGenStatus('streaming', 'streaming…');
              }
              if (choice.finish_reason) finishReason = choice.finish_reason;
            }
          }
        }
      }
      if (!done) throw new Error('the stream ended without [DONE]');
      reader.cancel().catch(() => {});
      const seconds = (performance.now() - started) / 1000;
      const tokens = usage ? usage.completion_tokens : 0;
      const parts = ['finish: ' + finishReason];
      if (usage) parts.push(usage.prompt_tokens + ' prompt + ' + tokens + ' completion tokens');
      if (firstTokenMs !== null) parts.push('first token ' + Math.round(firstTokenMs) + ' ms');
      if (tokens > 0) parts.push((tokens / seconds).toFixed(0) + ' tok/s');
      el.output.dataset.state = 'done';
      setGenStatus('done', parts.join(' · '));
    } catch (e) {
      if (e.name === 'AbortError') {
        el.output.dataset.state = 'stopped';
        setGenStatus('stopped', 'stopped');
      } else {
        el.output.dataset.state = 'error';
        setGenStatus('error', 'error: ' + e.message);
      }
    } finally {
      running = null;
      el.generate.disabled = false;
      el.stop.disabled = true;
    }
  }

  el.form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!running) generate();
  });
  el.stop.addEventListener('click', () => {
    if (running) running.abort(); // the router cancels the request on its workers
  });

  connect();
})();

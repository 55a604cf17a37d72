// The SockJS event-bus bridge at /eventbus through the official Vert.x client,
// @vertx/eventbus-bridge-client.js (over sockjs-client): a generate request streams its tokens to the
// client's own tandem.client.<uuid> address and ends as the HTTP API's answer does; worker addresses
// and registrations outside tandem.client.* are refused with access_denied.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import EventBus from '@vertx/eventbus-bridge-client.js';
import { MODEL, clientFor, startTandem } from './tandem-server.mjs';

const T = { timeout: 30_000 };
const WAIT_MS = 15_000;

/** Opens an event bus to the server's SockJS bridge; every err frame not addressed to a handler lands in `errors`. */
function openBus(server) {
  const bus = new EventBus(`${server.baseUrl}/eventbus`);
  bus.errors = [];
  bus.errorWaiters = [];
  bus.onerror = (err) => {
    bus.errors.push(err);
    for (const w of bus.errorWaiters.splice(0)) w();
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the SockJS bridge did not open within 15 s')), WAIT_MS);
    bus.onopen = () => { clearTimeout(timer); resolve(bus); };
  });
}

/** The first error matching `predicate` (already received or yet to come). */
async function nextError(bus, predicate) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const i = bus.errors.findIndex(predicate);
    if (i >= 0) return bus.errors.splice(i, 1)[0];
    if (Date.now() > deadline) throw new Error(`no matching err frame; got ${JSON.stringify(bus.errors)}`);
    await new Promise((r) => { bus.errorWaiters.push(r); setTimeout(r, 200); });
  }
}

/** bus.send with a reply, as a promise of the reply's body (rejects with the failure). */
function request(bus, address, body) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply from ${address}`)), WAIT_MS);
    bus.send(address, body, (err, reply) => {
      clearTimeout(timer);
      if (err) reject(Object.assign(new Error(err.message), err)); else resolve(reply.body);
    });
  });
}

/** Registers a fresh client address; returns it and a queue of the bodies pushed to it. */
function ownAddress(bus) {
  const address = `tandem.client.${randomUUID()}`;
  const bodies = [];
  let wake = () => {};
  bus.registerHandler(address, (err, message) => {
    bodies.push(err ? { handlerError: err } : message.body);
    wake();
  });
  const next = async () => {
    const deadline = Date.now() + WAIT_MS;
    while (bodies.length === 0) {
      if (Date.now() > deadline) throw new Error(`nothing pushed to ${address}`);
      await new Promise((r) => { wake = r; setTimeout(r, 200); });
    }
    return bodies.shift();
  };
  return { address, next };
}

describe('SockJS event-bus bridge', () => {
  let server;
  let bus;
  before(async () => {
    server = await startTandem();
    bus = await openBus(server);
  }, { timeout: 70_000 });
  after(async () => {
    try { bus?.close(); } catch { /* closed already */ }
    await server?.stop();
  });

  test('a generate request streams its tokens; the text equals the HTTP API\'s', T, async () => {
    const params = { prompt: 'Over SockJS, once upon a time', max_tokens: 32, temperature: 0 };
    const expected = await clientFor(server).completions.create({ model: MODEL, ...params });
    const mine = ownAddress(bus);
    const accepted = await request(bus, 'tandem.generate', { ...params, stream_to: mine.address });
    assert.match(accepted.id, /^\d+$/, 'the request id, as a string');
    assert.match(accepted.decode_worker, /^decode-/);
    // The HTTP request above left the prompt's first block on its decode worker, which may then prefill
    // the rest itself (local prefill): the prefill worker is a prefill worker or the decode worker.
    if (accepted.prefill_worker !== accepted.decode_worker) {
      assert.match(accepted.prefill_worker, /^prefill-/);
    }

    const frames = [];
    let last;
    for (;;) {
      const body = await mine.next();
      assert.equal(body.handlerError, undefined, JSON.stringify(body));
      assert.equal(body.id, accepted.id, 'every push names its request');
      if (body.finish_reason || body.error) { last = body; break; }
      assert.deepEqual(Object.keys(body), ['id', 'text', 'token_ids']);
      frames.push(body);
    }
    assert.ok(frames.length >= 2, `tokens came in several frames, got ${frames.length}`);
    const text = frames.map((f) => f.text).join('');
    const tokenIds = frames.flatMap((f) => f.token_ids);
    const [choice] = expected.choices;
    assert.equal(text, choice.text);
    assert.deepEqual(tokenIds, choice.token_ids);
    assert.equal(last.finish_reason, choice.finish_reason);
    // The same prompt again may reuse the first request's KV: only cached_tokens may differ.
    const { prompt_tokens_details: details, ...counts } = last.usage;
    assert.deepEqual(counts, {
      prompt_tokens: expected.usage.prompt_tokens,
      completion_tokens: expected.usage.completion_tokens,
      total_tokens: expected.usage.total_tokens,
    });
    assert.ok(details.cached_tokens >= 0 && details.cached_tokens <= counts.prompt_tokens, JSON.stringify(details));
  });

  test('a request refused before it starts fails its reply with the HTTP status', T, async () => {
    const mine = ownAddress(bus);
    await assert.rejects(request(bus, 'tandem.generate', { prompt: 'x', temperature: 5, stream_to: mine.address }),
      (e) => e.failureCode === 400 && /temperature/.test(e.message));
    await assert.rejects(request(bus, 'tandem.generate', { prompt: 'x', stream_to: `tandem.client.${randomUUID()}` }),
      (e) => e.failureCode === 400 && /not registered/.test(e.message));
  });

  test('a send to a worker address is refused with access_denied', T, async () => {
    const res = await fetch(`${server.baseUrl}/admin/workers`);
    const { workers } = await res.json();
    const prefill = workers.find((w) => w.role === 'prefill');
    const decode = workers.find((w) => w.role === 'decode');
    assert.ok(prefill && decode, JSON.stringify(workers));
    for (const address of [`tandem.prefill.${prefill.worker_id}`, `tandem.decode.${decode.worker_id}.start`,
      `tandem.worker.${decode.worker_id}.drain`]) {
      bus.errors.length = 0;
      let replied = false;
      bus.send(address, { draining: true }, () => { replied = true; });
      const err = await nextError(bus, (e) => e.type === 'err');
      assert.equal(err.body, 'access_denied', `${address}: ${JSON.stringify(err)}`);
      assert.equal(replied, false, 'nothing answered from the worker');
    }
    const after = await (await fetch(`${server.baseUrl}/admin/workers`)).json();
    assert.ok(after.workers.every((w) => w.draining === false), 'no worker was put into drain');
  });

  test('a register outside tandem.client.* is refused with access_denied', T, async () => {
    for (const address of ['tandem.decode.decode-1.start', 'tandem.routers.load', 'tandem.generate']) {
      bus.errors.length = 0;
      bus.registerHandler(address, () => assert.fail(`a message reached ${address}`));
      const err = await nextError(bus, (e) => e.type === 'err');
      assert.equal(err.body, 'access_denied', `${address}: ${JSON.stringify(err)}`);
    }
  });

  test('the bridge still serves after the refusals', T, async () => {
    const mine = ownAddress(bus);
    const accepted = await request(bus, 'tandem.generate', {
      prompt: 'still here', max_tokens: 3, temperature: 0, stream_to: mine.address,
    });
    let body;
    do { body = await mine.next(); } while (!body.finish_reason && !body.error);
    assert.equal(body.id, accepted.id);
    assert.equal(body.finish_reason, 'length');
  });
});

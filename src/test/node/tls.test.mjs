// HTTPS through the official openai SDK (issue 33): completions, streamed and not, over TLS trusting the
// test CA (src/test/resources/tls); with http.tls-client-ca, only a client presenting a certificate of
// that CA gets through; with http.tls-required and http.plain-port, the clear-text listener refuses
// (403 tls_required, or a 308 to https for a page load) and clear text to the TLS port gets no answer.
// Two JVMs, one after the other.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MODEL, TLS_DIR, clientFor, collect, startTandem, tlsAgent } from './tandem-server.mjs';

const T = { timeout: 30_000 };
const START = { timeout: 70_000 };
const PROMPT = 'Once upon a time';
const pem = (name) => readFileSync(join(TLS_DIR, name));
const CA = pem('ca.pem');
const CLIENT = { cert: pem('client.pem'), key: pem('client-key.pem') };
// A certificate for client authentication, but of another CA (the cluster tests' rogue node).
const ROGUE = { cert: pem('rogue-node.pem'), key: pem('rogue-node-key.pem') };
const SERVER_TLS = `
  tls-cert: ${JSON.stringify(join(TLS_DIR, 'server.pem'))}
  tls-key: ${JSON.stringify(join(TLS_DIR, 'server-key.pem'))}`;

/** An SDK client whose fetch trusts `ca` and presents `cert`/`key`; its agent is closed by closeAll(). */
const agents = [];
async function sdkOver(server, { baseURL = server.apiUrl, ...connect } = {}) {
  const dispatcher = await tlsAgent(connect);
  agents.push(dispatcher);
  return clientFor(server, { baseURL, fetchOptions: { dispatcher } });
}
async function closeAll() {
  await Promise.all(agents.splice(0).map((a) => a.destroy()));
}

/** A completion read whole and the same one streamed: both complete, the same text (greedy). */
async function completeBothWays(client) {
  assert.match(client.baseURL, /^https:\/\//, 'over TLS');
  const params = { model: MODEL, prompt: PROMPT, max_tokens: 10, temperature: 0, seed: 3 };
  const whole = await client.completions.create(params);
  assert.equal(whole.object, 'text_completion');
  assert.equal(whole.choices[0].finish_reason, 'length');
  assert.equal(whole.usage.completion_tokens, 10);
  assert.ok(whole.choices[0].text.length > 0);
  const chunks = await collect(await client.completions.create({ ...params, stream: true }));
  assert.ok(chunks.length >= 2, `several chunks, got ${chunks.length}`);
  assert.equal(chunks.map((c) => c.choices[0].text).join(''), whole.choices[0].text);
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'length');
}

/** Asserts the SDK call fails to connect (APIConnectionError: no HTTP answer at all). */
async function assertNoConnection(call, why) {
  const started = Date.now();
  await assert.rejects(call, (e) => {
    assert.ok(e instanceof OpenAI.APIConnectionError, `${why}: ${e?.constructor?.name}: ${e?.message}`);
    return true;
  });
  assert.ok(Date.now() - started < 10_000, `${why}: a refusal, not a timeout`);
}

/** A raw HTTP/1.1 request in clear text; resolves {status, headers, body} or rejects, within 10 s. */
function plainRequest(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: 10_000, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTPS with http.tls-required and a refusing plain-port', () => {
  let server;
  before(async () => {
    server = await startTandem({ configYaml: `http:${SERVER_TLS}\n  tls-required: true\n  plain-port: 0\n` });
  }, START);
  after(async () => {
    await closeAll();
    await server?.stop();
  });

  test('the node listens on https, and its clear-text port refuses', () => {
    assert.match(server.baseUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(server.tls, true);
    assert.equal(server.clientAuth, false);
    assert.match(server.plainUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(server.plainUrl.split(':').at(-1), server.baseUrl.split(':').at(-1));
    assert.equal(server.plainRefuses, true);
  });

  test('the SDK trusting the test CA completes, streamed and not', T, async () => {
    await completeBothWays(await sdkOver(server, { ca: CA }));
  });

  test('the SDK also reaches it as localhost (the certificate names both)', T, async () => {
    const client = await sdkOver(server, { ca: CA, baseURL: server.apiUrl.replace('127.0.0.1', 'localhost') });
    const models = await client.models.list();
    assert.ok(models.data.some((m) => m.id === MODEL));
  });

  test('the SDK without the test CA does not trust the server', T, async () => {
    await assertNoConnection(clientFor(server).models.list(), 'system trust store');
  });

  test('HTTP/2 by ALPN', T, async () => {
    const session = http2.connect(server.baseUrl, { ca: CA });
    try {
      const { status, body, alpn } = await new Promise((resolve, reject) => {
        session.on('error', reject);
        const req = session.request({ ':method': 'GET', ':path': '/v1/models' });
        req.setTimeout(10_000, () => req.close(http2.constants.NGHTTP2_CANCEL));
        let status;
        let text = '';
        req.on('response', (h) => { status = h[':status']; });
        req.setEncoding('utf8');
        req.on('data', (d) => { text += d; });
        req.on('end', () => resolve({ status, body: text, alpn: session.alpnProtocol }));
        req.on('error', reject);
      });
      assert.equal(alpn, 'h2');
      assert.equal(status, 200);
      assert.ok(JSON.parse(body).data.some((m) => m.id === MODEL));
    } finally {
      session.close();
    }
  });

  test('a plain HTTP POST to the plain port is refused: 403 tls_required, naming the https URL', T, async () => {
    const res = await plainRequest(`${server.plainUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer x' },
      body: JSON.stringify({ model: MODEL, prompt: PROMPT, max_tokens: 5 }),
    });
    assert.equal(res.status, 403);
    const { error } = JSON.parse(res.body);
    assert.equal(error.code, 'tls_required');
    assert.equal(error.type, 'invalid_request_error');
    assert.ok(error.message.includes(`${server.baseUrl}/v1/completions`), error.message);
  });

  test('the SDK pointed at the plain port gets the refusal as an API error', T, async () => {
    const client = clientFor(server, { baseURL: `${server.plainUrl}/v1` });
    await assert.rejects(client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 5 }), (e) => {
      assert.ok(e instanceof OpenAI.PermissionDeniedError, `${e?.constructor?.name}: ${e?.message}`);
      assert.equal(e.status, 403);
      assert.equal(e.code, 'tls_required');
      return true;
    });
  });

  test('a page load on the plain port is redirected to https (308); with a key it is refused', T, async () => {
    const page = await plainRequest(`${server.plainUrl}/v1/models`);
    assert.equal(page.status, 308);
    assert.equal(page.headers.location, `${server.baseUrl}/v1/models`);
    const keyed = await plainRequest(`${server.plainUrl}/v1/models`, { headers: { Authorization: 'Bearer x' } });
    assert.equal(keyed.status, 403);
    assert.equal(JSON.parse(keyed.body).error.code, 'tls_required');
  });

  test('clear-text HTTP to the TLS port gets no HTTP answer, only a closed connection', T, async () => {
    const tlsPort = new URL(server.baseUrl).port;
    await assert.rejects(plainRequest(`http://127.0.0.1:${tlsPort}/v1/models`), (e) => {
      assert.ok(['ECONNRESET', 'ECONNREFUSED', 'EPIPE'].includes(e.code) || /hang up/.test(e.message),
        `${e.code}: ${e.message}`);
      return true;
    });
    const client = clientFor(server, { baseURL: `http://127.0.0.1:${tlsPort}/v1` });
    await assertNoConnection(client.models.list(), 'clear text to the TLS port');
  });
});

describe('HTTPS with http.tls-client-ca (mutual TLS)', () => {
  let server;
  before(async () => {
    server = await startTandem({
      configYaml: `http:${SERVER_TLS}\n  tls-client-ca: ${JSON.stringify(join(TLS_DIR, 'ca.pem'))}\n`,
    });
  }, START);
  after(async () => {
    await closeAll();
    await server?.stop();
  });

  test('the node says it requires client certificates', () => {
    assert.match(server.baseUrl, /^https:\/\//);
    assert.equal(server.clientAuth, true);
    assert.equal(server.plainUrl, null);
  });

  test('the SDK presenting a certificate of the CA completes, streamed and not', T, async () => {
    await completeBothWays(await sdkOver(server, { ca: CA, ...CLIENT }));
  });

  test('the SDK without a client certificate is refused', T, async () => {
    const client = await sdkOver(server, { ca: CA });
    await assertNoConnection(client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 2 }), 'no certificate');
  });

  test('a client certificate of another CA is refused', T, async () => {
    const client = await sdkOver(server, { ca: CA, ...ROGUE });
    await assertNoConnection(client.models.list(), 'another CA');
  });
});

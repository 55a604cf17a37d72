// GET /v1/models, and errors surfaced as the openai SDK's typed errors (status, type, param).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MODEL, clientFor, startTandem } from './tandem-server.mjs';

const T = { timeout: 30_000 };
const MESSAGES = [{ role: 'user', content: 'hi' }];

/** Runs `call`, expects it to reject with `ErrorClass`, returns the error. */
async function expectError(call, ErrorClass, status) {
  let error;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  assert.ok(error, 'the call failed');
  assert.ok(error instanceof ErrorClass,
    `expected ${ErrorClass.name}, got ${error?.constructor?.name}: ${error?.message}`);
  assert.ok(error instanceof OpenAI.APIError);
  assert.equal(error.status, status);
  // The body is OpenAI's {"error": {message, type, param, code}}; the SDK exposes its parts.
  assert.equal(typeof error.error?.message, 'string', `error body: ${JSON.stringify(error.error)}`);
  assert.ok(error.error.message.length > 0);
  assert.equal(typeof error.type, 'string');
  return error;
}

describe('models and errors', () => {
  let server;
  let client;
  before(async () => {
    server = await startTandem();
    client = clientFor(server);
  }, { timeout: 70_000 });
  after(async () => { await server?.stop(); });

  test('models.list() lists tandem-builtin', T, async () => {
    const ids = [];
    for await (const model of client.models.list()) {
      ids.push(model.id);
      assert.equal(model.object, 'model');
      if (ids.length > 100) break;
    }
    assert.ok(ids.includes(MODEL), `models: ${JSON.stringify(ids)}`);
    const page = await client.models.list();
    const entry = page.data.find((m) => m.id === MODEL);
    assert.ok(entry);
    assert.equal(typeof entry.created, 'number');
    assert.equal(typeof entry.owned_by, 'string');
  });

  describe('400 BadRequestError names the field', () => {
    const cases = [
      ['completions max_tokens: 0', 'max_tokens',
        (c) => c.completions.create({ model: MODEL, prompt: 'x', max_tokens: 0 })],
      ['completions temperature: -1', 'temperature',
        (c) => c.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2, temperature: -1 })],
      ['completions top_p: 0', 'top_p',
        (c) => c.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2, top_p: 0 })],
      ['completions without prompt', 'prompt',
        (c) => c.completions.create({ model: MODEL, max_tokens: 2 })],
      ['completions n: 2 (unsupported)', 'n',
        (c) => c.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2, n: 2 })],
      ['completions with 5 stop sequences', 'stop',
        (c) => c.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2, stop: ['a', 'b', 'c', 'd', 'e'] })],
      ['chat max_tokens: 0', 'max_tokens',
        (c) => c.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 0 })],
      ['chat temperature: -1', 'temperature',
        (c) => c.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 2, temperature: -1 })],
      ['chat without messages', 'messages',
        (c) => c.chat.completions.create({ model: MODEL, max_tokens: 2 })],
      ['chat with empty messages', 'messages',
        (c) => c.chat.completions.create({ model: MODEL, messages: [], max_tokens: 2 })],
    ];
    for (const [name, param, call] of cases) {
      test(name, T, async () => {
        const error = await expectError(() => call(client), OpenAI.BadRequestError, 400);
        assert.equal(error.type, 'invalid_request_error');
        assert.equal(error.param, param, `error body: ${JSON.stringify(error.error)}`);
      });
    }

    test('streamed requests are validated before the stream starts', T, async () => {
      const error = await expectError(
        () => client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 0, stream: true }),
        OpenAI.BadRequestError, 400);
      assert.equal(error.param, 'max_tokens');
      const chat = await expectError(
        () => client.chat.completions.create({ model: MODEL, messages: MESSAGES, temperature: -1, stream: true }),
        OpenAI.BadRequestError, 400);
      assert.equal(chat.param, 'temperature');
    });
  });

  describe('404 NotFoundError', () => {
    test('unknown model on completions', T, async () => {
      const error = await expectError(
        () => client.completions.create({ model: 'gpt-4o', prompt: 'x', max_tokens: 2 }), OpenAI.NotFoundError, 404);
      assert.equal(error.param, 'model');
    });

    test('unknown model on chat completions', T, async () => {
      const error = await expectError(
        () => client.chat.completions.create({ model: 'gpt-4o', messages: MESSAGES, max_tokens: 2 }),
        OpenAI.NotFoundError, 404);
      assert.equal(error.param, 'model');
    });

    test('unknown route', T, async () => {
      await expectError(() => client.get('/no-such-route'), OpenAI.NotFoundError, 404);
    });
  });
});

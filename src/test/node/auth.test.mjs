// API keys: a server configured with keys answers 401 (the SDK's AuthenticationError) to a wrong
// key and serves the right one.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MODEL, clientFor, startTandem } from './tandem-server.mjs';

const T = { timeout: 30_000 };
const KEYS = [`sk-tandem-${randomBytes(12).toString('hex')}`, `sk-tandem-${randomBytes(12).toString('hex')}`];

describe('API keys', () => {
  let server;
  before(async () => {
    server = await startTandem({
      configYaml: ['http:', '  api-keys:', ...KEYS.map((k) => `    - "${k}"`), ''].join('\n'),
    });
  }, { timeout: 70_000 });
  after(async () => { await server?.stop(); });

  async function expect401(call) {
    let error;
    try {
      await call();
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof OpenAI.AuthenticationError,
      `expected AuthenticationError, got ${error?.constructor?.name}: ${error?.message}`);
    assert.equal(error.status, 401);
    assert.equal(typeof error.error?.message, 'string', `error body: ${JSON.stringify(error.error)}`);
  }

  test('a wrong key gets AuthenticationError (401) on every endpoint', T, async () => {
    const wrong = clientFor(server, { apiKey: 'sk-wrong' });
    await expect401(() => wrong.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2 }));
    await expect401(() => wrong.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2, stream: true }));
    await expect401(() => wrong.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }));
    await expect401(() => wrong.models.list());
  });

  test('the right keys are served', T, async () => {
    for (const apiKey of KEYS) {
      const client = clientFor(server, { apiKey });
      const res = await client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 3, temperature: 0 });
      assert.equal(res.choices[0].token_ids.length, 3);
      const chat = await client.chat.completions.create({
        model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 3, temperature: 0,
      });
      assert.equal(chat.usage.completion_tokens, 3);
      const page = await client.models.list();
      assert.ok(page.data.some((m) => m.id === MODEL));
    }
  });
});

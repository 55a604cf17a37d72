// Stop sequences through the official openai SDK. The stop string is taken from a greedy output
// of the same request (so it really occurs): the answer must be exactly the text before its first
// occurrence, without the stop string, with finish_reason "stop", streamed or not.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MODEL, clientFor, collect, pickStop, startTandem } from './tandem-server.mjs';

const T = { timeout: 30_000 };
const MAX_TOKENS = 64;
// A few request variants to look for a usable stop string in, tried in order (bounded).
const PROMPTS = ['Once upon a time', 'The quick brown fox', 'Hello, world', 'abc', 'Tandem'];

describe('stop sequences', () => {
  let server;
  let client;
  before(async () => {
    server = await startTandem();
    client = clientFor(server);
  }, { timeout: 70_000 });
  after(async () => { await server?.stop(); });

  const describeCase = (c) =>
    `prompt ${JSON.stringify(c.prompt)}: stop ${JSON.stringify(c.stop)} first occurs after ${c.prefix.length} of ${c.text.length} characters`;

  /** Generates greedily without stop, over PROMPTS, until a stop string can be picked. */
  async function findCase(generate) {
    const seen = [];
    for (const prompt of PROMPTS) {
      const text = await generate(prompt);
      const pick = pickStop(text);
      if (pick) return { prompt, text, ...pick };
      seen.push(text);
    }
    assert.fail(`no printable 2-3 character stop string found in ${JSON.stringify(seen)}`);
  }

  describe('completions', () => {
    let c;
    const base = { model: MODEL, max_tokens: MAX_TOKENS, temperature: 0, seed: 17 };
    before(async () => {
      c = await findCase(async (prompt) => {
        const res = await client.completions.create({ ...base, prompt });
        return res.choices[0].text;
      });
    }, T);

    test('non-streamed, stop as a list', T, async (t) => {
      t.diagnostic(describeCase(c));
      const res = await client.completions.create({ ...base, prompt: c.prompt, stop: [c.stop] });
      assert.equal(res.choices[0].text, c.prefix, `stop ${JSON.stringify(c.stop)} in ${JSON.stringify(c.text)}`);
      assert.equal(res.choices[0].finish_reason, 'stop');
      assert.ok(!res.choices[0].text.includes(c.stop));
      assert.ok(res.usage.completion_tokens < MAX_TOKENS);
      assert.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);
    });

    test('non-streamed, stop as a string, among strings that never occur', T, async () => {
      const single = await client.completions.create({ ...base, prompt: c.prompt, stop: c.stop });
      assert.equal(single.choices[0].text, c.prefix);
      assert.equal(single.choices[0].finish_reason, 'stop');
      const never = '\u2603never\u2603';
      const several = await client.completions.create({ ...base, prompt: c.prompt, stop: [never, c.stop] });
      assert.equal(several.choices[0].text, c.prefix);
      assert.equal(several.choices[0].finish_reason, 'stop');
      const none = await client.completions.create({ ...base, prompt: c.prompt, stop: [never] });
      assert.equal(none.choices[0].text, c.text);
      assert.equal(none.choices[0].finish_reason, 'length');
    });

    test('streamed', T, async () => {
      const chunks = await collect(await client.completions.create({
        ...base, prompt: c.prompt, stop: [c.stop], stream: true,
      }));
      const withChoice = chunks.filter((ch) => ch.choices.length > 0);
      assert.equal(withChoice.map((ch) => ch.choices[0].text).join(''), c.prefix,
        `stop ${JSON.stringify(c.stop)} in ${JSON.stringify(c.text)}`);
      assert.equal(withChoice.at(-1).choices[0].finish_reason, 'stop');
      assert.deepEqual(withChoice.map((ch) => ch.choices[0].finish_reason).filter((f) => f != null), ['stop']);
    });
  });

  describe('chat', () => {
    let c;
    const base = { model: MODEL, max_tokens: MAX_TOKENS, temperature: 0, seed: 17 };
    const messages = (prompt) => [{ role: 'user', content: prompt }];
    before(async () => {
      c = await findCase(async (prompt) => {
        const res = await client.chat.completions.create({ ...base, messages: messages(prompt) });
        return res.choices[0].message.content;
      });
    }, T);

    test('non-streamed', T, async (t) => {
      t.diagnostic(describeCase(c));
      const res = await client.chat.completions.create({ ...base, messages: messages(c.prompt), stop: [c.stop] });
      assert.equal(res.choices[0].message.content, c.prefix, `stop ${JSON.stringify(c.stop)} in ${JSON.stringify(c.text)}`);
      assert.equal(res.choices[0].finish_reason, 'stop');
      const single = await client.chat.completions.create({ ...base, messages: messages(c.prompt), stop: c.stop });
      assert.equal(single.choices[0].message.content, c.prefix);
      assert.equal(single.choices[0].finish_reason, 'stop');
    });

    test('streamed', T, async () => {
      const chunks = await collect(await client.chat.completions.create({
        ...base, messages: messages(c.prompt), stop: [c.stop], stream: true,
      }));
      const withChoice = chunks.filter((ch) => ch.choices.length > 0);
      assert.equal(withChoice[0].choices[0].delta.role, 'assistant');
      assert.equal(withChoice.map((ch) => ch.choices[0].delta.content ?? '').join(''), c.prefix,
        `stop ${JSON.stringify(c.stop)} in ${JSON.stringify(c.text)}`);
      assert.equal(withChoice.at(-1).choices[0].finish_reason, 'stop');
    });
  });
});

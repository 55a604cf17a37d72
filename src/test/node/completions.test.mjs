// POST /v1/completions through the official openai SDK: non-streamed, streamed with the SDK's
// async iterator, and the usage chunk of stream_options.include_usage.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MODEL, clientFor, collect, startTandem } from './tandem-server.mjs';

const PROMPT = 'Once upon a time';
const T = { timeout: 30_000 };

describe('completions', () => {
  let server;
  let client;
  before(async () => {
    server = await startTandem();
    client = clientFor(server);
  }, { timeout: 70_000 });
  after(async () => { await server?.stop(); });

  test('non-streamed: text, token_ids, finish_reason "length", consistent usage', T, async () => {
    const res = await client.completions.create({
      model: MODEL, prompt: PROMPT, max_tokens: 12, temperature: 0, seed: 7,
    });
    assert.equal(res.object, 'text_completion');
    assert.equal(res.model, MODEL);
    assert.match(res.id, /\S/);
    assert.equal(typeof res.created, 'number');
    assert.equal(res.choices.length, 1);
    const [choice] = res.choices;
    assert.equal(choice.index, 0);
    assert.equal(typeof choice.text, 'string');
    assert.ok(choice.text.length > 0, 'some text');
    assert.ok(Array.isArray(choice.token_ids), 'token_ids extension present');
    assert.equal(choice.token_ids.length, 12);
    assert.ok(choice.token_ids.every((t) => Number.isInteger(t) && t >= 0), 'token ids are non-negative ints');
    assert.equal(choice.finish_reason, 'length');

    const { usage } = res;
    assert.ok(usage.prompt_tokens > 0);
    assert.equal(usage.completion_tokens, 12);
    assert.equal(usage.completion_tokens, choice.token_ids.length);
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  });

  test('the same seed gives the same text; greedy ignores the seed', T, async () => {
    const ask = (extra) => client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 16, ...extra });
    const [a, b] = await Promise.all([ask({ temperature: 1, seed: 11 }), ask({ temperature: 1, seed: 11 })]);
    assert.equal(a.choices[0].text, b.choices[0].text);
    assert.deepEqual(a.choices[0].token_ids, b.choices[0].token_ids);
    const [g1, g2] = await Promise.all([ask({ temperature: 0, seed: 1 }), ask({ temperature: 0, seed: 2 })]);
    assert.deepEqual(g1.choices[0].token_ids, g2.choices[0].token_ids);
  });

  for (const sampling of [{ temperature: 0, seed: 3 }, { temperature: 0.9, top_p: 0.95, seed: 42 }]) {
    test(`streamed text equals non-streamed text (${JSON.stringify(sampling)})`, T, async () => {
      const params = { model: MODEL, prompt: PROMPT, max_tokens: 40, user: 'node-sdk', ...sampling };
      const whole = await client.completions.create(params);
      const stream = await client.completions.create({ ...params, stream: true });
      const chunks = await collect(stream);

      assert.ok(chunks.length >= 2, `several chunks, got ${chunks.length}`);
      for (const chunk of chunks) {
        assert.equal(chunk.object, 'text_completion');
        assert.equal(chunk.model, MODEL);
        assert.equal(chunk.id, chunks[0].id, 'one id for the whole stream');
        // Without include_usage every chunk carries exactly one choice: code that reads
        // chunk.choices[0] (the usual way to consume this stream) must not break.
        assert.equal(chunk.choices.length, 1, `one choice per chunk: ${JSON.stringify(chunk)}`);
      }
      const text = chunks.map((c) => c.choices[0].text).join('');
      const tokenIds = chunks.flatMap((c) => c.choices[0].token_ids ?? []);
      assert.equal(text, whole.choices[0].text);
      assert.deepEqual(tokenIds, whole.choices[0].token_ids);

      const finishes = chunks.map((c) => c.choices[0].finish_reason).filter((f) => f != null);
      assert.deepEqual(finishes, ['length'], 'exactly one finish_reason, on the last choice chunk');
      assert.equal(chunks.at(-1).choices[0].finish_reason, 'length');
    });
  }

  test('stream_options.include_usage adds a last chunk with choices [] and usage', T, async () => {
    const params = { model: MODEL, prompt: PROMPT, max_tokens: 9, temperature: 0, seed: 5 };
    const whole = await client.completions.create(params);
    const chunks = await collect(await client.completions.create({
      ...params, stream: true, stream_options: { include_usage: true },
    }));

    const last = chunks.at(-1);
    assert.deepEqual(last.choices, [], `last chunk has no choices: ${JSON.stringify(last)}`);
    assert.ok(last.usage, 'last chunk has usage');
    assert.deepEqual(
      { prompt_tokens: last.usage.prompt_tokens, completion_tokens: last.usage.completion_tokens, total_tokens: last.usage.total_tokens },
      { prompt_tokens: whole.usage.prompt_tokens, completion_tokens: 9, total_tokens: whole.usage.prompt_tokens + 9 });

    const body = chunks.slice(0, -1);
    assert.ok(body.length >= 1);
    for (const chunk of body) {
      assert.equal(chunk.choices.length, 1);
      assert.ok(chunk.usage == null, `only the last chunk carries usage: ${JSON.stringify(chunk)}`);
    }
    assert.equal(body.at(-1).choices[0].finish_reason, 'length');
    assert.equal(body.map((c) => c.choices[0].text).join(''), whole.choices[0].text);
  });

  test('a prompt given as token ids is used as is', T, async () => {
    const ids = [72, 105]; // "Hi" in the built-in byte-level vocabulary, no BOS
    const res = await client.completions.create({ model: MODEL, prompt: ids, max_tokens: 4, temperature: 0 });
    assert.equal(res.choices[0].token_ids.length, 4);
    assert.equal(res.usage.prompt_tokens, ids.length);
    assert.equal(res.usage.completion_tokens, 4);
  });
});

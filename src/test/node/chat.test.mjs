// POST /v1/chat/completions through the official openai SDK: non-streamed, streamed (raw chunks
// and the SDK's own chat stream helper), include_usage, and max_completion_tokens.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MODEL, clientFor, collect, startTandem } from './tandem-server.mjs';

const MESSAGES = [
  { role: 'system', content: 'You are a terse assistant.' },
  { role: 'user', content: 'Tell me a story about a fox.' },
];
const T = { timeout: 30_000 };

describe('chat completions', () => {
  let server;
  let client;
  before(async () => {
    server = await startTandem();
    client = clientFor(server);
  }, { timeout: 70_000 });
  after(async () => { await server?.stop(); });

  test('non-streamed: assistant message, finish_reason "length", consistent usage', T, async () => {
    const res = await client.chat.completions.create({
      model: MODEL, messages: MESSAGES, max_tokens: 10, temperature: 0, seed: 7,
    });
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, MODEL);
    assert.match(res.id, /\S/);
    assert.equal(typeof res.created, 'number');
    assert.equal(res.choices.length, 1);
    const [choice] = res.choices;
    assert.equal(choice.index, 0);
    assert.equal(choice.message.role, 'assistant');
    assert.equal(typeof choice.message.content, 'string');
    assert.ok(choice.message.content.length > 0, 'some content');
    assert.equal(choice.finish_reason, 'length');
    assert.ok(Array.isArray(choice.token_ids), `token_ids extension present: ${JSON.stringify(choice)}`);
    assert.equal(choice.token_ids.length, 10);

    const { usage } = res;
    assert.ok(usage.prompt_tokens > 0);
    assert.equal(usage.completion_tokens, 10);
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  });

  test('max_completion_tokens is honoured like max_tokens', T, async () => {
    const base = { model: MODEL, messages: MESSAGES, temperature: 0 };
    const [a, b] = await Promise.all([
      client.chat.completions.create({ ...base, max_tokens: 6 }),
      client.chat.completions.create({ ...base, max_completion_tokens: 6 }),
    ]);
    assert.equal(b.usage.completion_tokens, 6);
    assert.equal(b.choices[0].finish_reason, 'length');
    assert.equal(b.choices[0].message.content, a.choices[0].message.content);
  });

  test('a multi-turn conversation is accepted and shapes the prompt', T, async () => {
    const turns = [...MESSAGES, { role: 'assistant', content: 'Once there was a fox.' }, { role: 'user', content: 'More.' }];
    const [short, long] = await Promise.all([
      client.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 4, temperature: 0 }),
      client.chat.completions.create({ model: MODEL, messages: turns, max_tokens: 4, temperature: 0 }),
    ]);
    assert.ok(long.usage.prompt_tokens > short.usage.prompt_tokens,
      `more messages, more prompt tokens (${long.usage.prompt_tokens} vs ${short.usage.prompt_tokens})`);
  });

  for (const sampling of [{ temperature: 0, seed: 3 }, { temperature: 0.8, top_p: 0.9, seed: 1234 }]) {
    test(`streamed: role first, finish_reason last, text equals non-streamed (${JSON.stringify(sampling)})`, T, async () => {
      const params = { model: MODEL, messages: MESSAGES, max_tokens: 32, user: 'node-sdk-chat', ...sampling };
      const whole = await client.chat.completions.create(params);
      const chunks = await collect(await client.chat.completions.create({ ...params, stream: true }));

      assert.ok(chunks.length >= 2, `several chunks, got ${chunks.length}`);
      for (const chunk of chunks) {
        assert.equal(chunk.object, 'chat.completion.chunk');
        assert.equal(chunk.model, MODEL);
        assert.equal(chunk.id, chunks[0].id, 'one id for the whole stream');
        assert.equal(chunk.choices.length, 1, `one choice per chunk: ${JSON.stringify(chunk)}`);
        assert.equal(chunk.choices[0].index, 0);
        assert.ok(chunk.choices[0].delta, 'every choice has a delta');
      }
      assert.equal(chunks[0].choices[0].delta.role, 'assistant', `first delta names the role: ${JSON.stringify(chunks[0])}`);
      const finishes = chunks.map((c) => c.choices[0].finish_reason).filter((f) => f != null);
      assert.deepEqual(finishes, ['length'], 'exactly one finish_reason');
      assert.equal(chunks.at(-1).choices[0].finish_reason, 'length', 'finish_reason is on the last chunk');

      const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
      assert.equal(content, whole.choices[0].message.content);
      const tokenIds = chunks.flatMap((c) => c.choices[0].token_ids ?? []);
      assert.deepEqual(tokenIds, whole.choices[0].token_ids);
    });
  }

  test('stream_options.include_usage adds a last chunk with choices [] and usage', T, async () => {
    const params = { model: MODEL, messages: MESSAGES, max_tokens: 7, temperature: 0 };
    const whole = await client.chat.completions.create(params);
    const chunks = await collect(await client.chat.completions.create({
      ...params, stream: true, stream_options: { include_usage: true },
    }));
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, [], `last chunk has no choices: ${JSON.stringify(last)}`);
    assert.equal(last.object, 'chat.completion.chunk');
    assert.equal(last.usage?.prompt_tokens, whole.usage.prompt_tokens);
    assert.equal(last.usage?.completion_tokens, 7);
    assert.equal(last.usage?.total_tokens, whole.usage.prompt_tokens + 7);
    for (const chunk of chunks.slice(0, -1)) {
      assert.equal(chunk.choices.length, 1);
      assert.ok(chunk.usage == null, `only the last chunk carries usage: ${JSON.stringify(chunk)}`);
    }
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'length');
  });

  test("the SDK's chat stream helper assembles the same completion", T, async () => {
    const params = { model: MODEL, messages: MESSAGES, max_tokens: 20, temperature: 0.7, seed: 99 };
    const whole = await client.chat.completions.create(params);
    const runner = client.chat.completions.stream(params);
    let deltas = '';
    runner.on('content', (delta) => { deltas += delta; });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0].message.role, 'assistant');
    assert.equal(final.choices[0].message.content, whole.choices[0].message.content);
    assert.equal(final.choices[0].finish_reason, 'length');
    assert.equal(deltas, whole.choices[0].message.content);
  });
});

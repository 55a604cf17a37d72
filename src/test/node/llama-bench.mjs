// llama.cpp's decode speed on a GGUF file, for benchmarks.md beside `tandem bench engine --model FILE`:
// tokens/s of one stream and of a batch of streams decoding together, greedy, same thread count.
//
//   node llama-bench.mjs FILE.gguf [--tokens 128] [--batch 16] [--threads 2]
//
// Prints one JSON line: {"model", "threads", "tokens", "one_stream_tokens_per_s", "batch", "batch_tokens_per_s"}.
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tokens: { type: 'string', default: '128' },
    batch: { type: 'string', default: '16' },
    threads: { type: 'string', default: '2' },
  },
});
const [modelPath] = positionals;
if (!modelPath) {
  console.error('usage: node llama-bench.mjs FILE.gguf [--tokens N] [--batch B] [--threads T]');
  process.exit(2);
}
const tokens = Number(values.tokens);
const batch = Number(values.batch);
const threads = Number(values.threads);
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const prompt = [model.tokens.bos ?? 1, ...model.tokenize('Once upon a time')];

/** Decodes `streams` sequences of `tokens` tokens each at once; returns generated tokens per second. */
async function decode(streams) {
  const context = await model.createContext({
    contextSize: streams * (prompt.length + tokens + 16),
    sequences: streams,
    batchSize: 512,
    threads,
    flashAttention: false,
  });
  try {
    const sequences = Array.from({ length: streams }, () => context.getSequence());
    // Prefill first, so the timing covers decode only (as `bench engine` reports it).
    await Promise.all(sequences.map((s) => s.evaluateWithoutGeneratingNewTokens(prompt)));
    const started = process.hrtime.bigint();
    let generated = 0;
    await Promise.all(sequences.map(async (s, i) => {
      let n = 0;
      for await (const token of s.evaluate([300 + i], { temperature: 0 })) { // streams start apart
        void token;
        generated++;
        if (++n >= tokens) break;
      }
    }));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return generated / seconds;
  } finally {
    await context.dispose();
  }
}

const one = await decode(1);
const many = await decode(batch);
console.log(JSON.stringify({
  model: modelPath, threads, tokens,
  one_stream_tokens_per_s: Number(one.toFixed(1)), batch, batch_tokens_per_s: Number(many.toFixed(1)),
}));
await model.dispose();
await llama.dispose();

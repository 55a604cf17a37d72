// llama.cpp as the reference for Tandem's GGUF engine (node-llama-cpp's prebuilt linux-x64 CPU build,
// offline). Not a test itself: the Java oracle tests run it with one JSON request on stdin and read
// one JSON answer from stdout.
//
//   {"model": FILE, "threads": N,
//    "tokenize": [TEXT, ...],                  -> "tokens": [[ID, ...], ...]   (specials parsed, no BOS)
//    "greedy": {"prompt": [ID, ...], "n": 64}, -> "greedy": [ID, ...]
//    "logits": {"tokens": [ID, ...], "from": K, "top": 20}}
//                                              -> "logits": [[[ID, LOGIT], ...] for positions K.. end]
//   With "greedy" and "logits": {"top": N} (no tokens), the logits are taken along the prompt and the
//   greedy continuation, from the prompt's end: one model load for both.
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

const request = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => { text += chunk; });
  process.stdin.on('end', () => resolve(text));
}));
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: request.model, gpuLayers: 0 });
const answer = {};
if (request.tokenize) {
  answer.tokens = request.tokenize.map((text) => Array.from(model.tokenize(text, true)));
}
async function withSequence(contextSize, run) {
  const context = await model.createContext({
    contextSize, batchSize: contextSize, threads: request.threads ?? 2, flashAttention: false, sequences: 1,
  });
  try {
    return await run(context.getSequence());
  } finally {
    await context.dispose();
  }
}
if (request.greedy) {
  const { prompt, n } = request.greedy;
  answer.greedy = await withSequence(Math.max(256, prompt.length + n + 8), async (sequence) => {
    const out = [];
    for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
      out.push(token);
      if (out.length >= n) break;
    }
    return out;
  });
}
if (request.logits) {
  const { top } = request.logits;
  const tokens = request.logits.tokens ?? [...request.greedy.prompt, ...answer.greedy];
  const from = request.logits.from ?? request.greedy.prompt.length;
  answer.logits = await withSequence(Math.max(256, tokens.length + 8), async (sequence) => {
    const input = tokens.map((t, i) => (i >= from - 1 ? [t, { generateNext: { logits: true } }] : t));
    const outputs = await sequence.controlledEvaluate(input);
    const rows = [];
    for (let i = from - 1; i < tokens.length; i++) {
      rows.push(Array.from(outputs[i].next.logits.entries()).slice(0, top ?? 20));
    }
    return rows;
  });
}
process.stdout.write(JSON.stringify(answer) + '\n');
await model.dispose();
await llama.dispose();

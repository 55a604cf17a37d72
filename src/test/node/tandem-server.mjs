// Test harness: starts a real Tandem JVM (router + 2 prefill + 2 decode workers, built-in model)
// on 127.0.0.1 and hands back its base URL and an `openai` SDK client for it.
//
// The jar is target/tandem.jar of this project (built by `mvn package`, which runs before the
// integration-test phase that runs this suite); TANDEM_JAR overrides it. Every server gets its own
// random Hazelcast cluster name, so parallel runs never join each other.

import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const HERE = dirname(fileURLToPath(import.meta.url));
export const PROJECT_DIR = resolve(HERE, '../../..');
export const JAR = resolve(process.env.TANDEM_JAR || join(PROJECT_DIR, 'target', 'tandem.jar'));
export const MODEL = 'tandem-builtin';

const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const LOG_LINES_KEPT = 300;
// "  router <id> listening on http://127.0.0.1:PORT", or "https://... (TLS[, client certificates required])".
const READY = /listening on (https?:\/\/127\.0\.0\.1:\d+)( \(TLS(, client certificates required)?\))?/;
// With http.plain-port beside TLS: "  clear-text HTTP on http://127.0.0.1:PORT[ refuses requests (http.tls-required)]".
const PLAIN = /clear-text HTTP on (http:\/\/127\.0\.0\.1:\d+)( refuses requests)?/;
// The last line of the node's ready report (after the router's, the plain listener's and the bridges').
const REPORT_END = /^Try:/;

function javaExecutable() {
  const home = process.env.JAVA_HOME;
  if (home) {
    const java = join(home, 'bin', process.platform === 'win32' ? 'java.exe' : 'java');
    if (existsSync(java)) return java;
  }
  return 'java';
}

/**
 * Starts a Tandem node in 'all' mode.
 *
 * @param {object} [options]
 * @param {string} [options.configYaml] YAML text written to a temp file and passed as --config
 * @param {string[]} [options.extraArgs] more command-line arguments
 * @returns {Promise<{baseUrl: string, apiUrl: string, tls: boolean, clientAuth: boolean,
 *   plainUrl: string|null, plainRefuses: boolean, log: () => string, stop: () => Promise<void>}>}
 *   baseUrl is https://… with http.tls-cert (tls true; clientAuth with http.tls-client-ca); plainUrl is
 *   the clear-text listener of http.plain-port (plainRefuses with http.tls-required), else null.
 */
export async function startTandem({ configYaml, extraArgs = [] } = {}) {
  if (!existsSync(JAR)) {
    throw new Error(`${JAR} does not exist: build it first (mvn -DskipTests package)`);
  }
  let tempDir;
  const args = ['-Xmx1g', '-jar', JAR,
    '--http-port', '0',
    // Any free bridge port: test files run in parallel, and the default 7000 may be taken.
    '--bridge-port', '0',
    '--cluster-name', `tandem-node-test-${randomBytes(6).toString('hex')}`,
    '--cluster-port', String(5900 + randomInt(1000))];
  if (configYaml !== undefined) {
    tempDir = mkdtempSync(join(tmpdir(), 'tandem-node-test-'));
    const file = join(tempDir, 'tandem.yaml');
    writeFileSync(file, configYaml);
    args.push('--config', file);
  }
  args.push(...extraArgs);

  const child = spawn(javaExecutable(), args, {
    cwd: PROJECT_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killOnExit = () => { try { child.kill('SIGKILL'); } catch { /* already gone */ } };
  process.on('exit', killOnExit);

  const lines = [];
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })));
  let onLine = () => {};
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    // Always drain both pipes: a JVM whose pipe is full blocks.
    stream.on('data', (data) => {
      partial += data;
      const parts = partial.split('\n');
      partial = parts.pop();
      for (const line of parts) {
        lines.push(line);
        if (lines.length > LOG_LINES_KEPT) lines.shift();
        if (process.env.TANDEM_SERVER_LOG) process.stderr.write(`[tandem] ${line}\n`);
        onLine(line);
      }
    });
  }
  const log = () => lines.join('\n');

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      let timer;
      const forced = new Promise((r) => { timer = setTimeout(() => { child.kill('SIGKILL'); r(); }, STOP_GRACE_MS); });
      await Promise.race([exited, forced]);
      clearTimeout(timer);
      await exited;
    }
    process.off('exit', killOnExit);
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  };

  let timer;
  try {
    const ready = await new Promise((resolveReady, rejectReady) => {
      // The router's line, then read on to the end of the report for the lines that follow it.
      let router = null;
      let plain = null;
      const scan = (line) => {
        router ??= READY.exec(line);
        plain ??= PLAIN.exec(line);
        if (router && REPORT_END.test(line)) resolveReady({ router, plain });
      };
      lines.forEach(scan);
      onLine = scan;
      timer = setTimeout(() => rejectReady(new Error(`Tandem did not print its ready report ('listening on' … 'Try:') within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS);
      child.once('error', rejectReady);
      exited.then(({ code, signal }) => rejectReady(new Error(`Tandem exited before it was ready (code ${code}, signal ${signal})`)));
    });
    onLine = () => {};
    const { router, plain } = ready;
    const baseUrl = router[1];
    return {
      baseUrl,
      apiUrl: `${baseUrl}/v1`,
      tls: router[2] !== undefined,
      clientAuth: router[3] !== undefined,
      plainUrl: plain ? plain[1] : null,
      plainRefuses: Boolean(plain && plain[2]),
      log,
      stop,
    };
  } catch (e) {
    await stop();
    e.message += `\n--- java ${args.join(' ')}\n--- last output:\n${log()}`;
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** The committed test PKI (src/test/resources/tls/make.sh): ca.pem, server.pem (localhost, 127.0.0.1), client.pem. */
export const TLS_DIR = join(PROJECT_DIR, 'src', 'test', 'resources', 'tls');

let AgentClass;

/**
 * An undici Agent — the dispatcher of Node's fetch, which the `openai` SDK uses — whose connections
 * trust `ca` and present `cert`/`key` (PEM text or Buffers; each optional). Pass it to the SDK as
 * `fetchOptions: { dispatcher }`, the way the SDK's README configures a proxy. The `undici` package is
 * no dependency here (and an Agent of another undici version need not work with Node's own fetch): the
 * class is that of the global dispatcher Node sets up on its first fetch. Close it when done.
 */
export async function tlsAgent({ ca, cert, key } = {}) {
  if (!AgentClass) {
    const globalDispatcher = Symbol.for('undici.globalDispatcher.1');
    if (!globalThis[globalDispatcher]) await fetch('data:,');
    const Agent = globalThis[globalDispatcher]?.constructor;
    if (typeof Agent !== 'function' || Agent.name !== 'Agent') {
      throw new Error(`Node's fetch has no undici Agent as its global dispatcher (${Agent?.name})`);
    }
    AgentClass = Agent;
  }
  return new AgentClass({ connect: { ca, cert, key } });
}

/** An `openai` SDK client for a started server; no retries, so every failure shows. */
export function clientFor(server, { apiKey = 'x', ...rest } = {}) {
  return new OpenAI({ baseURL: server.apiUrl, apiKey, maxRetries: 0, timeout: 30_000, ...rest });
}

/** Collects a stream from the SDK (an async iterable of chunks) into an array, bounded. */
export async function collect(stream, maxChunks = 10_000) {
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    if (chunks.length > maxChunks) throw new Error(`more than ${maxChunks} chunks`);
  }
  return chunks;
}

/**
 * Picks a 2-3 character stop string that occurs in `text` at or after its middle, made only of
 * printable ASCII (so it cannot straddle a multi-byte character or a replacement character) and
 * whose first occurrence leaves a non-empty prefix. Prefers one whose first character already
 * occurs in that prefix, so a server that holds back a possible start of the stop string must also
 * release it. Returns {stop, prefix} or null.
 */
export function pickStop(text) {
  const printable = (s) => /^[\x21-\x7e]+$/.test(s);
  const mid = Math.floor(text.length / 2);
  const candidates = [];
  for (const len of [3, 2]) {
    for (let i = mid; i + len <= text.length; i++) {
      const stop = text.slice(i, i + len);
      const first = text.indexOf(stop);
      if (printable(stop) && first > 0) candidates.push({ stop, prefix: text.slice(0, first) });
    }
  }
  return candidates.find((c) => c.prefix.includes(c.stop[0])) ?? candidates[0] ?? null;
}

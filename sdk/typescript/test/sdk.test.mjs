// The SDK against a real server: the spec's three examples as they are written there, then
// fetch mode, an error, a document upload, a memory and a records grep.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Naturali, waitForDocument } from '../dist/index.js';
import { startServer } from './server.mjs';
import { createServer } from 'node:net';

/** A port nothing listens on: bound, then closed. */
function closedPort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

let server;
let naturali;

before(async () => {
  server = await startServer();
  process.env.NATURALI_BASE_URL = server.baseUrl;
  process.env.NATURALI_TOKEN = server.token;
  naturali = new Naturali(); // baseUrl and token from the environment
});

after(() => server?.stop());

test('spec example: search the whole corpus', async () => {
  const lines = [];
  const log = console.log;
  console.log = (...args) => lines.push(args);
  try {
    // --- copied from the spec ---
    const { data } = await naturali.knowledge.searchKnowledge({
      path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
      body: { query: 'how long do refunds take', limit: 5 },
    });

    for (const hit of data?.results ?? []) {
      console.log(hit.score, hit.path, hit.content?.slice(0, 80));
    }
    // ---
  } finally {
    console.log = log;
  }
  assert.ok(lines.length > 0 && lines.length <= 5);
  assert.equal(lines[0][1], '/handbook/support/refunds.md');
  assert.equal(typeof lines[0][0], 'number');
});

test('spec example: search inside one part of the corpus', async () => {
  // --- copied from the spec ---
  const { data } = await naturali.knowledge.searchKnowledge({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: {
      query: 'escalation path',
      document_paths: ['/handbook/support/'],
      min_similarity: 0.5,
    },
  });
  // ---
  assert.ok(data.results.length > 0);
  assert.ok(data.results.every((hit) => hit.path.startsWith('/handbook/support/')));
});

test('spec example: fetch specific documents without ranking', async () => {
  // --- copied from the spec ---
  const { data } = await naturali.knowledge.searchKnowledge({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { document_ids: ['doc_V1StGXR8Z5jdHi6B'] },
  });
  // ---
  assert.ok(data.results.length > 0);
  assert.ok(data.results.every((hit) => hit.document_id === 'doc_V1StGXR8Z5jdHi6B'));
  assert.ok(data.results.every((hit) => hit.similarity_score === undefined)); // fetch mode
  const ordinals = data.results.map((hit) => hit.chunk_id);
  assert.equal(new Set(ordinals).size, ordinals.length);
});

test('an invalid request comes back as { error } with the error shape', async () => {
  const { data, error, response } = await naturali.knowledge.searchKnowledge({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { query: 'refunds', limit: 500 },
  });
  assert.equal(data, undefined);
  assert.equal(response.status, 400);
  assert.equal(error.error.code, 'invalid_value');
  assert.equal(error.error.param, 'limit');
});

test('a server that cannot be reached comes back as { error } with the same shape', async () => {
  const port = await closedPort();
  const offline = new Naturali({ baseUrl: `http://127.0.0.1:${port}`, token: 'nk_none' });
  const { data, error, response } = await offline.knowledge.searchKnowledge({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { query: 'refunds' },
  });
  assert.equal(data, undefined);
  assert.equal(response, undefined);
  assert.equal(error.error.code, 'connection_error');
  assert.equal(error.error.type, 'connection_error');
  assert.equal(error.error.param, null);
  const url = `http://127.0.0.1:${port}/v1/projects/proj_V1StGXR8Z5jdHi6B/knowledge/search`;
  assert.equal(error.url, url);
  assert.ok(error.error.message.startsWith(`cannot connect (fetch failed: ECONNREFUSED): ${url}`));
  assert.match(error.error.message, /check that the naturali server is running/);
});

test('a document upload is searchable at once', async () => {
  const created = await naturali.documents.createDocument({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { path: '/policies/travel.md', content: 'Travel is booked through the travel desk.' },
  });
  assert.equal(created.response.status, 201);
  assert.equal(created.data.path, '/policies/travel.md');
  const { data } = await naturali.knowledge.searchKnowledge({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { query: 'who books travel', document_ids: [created.data.id] },
  });
  assert.equal(data.results[0].document_id, created.data.id);
});

test('a large upload is answered 202 and followed to ready', async () => {
  const content = Array.from(
    { length: 40 },
    (_, n) => `## Section ${n}\n\nThe night shift hands over pager duty ${n} with a written log.`,
  ).join('\n\n'); // a heading starts each chunk: 40 chunks, embedded in the background
  const created = await naturali.documents.createDocument({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { path: '/ops/pager.md', content },
  });
  assert.equal(created.response.status, 202);
  assert.equal(created.data.status, 'processing');
  const { data, error } = await waitForDocument(naturali, {
    project_id: 'proj_V1StGXR8Z5jdHi6B',
    document_id: created.data.id,
  });
  assert.equal(error, undefined);
  assert.equal(data.status, 'ready');
  assert.equal(data.chunk_count, created.data.chunks_total);
});

test('a read token made through the SDK reads and cannot write', async () => {
  const made = await naturali.tokens.createToken({ body: { name: 'ts-reader', scope: 'read' } });
  assert.equal(made.response.status, 201);
  const reader = new Naturali({ baseUrl: server.baseUrl, token: made.data.token });
  const read = await reader.knowledge.searchKnowledge({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { query: 'refunds' },
  });
  assert.equal(read.response.status, 200);
  const { error } = await reader.documents.createDocument({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B' },
    body: { path: '/nope.md', content: 'x' },
  });
  assert.equal(error.error.code, 'insufficient_scope');
  const listed = await naturali.tokens.listTokens();
  assert.ok(listed.data.data.some((t) => t.name === 'ts-reader' && t.token === undefined));
  await naturali.tokens.revokeToken({ path: { token_id: made.data.id } });
});

test('a memory, then a records grep in its store', async () => {
  const memory = await naturali.memoryStores.createMemory({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B', memory_store_id: server.storeId },
    body: { content: 'The quarterly review moved to Thursday.' },
  });
  assert.equal(memory.response.status, 201);
  const { data } = await naturali.records.knowledgeGrep({
    path: { project_id: 'proj_V1StGXR8Z5jdHi6B', memory_store_id: server.storeId },
    body: { query: 'quarterly review' },
  });
  assert.deepEqual(
    data.hits.map((hit) => hit.id),
    [memory.data.id],
  );
  assert.equal(data.index.state, 'ready');
});

test("the README's example runs as written, from a project of its own", async () => {
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join, resolve } = await import('node:path');
  const sdk = resolve(import.meta.dirname, '..');
  const readme = readFileSync(join(sdk, '..', '..', 'README.md'), 'utf8');
  const [, example] = readme.match(/```ts\n([\s\S]*?)```/);
  // Another folder that installed the SDK by path (`npm install <clone>/sdk/typescript`
  // links it), compiled strictly with the SDK's own TypeScript, then run with node.
  const home = mkdtempSync(join(tmpdir(), 'naturali-readme-'));
  mkdirSync(join(home, 'node_modules'));
  symlinkSync(sdk, join(home, 'node_modules', 'naturali'));
  writeFileSync(join(home, 'package.json'), '{"type": "module"}');
  writeFileSync(join(home, 'example.ts'), example);
  const tsc = join(sdk, 'node_modules', 'typescript', 'bin', 'tsc');
  const options = ['--strict', '--target', 'es2022', '--module', 'nodenext'];
  options.push('--typeRoots', join(sdk, 'node_modules', '@types'), '--types', 'node');
  execFileSync(process.execPath, [tsc, ...options, '--outDir', 'out', 'example.ts'], { cwd: home });
  const env = { ...process.env, PROJECT_ID: 'proj_V1StGXR8Z5jdHi6B' };
  const out = execFileSync(process.execPath, ['out/example.js'], { cwd: home, env, encoding: 'utf8' });
  const lines = out.trim().split('\n');
  assert.match(lines[0], /^0\.\d+ \/handbook\/support\/refunds\.md$/);
  assert.equal(lines.at(-1), 'undefined'); // no error
});

// A real `naturali serve` for the SDK tests: a fresh data dir seeded by fixture.py (the
// spec's project and document ids), started on a free port, stopped after the tests.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const PYTHON = process.env.NATURALI_PYTHON ?? join(ROOT, '.venv', 'bin', 'python');

function freePort() {
  return new Promise((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

export async function startServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'naturali-sdk-'));
  const token = 'nk_sdk_' + randomBytes(24).toString('hex');
  const env = { ...process.env, NATURALI_DATA_DIR: dataDir, NATURALI_BOOTSTRAP_TOKEN: token };
  delete env.NATURALI_DATABASE_URL;
  const storeId = execFileSync(PYTHON, [join(import.meta.dirname, 'fixture.py'), dataDir], {
    env,
    encoding: 'utf8',
  }).trim();
  const port = await freePort();
  const child = spawn(PYTHON, ['-m', 'naturali.cli.main', 'serve', '--port', String(port)], {
    env,
    stdio: 'ignore',
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(baseUrl + '/healthz')).ok) {
        return { baseUrl, token, storeId, stop: () => child.kill('SIGTERM') };
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error('naturali serve did not start');
}

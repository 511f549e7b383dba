/**
 * The naturali TypeScript SDK: `new Naturali({ baseUrl, token })`, then one group per API tag
 * (`naturali.knowledge.searchKnowledge(...)`, `naturali.documents...`, `naturali.memoryStores...`,
 * `naturali.records...`, `naturali.dates...`, `naturali.projects...`, `naturali.tokens...`). Every call takes
 * `{ path, query, body }` and resolves to `{ data, error, response }`; `error` carries the API's
 * error shape, and a server that cannot be reached the same shape with code `connection_error`
 * (as the Python SDK's NaturaliConnectionError). `waitForDocument` follows an upload answered
 * `202` to ready. Everything under `./generated` is generated from the server's OpenAPI.
 */
import { createClient, createConfig } from './generated/client/index.js';
import type { Client } from './generated/client/index.js';
import { Dates, Documents, Knowledge, MemoryStores, Projects, Records, Tokens } from './generated/sdk.gen.js';

export * from './generated/index.js';

export interface NaturaliOptions {
  /** The server, e.g. `http://127.0.0.1:8600`; defaults to `NATURALI_BASE_URL`. */
  baseUrl?: string;
  /** A bearer token; defaults to `NATURALI_TOKEN`. */
  token?: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

const DEFAULT_BASE_URL = 'http://127.0.0.1:8600';

/** What a call resolves with as `error` when the server could not be reached: the API's error
 * shape (so `error.error.code` reads the same either way) and the URL that was tried. */
export interface ConnectionError {
  error: { type: 'connection_error'; code: 'connection_error'; message: string; param: null };
  url: string;
}

function connectionError(cause: unknown, request: Request): ConnectionError {
  const reason = cause instanceof Error ? describe(cause) : String(cause);
  return {
    error: {
      type: 'connection_error',
      code: 'connection_error',
      message:
        `cannot connect (${reason}): ${request.url}; check that the naturali server is running ` +
        'there (naturali serve) and the baseUrl or NATURALI_BASE_URL',
      param: null,
    },
    url: request.url,
  };
}

/** fetch's TypeError says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND…) is its cause. */
function describe(error: Error): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${error.message}: ${detail}` : error.message;
}

export class Naturali {
  readonly client: Client;
  readonly knowledge: Knowledge;
  readonly documents: Documents;
  readonly memoryStores: MemoryStores;
  readonly projects: Projects;
  readonly records: Records;
  readonly dates: Dates;
  readonly tokens: Tokens;

  constructor(options: NaturaliOptions = {}) {
    const env = typeof process === 'undefined' ? {} : process.env;
    const token = options.token ?? env.NATURALI_TOKEN;
    this.client = createClient(
      createConfig({
        baseUrl: (options.baseUrl ?? env.NATURALI_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
        auth: () => token,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    );
    const client = this.client;
    // Only a failed fetch has no response; an API error keeps the server's own body.
    client.interceptors.error.use((error, response, request) =>
      response === undefined ? connectionError(error, request) : error,
    );
    this.knowledge = new Knowledge({ client });
    this.documents = new Documents({ client });
    this.memoryStores = new MemoryStores({ client });
    this.projects = new Projects({ client });
    this.records = new Records({ client });
    this.dates = new Dates({ client });
    this.tokens = new Tokens({ client });
  }
}

export interface WaitOptions {
  /** Give up after this many milliseconds (default 10 minutes). */
  timeoutMs?: number;
  /** Look again after this many milliseconds (default 500). */
  pollMs?: number;
}

/** A document once its newest upload is ready: an upload answered `202` is embedded in the
 * background (`status: "processing"`). Resolves `{ data }` when ready, `{ error }` with the
 * job's error shape when it failed (or the call's own error), and rejects on timeout. */
export async function waitForDocument(
  naturali: Naturali,
  where: { project_id: string; document_id: string },
  options: WaitOptions = {},
) {
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  for (;;) {
    const answer = await naturali.documents.getDocument({ path: where });
    if (answer.error || !answer.data) return answer;
    if (answer.data.status === 'ready') return answer;
    if (answer.data.status === 'failed') {
      return { ...answer, data: undefined, error: { error: answer.data.error } };
    }
    if (Date.now() > deadline) throw new Error(`document ${where.document_id} is still processing`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
}

export default Naturali;

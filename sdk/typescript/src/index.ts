/**
 * The naturali TypeScript SDK: `new Naturali({ baseUrl, token })`, then one group per API tag
 * (`naturali.knowledge.searchKnowledge(...)`, `naturali.documents...`, `naturali.memoryStores...`,
 * `naturali.records...`, `naturali.dates...`, `naturali.projects...`). Every call takes
 * `{ path, query, body }` and resolves to `{ data, error, response }`; `error` carries the API's
 * error shape. Everything under `./generated` is generated from the server's OpenAPI.
 */
import { createClient, createConfig } from './generated/client/index.js';
import type { Client } from './generated/client/index.js';
import { Dates, Documents, Knowledge, MemoryStores, Projects, Records } from './generated/sdk.gen.js';

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

export class Naturali {
  readonly client: Client;
  readonly knowledge: Knowledge;
  readonly documents: Documents;
  readonly memoryStores: MemoryStores;
  readonly projects: Projects;
  readonly records: Records;
  readonly dates: Dates;

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
    this.knowledge = new Knowledge({ client });
    this.documents = new Documents({ client });
    this.memoryStores = new MemoryStores({ client });
    this.projects = new Projects({ client });
    this.records = new Records({ client });
    this.dates = new Dates({ client });
  }
}

export default Naturali;

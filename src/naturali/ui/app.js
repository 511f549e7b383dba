// The Control UI: a single page on the public API only (what it shows is what any client
// gets). The token lives in sessionStorage (this tab only). Routes are URL hashes.
import { markdown } from './markdown.js';

const state = {
  token: sessionStorage.getItem('naturali.token'),
  project: sessionStorage.getItem('naturali.project'),
  role: sessionStorage.getItem('naturali.role'),
  projectName: sessionStorage.getItem('naturali.projectName'),
};
const main = document.getElementById('main');

// --- helpers ---------------------------------------------------------------------------------
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'html') el.innerHTML = value;
    else if (key === 'style') el.style.cssText = value; // CSSOM: allowed by the page's CSP
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// replaceChildren, with arrays flattened and absent parts (null, false) left out.
function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

// An error is shown where its action was: in the slot of the form that asked (``errorSlot``),
// else in the banner under the header; either is scrolled into view.
let currentSlot = null;
function showError(message, slot = currentSlot) {
  const banner = document.getElementById('error');
  for (const box of [banner, ...document.querySelectorAll('.error-slot')]) {
    box.textContent = '';
    box.hidden = true;
  }
  if (!message) return;
  const box = slot && document.contains(slot) ? slot : banner;
  box.textContent = message;
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
}

function errorSlot() {
  return h('div', { class: 'error-slot', role: 'alert', hidden: true });
}

class ApiError extends Error {}

async function api(method, path, body, { form } = {}) {
  const headers = { Authorization: `Bearer ${state.token}` };
  const init = { method, headers };
  if (form) init.body = form;
  else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = data?.error?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiError(message);
  }
  return data;
}

async function guarded(fn, slot = null) {
  currentSlot = slot;
  showError('');
  try {
    return await fn();
  } catch (error) {
    showError(error instanceof ApiError ? error.message : String(error), slot);
    return undefined;
  }
}

const project = () => `/v1/projects/${encodeURIComponent(state.project)}`;
const canWrite = () => state.role === 'owner' || state.role === 'editor';
const list = (text) =>
  text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);

function field(label, input) {
  return h('label', {}, label, input);
}

function input(name, attrs = {}) {
  return h('input', { name, id: `f-${name}`, ...attrs });
}

function values(form) {
  return Object.fromEntries(new FormData(form).entries());
}

// Highlight the query in text: the whole query as a phrase where it occurs, else its words.
// (Offsets locate a snippet in its field; where the match is inside it is found here.)
function highlightWords(text, query) {
  const words = (query || '').match(/[\p{L}\p{N}]+/gu) ?? [];
  if (!words.length) return [text];
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const phrase = new RegExp(`(${escaped.join('[^\\p{L}\\p{N}]+')})`, 'giu');
  const pattern = phrase.test(text) ? phrase : new RegExp(`(${escaped.filter((w) => w.length > 2).join('|') || escaped.join('|')})`, 'giu');
  return text.split(pattern).map((part, i) => (i % 2 ? h('mark', {}, part) : part));
}

// Mark the words the server says hold the query's terms (``explain.matches``: UTF-16 offsets,
// as JavaScript strings count) — whole tokens as the lexical leg made them, never parts of words
// and never stopwords. Without them nothing is marked.
function highlightSpans(text, matches) {
  const parts = [];
  let at = 0;
  for (const m of [...(matches ?? [])].sort((a, b) => a.start - b.start)) {
    if (m.start < at || m.end > text.length) continue;
    parts.push(text.slice(at, m.start), h('mark', { title: `term: ${m.term}` }, text.slice(m.start, m.end)));
    at = m.end;
  }
  parts.push(text.slice(at));
  return parts;
}

// A records snippet: its place in the field (UTF-16 offsets, as JS strings count), its line
// range, and the query highlighted in it.
function snippet(s, query) {
  const lines = s.lineStart ? ` · lines ${s.lineStart}–${s.lineEnd}` : '';
  return h('div', {},
    h('div', { class: 'snippet' }, s.matchLocated ? highlightWords(s.text, query) : s.text),
    h('div', { class: 'meta' }, `${s.field} · UTF-16 ${s.start}–${s.end}${lines}`));
}

// --- sign in and project ---------------------------------------------------------------------
function signIn() {
  const form = h('form', { class: 'panel', onsubmit: async (event) => {
    event.preventDefault();
    state.token = values(form).token.trim();
    const projects = await guarded(() => api('GET', '/v1/projects'));
    if (!projects) return;
    sessionStorage.setItem('naturali.token', state.token);
    pickProject(projects.data);
  } },
  h('h1', {}, 'Sign in'),
  field('Token', input('token', { type: 'password', required: true, autocomplete: 'off' })),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Sign in')));
  fill(main, form);
  form.querySelector('input').focus();
}

function pickProject(projects) {
  fill(main, h('div', { class: 'panel' },
    h('h1', {}, 'Projects'),
    projects.length ? h('ul', {}, projects.map((p) => h('li', {},
      h('a', { href: '#/search', onclick: () => choose(p) }, p.name), ` (${p.role}, ${p.id})`)))
      : h('p', {}, 'No project yet.')));
}

function choose(p) {
  Object.assign(state, { project: p.id, role: p.role, projectName: p.name });
  sessionStorage.setItem('naturali.project', p.id);
  sessionStorage.setItem('naturali.role', p.role);
  sessionStorage.setItem('naturali.projectName', p.name);
}

// --- search ----------------------------------------------------------------------------------
const RECENT = 'naturali.recentQueries';  // kept in this browser only, never sent anywhere
const recentQueries = () => JSON.parse(localStorage.getItem(RECENT) || '[]');
function remember(query) {
  const kept = [query, ...recentQueries().filter((q) => q !== query)].slice(0, 10);
  localStorage.setItem(RECENT, JSON.stringify(kept));
}

function searchPage() {
  const narrow = window.matchMedia('(max-width: 700px)').matches;
  const slot = errorSlot();
  const docs = once(firstDocuments);
  // The memory stores to search, ticked from the project's (none ticked: every store).
  const stores = h('fieldset', { class: 'stores' }, h('legend', {}, 'Memory stores (none ticked: all)'));
  api('GET', `${project()}/memory_stores`).then((got) => stores.append(...got.data.map((st) =>
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'memory_store_ids', value: st.id }), st.name))), () => null);
  // novalidate: the API's own limits and message are the ones shown, under the form.
  const form = h('form', { class: 'panel', 'aria-label': 'Search', novalidate: true, onsubmit: (event) => { event.preventDefault(); run(); } },
    h('div', { class: 'query-row' },
      field('Query (empty: fetch mode)', input('query', { type: 'search', list: 'recent-queries', autocomplete: 'off' })),
      h('button', { type: 'submit' }, 'Search')),
    h('datalist', { id: 'recent-queries' }, recentQueries().map((q) => h('option', { value: q }))),
    // Filters fold away on a phone, so that the results come right after the query.
    h('details', { class: 'filters', open: !narrow }, h('summary', {}, 'Filters and limits'),
      h('div', { class: 'fields' },
        field('Limit', input('limit', { type: 'number', min: 1, max: 100, value: 10 })),
        field('Min similarity', input('min_similarity', { type: 'number', step: '0.05', min: 0, max: 1 })),
        field('Document paths (prefixes)', input('document_paths', { placeholder: '/handbook/, /faq/', list: 'folder-options' })),
        field('Document ids', input('document_ids', { list: 'document-options' })),
        field('Tags (key=value, …)', input('tags', { list: 'tag-options' })),
        stores,
        h('label', { class: 'check' }, input('include_documents', { type: 'checkbox', checked: true }), 'Documents'),
        h('label', { class: 'check' }, input('include_memories', { type: 'checkbox', checked: true }), 'Memories'))),
    picker('folder-options', folderOptions), picker('document-options', () => docs().then(documentIds)),
    picker('tag-options', () => docs().then(documentTags)),
    slot);
  const results = h('div', { id: 'results', onkeydown: stepThroughResults });
  fill(main, h('h1', {}, 'Search'), form, results);
  form.elements.query.focus();

  async function run() {
    const body = searchBody(values(form), form);
    const path = `${project()}/knowledge/search`;
    const data = await guarded(() => api('POST', path, body), slot);
    if (!data) return;
    if (body.query) remember(body.query);
    const bm25Top = Math.max(0, ...data.results.map((r) => r.explain?.bm25 ?? 0));
    fill(results,
      h('p', { class: 'status' }, `${data.results.length} result(s)${body.query ? '' : ' — fetch mode, stable order'}`),
      requestTools(path, body, data),
      data.results.map((hit, i) => searchHit(hit, i, bm25Top)));
  }
}

// The request as the form describes it; the UI always asks why each result ranked.
function searchBody(v, form) {
  const body = { limit: Number(v.limit || 10), explain: true };
  if (v.query.trim()) body.query = v.query.trim();
  if (v.min_similarity !== '') body.min_similarity = Number(v.min_similarity);
  for (const key of ['document_paths', 'document_ids']) {
    if (list(v[key] ?? '').length) body[key] = list(v[key]);
  }
  const stores = [...form.querySelectorAll('input[name=memory_store_ids]:checked')].map((box) => box.value);
  if (stores.length) body.memory_store_ids = stores;
  if (list(v.tags ?? '').length) {
    body.tags = Object.fromEntries(list(v.tags).map((pair) => pair.split('=').map((s) => s.trim())));
  }
  body.include_documents = form.elements.include_documents.checked;
  body.include_memories = form.elements.include_memories.checked;
  return body;
}

// Up and down arrows move between results; Enter on one opens it.
function stepThroughResults(event) {
  const hits = [...document.querySelectorAll('#results article.hit')];
  const at = hits.indexOf(document.activeElement);
  if (at < 0) return;
  const next = { ArrowDown: at + 1, ArrowUp: at - 1 }[event.key];
  if (next !== undefined && hits[next]) { event.preventDefault(); hits[next].focus(); }
  if (event.key === 'Enter' && event.target === hits[at]) hits[at].querySelector('a.hit-link')?.click();
}

// The exact request shown, to run elsewhere: curl, the Python SDK, the TypeScript SDK (the
// token left as a variable), and the raw request and response.
function requestTools(path, body, data) {
  const url = `${location.origin}${path}`;
  const json = JSON.stringify(body);
  const projectId = state.project;
  const pyArgs = [`project_id=${JSON.stringify(projectId)}`,
    ...Object.entries(body).map(([k, v]) => `${k}=${pythonValue(v)}`)].join(',\n    ');
  const tsCall = JSON.stringify({ path: { project_id: projectId }, body }, null, 2);
  const forms = {
    curl: `curl -sS -X POST '${url}' \\\n  -H "Authorization: Bearer $NATURALI_TOKEN" \\\n  -H 'Content-Type: application/json' \\\n  -d '${json.replace(/'/g, "'\\''")}'`,
    Python: `import os\n\nimport naturali\n\nclient = naturali.Client(base_url="${location.origin}", token=os.environ["NATURALI_TOKEN"])\nresponse = client.knowledge.search_knowledge(\n    ${pyArgs},\n)`,
    TypeScript: `import { Naturali } from 'naturali';\n\nconst naturali = new Naturali({ baseUrl: '${location.origin}', token: process.env.NATURALI_TOKEN });\nconst { data, error } = await naturali.knowledge.searchKnowledge(${tsCall});`,
  };
  const copied = h('span', { class: 'status', 'aria-live': 'polite' });
  return h('details', { class: 'panel request-tools' }, h('summary', {}, 'This request: copy it, see it raw'),
    h('div', { class: 'actions' }, Object.entries(forms).map(([name, text]) => h('button', {
      type: 'button', class: 'secondary', onclick: async () => {
        await navigator.clipboard.writeText(text).catch(() => null);
        copied.textContent = `copied as ${name}`;
      } }, `Copy as ${name}`)), copied),
    Object.entries(forms).map(([name, text]) => h('pre', { class: 'code', 'data-form': name, 'aria-label': `as ${name}` }, text)),
    h('h3', {}, 'Raw request'), h('pre', { class: 'code', id: 'raw-request' }, `POST ${path}\n${JSON.stringify(body, null, 2)}`),
    h('h3', {}, 'Raw response'), h('pre', { class: 'code', id: 'raw-response' }, JSON.stringify(data, null, 2)));
}

function pythonValue(value) {
  if (value === true) return 'True';
  if (value === false) return 'False';
  return JSON.stringify(value);
}

// Files whose passages are code or data: shown in monospace, their lines as they are.
const CODE = /\.(py|js|ts|go|rs|java|c|cpp|h|rb|sh|sql|json|ya?ml|toml|xml|csv|tsv)$/i;

function searchHit(hit, i, bm25Top) {
  const isDoc = hit.source_type === 'document';
  const where = isDoc
    ? h('a', { href: `#/document/${hit.document_id}?chunk=${encodeURIComponent(hit.chunk_id)}${hit.page ? `&page=${hit.page}` : ''}`, class: 'hit-link' },
      hit.path, hit.page ? ` (page ${hit.page})` : '')
    : h('a', { href: `#/record/${hit.memory_store_id}/${encodeURIComponent(hit.memory_id)}`, class: 'hit-link' },
      `${hit.memory_store_name} · ${hit.memory_id}`);
  const code = isDoc && CODE.test(hit.path);
  const title = h('h3', {}, isDoc ? hit.title : hit.memory_id, ' ');
  if (!isDoc) { // a memory is a record of its store: its title is the record's
    api('GET', `${project()}/memory_stores/${hit.memory_store_id}/knowledge/records/${encodeURIComponent(hit.memory_id)}`)
      .then((record) => { title.firstChild.textContent = record.title; }, () => {});
  }
  return h('article', { class: 'hit', tabindex: 0, 'aria-label': `result ${i + 1}: ${isDoc ? hit.path : `memory ${hit.memory_id}`}` },
    title,
    h('div', { class: 'meta' }, h('span', {}, hit.source_type), where,
      h('span', {}, `score ${hit.score.toFixed(4)}`),
      hit.similarity_score !== undefined ? h('span', {}, `similarity ${hit.similarity_score.toFixed(3)}`) : null),
    h('div', { class: `snippet${code ? ' code' : ''}` }, ...snippetOf(hit, isDoc)),
    isDoc ? h('div', {}, Object.entries(hit.tags ?? {}).map(([k, v]) => h('span', { class: 'tag' }, `${k}:${v}`))) : null,
    hit.explain ? why(hit.explain, bm25Top) : null);
}

function snippetOf(hit, isDoc) {
  const raw = { text: hit.content ?? '', matches: hit.explain?.matches };
  const shown = isDoc && /\.(md|markdown)$/i.test(hit.path) ? plainMarkdown(raw.text, raw.matches) : raw;
  return highlightSpans(shown.text, shown.matches);
}

// A Markdown passage as the text a reader sees — no heading marks, strong emphasis or code
// ticks — with the matched terms' offsets (the server's, on the raw text) moved with it.
function plainMarkdown(text, matches) {
  const cut = [];
  for (const mark of [/^#{1,6}[ \t]+/gm, /\*\*|__|`/g]) {
    for (const m of text.matchAll(mark)) cut.push([m.index, m.index + m[0].length]);
  }
  cut.sort((a, b) => a[0] - b[0]);
  const moved = (i) => i - cut.filter(([, end]) => end <= i).reduce((n, [start, end]) => n + end - start, 0);
  let plain = '';
  let from = 0;
  for (const [start, end] of cut) {
    if (start < from) continue;
    plain += text.slice(from, start);
    from = end;
  }
  plain += text.slice(from);
  return { text: plain, matches: (matches ?? []).map((m) => ({ ...m, start: moved(m.start), end: moved(m.end) })) };
}

// Why this hit: each leg's rank and score, drawn as a bar so the two compare at a glance (the
// cosine on 0–1, BM25 against the best BM25 of these results), the fused score, the terms.
function why(e, bm25Top) {
  const bar = (name, value, share, rank) => h('div', { class: 'leg' },
    h('span', { class: 'leg-name' }, name),
    h('span', { class: 'bar', role: 'img', 'aria-label': `${name} ${value ?? 'none'}` },
      h('span', { class: 'fill', style: `width: ${Math.round(100 * Math.max(0, Math.min(1, share)))}%` })),
    h('span', { class: 'leg-value' }, value === null ? '—' : value.toFixed(4), rank ? ` (rank ${rank})` : ' (not proposed)'));
  const terms = [...new Set((e.matches ?? []).map((m) => m.term))];
  return h('details', { class: 'why' }, h('summary', {}, 'Why this hit'),
    bar('vector', e.cosine, e.cosine ?? 0, e.vector_rank),
    bar('lexical', e.bm25, bm25Top ? (e.bm25 ?? 0) / bm25Top : 0, e.lexical_rank),
    h('div', { class: 'meta' }, h('span', {}, `fused ${e.fused.toFixed(4)}`),
      e.rerank !== null && e.rerank !== undefined ? h('span', {}, `rerank ${e.rerank.toFixed(4)}`) : null,
      h('span', {}, `matched terms: ${terms.length ? terms.join(', ') : 'none'}`)));
}

// --- the project at a glance ------------------------------------------------------------------
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

async function projectPage() {
  const [o, p] = await Promise.all([guarded(() => api('GET', `${project()}/overview`)), guarded(() => api('GET', project()))]);
  if (!o || !p) return;
  const ix = o.index;
  const limited = p.path_prefixes != null || p.memory_store_ids != null;
  const moving = p.embedding_model_next ? ` — moving to ${p.embedding_model_next}: ${p.chunks_to_reembed} passages to embed again` : '';
  const facts = [
    ['Documents', `${o.documents} (${mib(o.bytes)})`], ['Chunks', o.chunks], ['Memories', o.memories],
    ['Embedding model', `${p.embedding_model}: ${o.embedding_model.id} (${o.embedding_model.dimension} dimensions)${moving}`],
    // A token or membership limited to some of the project sees its figures, not the index's.
    limited ? ['Your grant', `documents: ${reach(p.path_prefixes, 'all')} · memory stores: ${reach(p.memory_store_ids, 'all')}`] : null,
    ['Search index', ix.loaded ? (limited ? 'loaded on this server' : `loaded on this server: ${ix.rows} rows, ${mib(ix.memory_bytes)} held, ${mib(ix.mapped_bytes)} mapped`)
      : 'not loaded on this server (its next search loads it)'],
    ['Vector leg', ix.loaded ? (ix.vector_leg === 'database' ? 'PostgreSQL (pgvector)' : 'this server') : '—'],
    ['Index budget', `${mib(ix.budget_bytes)} for every project on this server`],
    ['Ingestion', `${o.ingestion.queued} queued · ${o.ingestion.running} running · ${o.ingestion.failed} failed`],
  ];
  const jobs = h('tbody');
  const stores = h('tbody');
  const sources = h('tbody');
  fill(main, h('h1', {}, 'Project'),
    h('table', { class: 'facts' }, h('tbody', {}, facts.filter(Boolean).map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))))),
    h('h2', {}, 'Documents by path'), h('div', { class: 'panel tree' }, folderLevel('/')),
    h('h2', {}, 'Ingestion jobs'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Document', 'State', 'Progress', 'Queued at'].map((t) => h('th', {}, t)))), jobs),
    pager(jobs, (cursor) => api('GET', `${project()}/ingest_jobs?${new URLSearchParams({ limit: 20, ...(cursor ? { cursor } : {}) })}`), jobRow, 'No job waiting or failed.'),
    h('h2', {}, 'Memory stores'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Store', 'Memories', 'Records', 'Id'].map((t) => h('th', {}, t)))), stores),
    pager(stores, pagesOf(o.memory_stores, 20), storeRow, 'No memory store yet.'),
    h('h2', {}, 'Sources'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Path', 'Last sync', '', 'Repository', 'Next sync'].map((t) => h('th', {}, t)))), sources),
    pager(sources, async () => api('GET', `${project()}/sources`).then((got) => ({ data: got.data, next_cursor: null })), sourceRow, 'No source yet (naturali sources create).'));
}

/** A source with its last sync — when, what changed, what failed — its next one, and Sync now. */
function sourceRow(s) {
  const run = s.last_run;
  const last = !run ? h('td', {}, s.sync_requested ? 'waiting for a server' : 'never synced')
    : run.error ? h('td', { class: 'status-failed' }, `${run.at}: failed: ${run.error}`)
    : h('td', { class: Object.keys(run.failed).length ? 'status-warning' : '' },
      `${run.at}: ${run.created} created, ${run.updated} updated, ${run.deleted} deleted, ${run.unchanged} unchanged`,
      ...Object.entries(run.failed).map(([path, why]) => h('span', { class: 'warning' }, `${path}: ${why}`)));
  const sync = h('button', { type: 'button', class: 'secondary', onclick: async () => {
    sync.disabled = true;
    const done = await guarded(() => api('POST', `${project()}/sources/${s.id}/sync`));
    sync.textContent = done ? 'Sync requested' : 'Sync now';
  } }, 'Sync now');
  const ref = s.ref ? `@${s.ref}` : '';
  // On a phone the first three columns show: where its documents are, its last sync, Sync now.
  return h('tr', {}, h('td', {}, h('a', { href: `#/documents?prefix=${encodeURIComponent(s.path)}` }, s.path)),
    last, h('td', {}, sync), h('td', { class: 'wrap' }, `${s.url}${ref}${s.folder ? ` (${s.folder}/)` : ''}`),
    h('td', {}, s.next_run_at ?? (s.sync_requested ? 'now' : 'manual only')));
}

// A list loaded a page at a time: ``load(cursor)`` answers {data, next_cursor}; "More" asks on.
function pager(body, load, row, none) {
  const more = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => next() }, 'More');
  const empty = h('p', { class: 'status', hidden: true }, none);
  let cursor = null;
  async function next() {
    const page = await guarded(() => load(cursor));
    if (!page) return;
    body.append(...page.data.map(row));
    cursor = page.next_cursor;
    more.hidden = !cursor;
    empty.hidden = [...body.children].some((child) => !child.hidden);
  }
  next();
  return h('div', { class: 'actions' }, empty, more);
}

// A list already at hand, served as pages (a cursor is the next page's start).
const pagesOf = (items, size) => async (cursor) => {
  const start = Number(cursor ?? 0);
  return { data: items.slice(start, start + size), next_cursor: start + size < items.length ? String(start + size) : null };
};

function jobRow(j) {
  const ocr = j.pages_total && j.pages_done < j.pages_total;
  const [done, total] = ocr ? [j.pages_done, j.pages_total] : [j.chunks_done, j.chunks_total];
  const what = ocr ? ' pages by OCR' : '';
  const progress = h('progress', { max: total || 1, value: done, 'aria-label': `${j.path}: ${done} of ${total}${what}` });
  return h('tr', {}, h('td', {}, h('a', { href: `#/document/${j.document_id}` }, j.path || j.document_id)),
    h('td', { class: `status-${j.state === 'failed' ? 'failed' : 'processing'}`, title: j.error?.message ?? '' }, j.state, j.error ? `: ${j.error.message}` : ''),
    h('td', {}, progress, ` ${done}/${total}${what}`), h('td', {}, j.created_at));
}

function storeRow(s) {
  const records = h('td', {}, '…');
  api('POST', `${project()}/memory_stores/${s.id}/knowledge/records`, { limit: 1 })
    .then((r) => {
      // Coverage: a vault file that could not be read is said, never silently left out.
      records.textContent = r.coverage.complete ? `${r.total}, every file read` : `${r.total}, ${r.coverage.issues.length} file(s) not read`;
    }, () => { records.textContent = '—'; });
  return h('tr', {}, h('td', {}, h('a', { href: `#/memory/${s.id}` }, s.name)), h('td', {}, s.memories), records, h('td', {}, s.id));
}

// One level of the path tree: its folders (opened on demand, a level a call) with their
// counts, and the documents directly in it, listed on the documents page.
function folderLevel(prefix) {
  const list = h('ul', { class: 'folders' });
  const url = (cursor) => `${project()}/documents/folders?${new URLSearchParams({ prefix, limit: 50, ...(cursor ? { cursor } : {}) })}`;
  const here = h('li', { class: 'here', hidden: true });
  list.append(here);
  const actions = pager(list, async (cursor) => {
    const page = await api('GET', url(cursor));
    if (!cursor && page.documents_here) {
      fill(here, h('a', { href: `#/documents?prefix=${encodeURIComponent(prefix)}` }, `${page.documents_here} document(s) in ${prefix}`));
      here.hidden = false;
    }
    return page;
  }, folderRow, 'No documents here.');
  return h('div', {}, list, actions);
}

function folderRow(f) {
  const name = f.path.slice(f.path.slice(0, -1).lastIndexOf('/') + 1);
  const details = h('details', { ontoggle: () => {
    if (details.open && details.children.length === 1) details.append(folderLevel(f.path));
  } }, h('summary', {}, h('span', { class: 'folder-name' }, name), h('span', { class: 'meta' }, ` ${f.documents} document(s) · ${f.chunks} chunk(s)`)));
  return h('li', { 'data-path': f.path }, details);
}

// Pickers: a datalist filled from the project, so an id or a path is chosen, not typed. A
// picker that cannot load leaves its field free to type in, and says nothing over the page.
function picker(id, load) {
  const list = h('datalist', { id });
  load().then((options) => fill(list, options.map(([value, label]) => h('option', { value }, label))), () => null);
  return list;
}

const folderOptions = async () => {
  const top = await api('GET', `${project()}/documents/folders?limit=100`);
  return top.data.map((f) => [f.path, `${f.documents} document(s)`]);
};

// What several pickers of one page read, asked once: a function that fetches on its first call
// and hands every later call the same answer.
const once = (load) => { let answer; return () => (answer ??= load()); };

const firstDocuments = () => api('GET', `${project()}/documents?limit=100`).then((page) => page.data);
const documentIds = (docs) => docs.map((d) => [d.id, d.path]);
const documentTags = (docs) => [...new Set(docs.flatMap((d) => Object.entries(d.tags).map(([k, v]) => `${k}=${v}`)))]
  .sort().map((t) => [t, 'document tag']);

const storeRecords = (storeId) =>
  api('POST', `${project()}/memory_stores/${storeId}/knowledge/records`, { limit: 500 }).then((data) => data.records);
const recordTypes = (rows) => [...new Set(rows.map((r) => r.type))].map((t) => [t, 'type']);
const recordTags = (rows) => [...new Set(rows.flatMap((r) => r.tags))].map((t) => [t, 'tag']);
const recordIds = (rows) => rows.map((r) => [r.id, r.title]);
const entityIds = (rows) => recordIds(rows.filter((r) => r.kind === 'page'));

// --- documents -------------------------------------------------------------------------------
function documentsPage(prefix) {
  let cursor = null;
  const rows = h('tbody');
  const more = h('button', { class: 'secondary', type: 'button', hidden: true, onclick: () => load(false) }, 'More');
  const filter = h('form', { class: 'panel', onsubmit: (event) => { event.preventDefault(); load(true); } },
    h('div', { class: 'fields' }, field('Path prefix', input('path_prefix', { placeholder: '/handbook/', list: 'folder-options', value: prefix ?? undefined }))),
    picker('folder-options', folderOptions),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'List')));
  fill(main, h('h1', {}, 'Documents'), canWrite() ? uploader(() => load(true)) : null, filter,
    h('table', {}, h('thead', {}, h('tr', {}, ['Path', 'Title', 'Status', 'Version', 'Chunks', 'Pages', ''].map((t) => h('th', {}, t)))), rows),
    h('div', { class: 'actions' }, more));
  load(true);

  async function load(fresh) {
    if (fresh) { cursor = null; fill(rows, ); }
    const params = new URLSearchParams({ limit: '20' });
    const prefix = values(filter).path_prefix;
    if (prefix) params.set('path_prefix', prefix);
    if (cursor) params.set('cursor', cursor);
    const page = await guarded(() => api('GET', `${project()}/documents?${params}`));
    if (!page) return;
    for (const d of page.data) {
      rows.append(h('tr', {},
        h('td', {}, h('a', { href: `#/document/${d.id}` }, d.path)), h('td', {}, d.title),
        h('td', {}, statusCell(d)),
        h('td', {}, `v${d.version}`), h('td', {}, d.chunk_count), h('td', {}, d.page_count ?? ''),
        h('td', {}, canWrite() ? h('button', { class: 'danger', type: 'button', onclick: () => remove(d) }, 'Delete') : null)));
    }
    cursor = page.next_cursor;
    more.hidden = !cursor;
    // Uploads still embedding in the background: look again until they are done.
    if (page.data.some((d) => d.status === 'processing')) {
      setTimeout(() => { if (main.contains(rows)) load(true); }, 1000);
    }
  }

  async function remove(d) {
    if (!confirm(`Delete ${d.path}? Its versions and passages go too.`)) return;
    if (await guarded(() => api('DELETE', `${project()}/documents/${d.id}`))) load(true);
  }
}

/** A document's status: ready, failed (with why), or processing with its progress; and what
 * it came back with to look at (no text, pages read by OCR…), never left unsaid. */
function statusCell(d) {
  const warned = (d.warnings ?? []).length
    ? h('span', { class: 'status-warning' }, ...d.warnings.map((w) => h('span', { class: 'warning' }, w)))
    : null;
  return h('span', {}, statusOf(d), warned);
}

function statusOf(d) {
  if (d.status === 'processing') {
    const ocr = d.pages_total && d.pages_done < d.pages_total;
    const [done, total] = ocr ? [d.pages_done, d.pages_total] : [d.chunks_done ?? 0, d.chunks_total];
    const label = ocr ? `reading pages by OCR ${done}/${total}` : `processing ${done}/${total ?? '?'}`;
    return h('span', { class: 'status-processing' }, h('progress', { max: total || 1, value: done, 'aria-label': label }), ` ${label}`);
  }
  if (d.status === 'failed') return h('span', { class: 'status-failed', title: d.error?.message ?? '' }, `failed: ${d.error?.message ?? ''}`);
  return 'ready';
}

function uploader(done) {
  const progress = h('progress', { max: 100, value: 0, hidden: true });
  const status = h('p', { class: 'status', 'aria-live': 'polite' });
  const file = input('file', { type: 'file', accept: '.md,.markdown,.txt,.rst,.pdf,.docx,.pptx,.html,.htm,.epub,.csv,.tsv,.json,.yaml,.yml,.toml,.xml,.py,.js,.ts,.go,.rs,.java,.c,.cpp,.h,.rb,.sh,.sql,.png,.jpg,.jpeg,.tif,.tiff,.webp' });
  const path = input('path', { placeholder: '/policies/travel.md' });
  const drop = h('div', { class: 'drop', tabindex: 0 }, 'Drop a file here, or pick one below.');
  drop.addEventListener('dragover', (event) => { event.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    if (event.dataTransfer.files.length) send(event.dataTransfer.files[0]);
  });
  const form = h('form', { class: 'panel', onsubmit: (event) => { event.preventDefault(); if (file.files[0]) send(file.files[0]); } },
    h('h2', {}, 'Upload'), drop,
    h('div', { class: 'fields' }, field('File', file), field('Path (default: /file name)', path)),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Upload')), progress, status);
  return form;

  function send(chosen) {
    const body = new FormData();
    body.append('file', chosen);
    body.append('path', path.value.trim() || `/${chosen.name}`);
    const request = new XMLHttpRequest();
    request.open('POST', `${project()}/documents`);
    request.setRequestHeader('Authorization', `Bearer ${state.token}`);
    progress.hidden = false;
    request.upload.onprogress = (event) => { if (event.lengthComputable) progress.value = (100 * event.loaded) / event.total; };
    request.onload = () => {
      const data = JSON.parse(request.responseText || '{}');
      if (request.status >= 400) { showError(data?.error?.message ?? `upload failed (${request.status})`); return; }
      showError('');
      progress.value = 100;
      status.textContent = (data.pages_total
        ? `Uploaded ${data.path}: reading ${data.pages_total} page(s) by OCR, then embedding, in the background.`
        : data.status === 'processing'
        ? `Uploaded ${data.path}: embedding ${data.chunks_total} passages in the background.`
        : `Uploaded ${data.path} (version ${data.version}, ${data.chunk_count} passages).`)
        + (data.warnings?.length ? ` Warning: ${data.warnings.join(' ')}` : '');
      done();
    };
    request.onerror = () => showError('upload failed: the server could not be reached');
    request.send(body);
  }
}

// A document at a hit: the passages around its chunk (more loaded on demand, either way), the
// hit marked and scrolled to; a PDF's hit is its chunk, not its whole page. Markdown is rendered
// (safely: markdown.js escapes everything first), code and data keep their lines in monospace.
async function documentPage(id, page, chunk) {
  const d = await guarded(() => api('GET', `${project()}/documents/${id}`));
  if (!d) return;
  const base = `${project()}/documents/${id}/passages`;
  const span = 40;
  const first = await guarded(() => api('GET', `${base}?${new URLSearchParams(chunk ? { around: chunk, limit: span } : { start: 0, limit: 200 })}`));
  if (!first) return;
  const list = h('div', { class: 'passages' });
  const kind = /\.(md|markdown)$/i.test(d.path) ? 'markdown' : CODE.test(d.path) ? 'code' : 'text';
  let low = first.start;
  let high = first.start + first.data.length;
  const earlier = h('button', { type: 'button', class: 'secondary', onclick: () => more(-1) }, 'Load earlier passages');
  const later = h('button', { type: 'button', class: 'secondary', onclick: () => more(1) }, 'Load later passages');
  const bounds = () => { earlier.hidden = low <= 0; later.hidden = high >= first.total; };
  list.append(...first.data.map(passage));
  bounds();
  fill(main, h('h1', {}, d.title),
    h('table', {}, h('tbody', {}, [
      ['Path', d.path], ['Status', statusCell(d)], ['Version', `v${d.version} (${d.filename}, ${d.content_type}, ${d.size} bytes)`],
      ['Pages', d.page_count ?? '—'], ['Passages', d.chunk_count], ['Tags', Object.entries(d.tags).map(([k, v]) => `${k}:${v}`).join(', ')],
      ['Updated', d.updated_at], ['sha256', d.content_hash],
    ].map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))))),
    h('h2', {}, chunk ? `Passages ${low + 1}–${high} of ${first.total} (the hit marked)` : `Passages (${first.total})`),
    h('div', { class: 'actions' }, earlier), list, h('div', { class: 'actions' }, later));
  (document.querySelector('.hit-focus') ?? document.querySelector('.page-focus'))?.scrollIntoView({ block: 'center' });

  function passage(p) {
    const focus = chunk ? p.chunk_id === chunk : page && p.page === page;
    const body = kind === 'markdown' ? h('div', { class: 'passage-body', html: markdown(p.content) })
      : h('div', { class: `passage-body plain${kind === 'code' ? ' code' : ''}` }, p.content);
    return h('section', {
      class: `passage${focus ? (chunk ? ' hit-focus' : ' page-focus') : ''}`, 'data-page': p.page ?? '', 'data-chunk': p.chunk_id,
      'aria-label': `passage ${p.ordinal + 1}${p.page ? `, page ${p.page}` : ''}${focus ? ' (the hit)' : ''}` },
    h('div', { class: 'meta' }, `#${p.ordinal + 1}`, p.page ? ` · page ${p.page}` : ''), body);
  }

  async function more(direction) {
    const start = direction < 0 ? Math.max(0, low - span) : high;
    const limit = direction < 0 ? low - start : span;
    const got = await guarded(() => api('GET', `${base}?${new URLSearchParams({ start, limit })}`));
    if (!got) return;
    if (direction < 0) { list.prepend(...got.data.map(passage)); low = start; }
    else { list.append(...got.data.map(passage)); high = start + got.data.length; }
    bounds();
  }
}

// --- memory stores and records -----------------------------------------------------------------
async function memoryPage(storeId) {
  const stores = await guarded(() => api('GET', `${project()}/memory_stores`));
  if (!stores) return;
  const chooser = h('select', { id: 'f-store', onchange: () => { location.hash = `#/memory/${chooser.value}`; } },
    h('option', { value: '' }, '— choose a store —'),
    stores.data.map((s) => h('option', { value: s.id, selected: s.id === storeId }, s.name)));
  fill(main, h('h1', {}, 'Memory'), h('div', { class: 'panel' }, field('Memory store', chooser)));
  if (!storeId) return;
  const base = `${project()}/memory_stores/${storeId}/knowledge`;
  const records = once(() => storeRecords(storeId));
  const out = h('div', { id: 'records' });
  const grep = h('form', { class: 'panel', onsubmit: async (event) => {
    event.preventDefault();
    const v = values(grep);
    const body = { query: v.query, mode: v.mode, lifecycle: v.lifecycle };
    for (const key of ['kind', 'type', 'tag']) if (v[key]) body[key] = v[key];
    const ask = (b) => api('POST', `${base}/grep`, b);
    const data = await guarded(() => ask(body));
    if (data) {
      fill(out, recordHits(data, storeId, body.query),
        offsetPager(body, data, ask, (page) => page.hits.map((hit) => recordHit(hit, storeId, body.query))));
    }
  } },
  h('h2', {}, 'Grep'),
  h('div', { class: 'fields' }, field('Keywords', input('query', { required: true })),
    field('Mode', h('select', { name: 'mode' }, ['all', 'any', 'phrase'].map((m) => h('option', {}, m)))),
    field('Kind', h('select', { name: 'kind' }, ['', 'page', 'claim', 'relationship'].map((m) => h('option', { value: m }, m || 'any')))),
    field('Type', input('type', { list: 'type-options' })), field('Tag', input('tag', { list: 'record-tag-options' })),
    picker('type-options', () => records().then(recordTypes)),
    picker('record-tag-options', () => records().then(recordTags)),
    field('Lifecycle', h('select', { name: 'lifecycle' }, ['active', 'superseded', 'all'].map((m) => h('option', {}, m))))),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Grep')));
  const lookup = h('form', { class: 'panel', onsubmit: async (event) => {
    event.preventDefault();
    const data = await guarded(() => api('POST', `${base}/lookup`, { query: values(lookup).query }));
    if (data) fill(out, h('p', { class: 'status' }, `lookup: ${data.status}`), recordHits(data, storeId, ''));
  } },
  h('h2', {}, 'Lookup'), h('div', { class: 'fields' }, field('Id, title or alias', input('query', { id: 'f-lookup-query', required: true, list: 'record-options' }))),
  picker('record-options', () => records().then(recordIds)),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Look up')));
  main.append(h('div', { class: 'cols' }, grep, lookup), out, canWrite() ? saveForm(base, storeId) : null);
}

function recordHits(data, storeId, query) {
  const coverage = data.coverage ?? { complete: true, issues: [] };
  return h('div', {},
    h('p', { class: 'status' },
      data.total !== undefined ? `${data.total ?? '?'} match(es) · ` : '',
      data.index ? `index ${data.index.state}${data.index.lag ? ' (lagging)' : ''} · ` : '',
      data.freshness ? `scanned ${data.freshness.scannedAt}${data.freshness.indexedAt ? `, indexed ${data.freshness.indexedAt}` : ''}` : ''),
    coverage.complete ? null : h('div', { class: 'panel' }, h('strong', {}, 'Invalid files (not searched):'),
      h('ul', {}, coverage.issues.map((i) => h('li', {}, `${i.path}: ${i.message}`)))),
    data.hits.map((hit) => recordHit(hit, storeId, query)));
}

function recordHit(hit, storeId, query) {
  return h('article', { class: 'hit' },
      h('h3', {}, h('a', { href: `#/record/${storeId}/${encodeURIComponent(hit.id)}` }, hit.title)),
      h('div', { class: 'meta' }, h('span', {}, `${hit.kind}/${hit.type}`), h('span', {}, hit.id),
        h('span', {}, hit.lifecycle), hit.score !== null ? h('span', {}, `BM25 ${hit.score.toFixed(3)}`) : null,
        h('span', {}, `matches ${hit.matches.join(', ')}`)),
      hit.via ? h('div', { class: 'meta' }, `via superseded ${hit.via.id} (revision ${hit.via.revision})`) : null,
      snippet(hit.snippet, query),
      hit.evidence.length ? h('div', { class: 'meta' }, 'evidence: ', hit.evidence.map((e) =>
        h('span', {}, `${e.source}${e.page ? ` p.${e.page}` : ''}${e.line ? ` l.${e.line}` : ''}${e.quote ? ` “${e.quote}”` : ''}`))) : null,
      h('div', { class: 'meta' }, `cite ${hit.citation.path} r${hit.citation.revision} sha256 ${hit.citation.sha256.slice(0, 12)}…`),
      hit.tags.length ? h('div', {}, hit.tags.map((t) => h('span', { class: 'tag' }, t))) : null);
}

// "More" for a records or dates answer paged by offset: the same request from ``nextOffset``
// with the first page's ``snapshot`` (a store changed since answers 409, shown as any error).
function offsetPager(body, first, ask, render) {
  let last = first;
  const more = h('button', { type: 'button', class: 'secondary', hidden: !first.nextOffset, onclick: async () => {
    const page = await guarded(() => ask({ ...body, offset: last.nextOffset, snapshot: first.snapshot }));
    if (!page) return;
    more.parentElement.before(...render(page));
    last = page;
    more.hidden = !page.nextOffset;
  } }, 'More');
  return h('div', { class: 'actions' }, more);
}

function saveForm(base, storeId) {
  const form = h('form', { class: 'panel', onsubmit: async (event) => {
    event.preventDefault();
    const v = values(form);
    const record = { kind: v.kind, title: v.title, body: v.body };
    if (v.type) record.type = v.type;
    const receipt = await guarded(() => api('POST', `${base}/save`, { requestId: crypto.randomUUID(), record }));
    if (receipt) location.hash = `#/record/${storeId}/${encodeURIComponent(receipt.records[0].id)}`;
  } },
  h('h2', {}, 'New record'),
  h('div', { class: 'fields' },
    field('Kind', h('select', { name: 'kind' }, ['claim', 'page', 'relationship'].map((k) => h('option', {}, k)))),
    field('Type', input('type', { id: 'f-new-type', placeholder: 'fact, decision, meeting…' })), field('Title', input('title', { required: true }))),
  field('Body (Markdown)', h('textarea', { name: 'body' })),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save')));
  return form;
}

async function recordPage(storeId, recordId) {
  const base = `${project()}/memory_stores/${storeId}/knowledge`;
  const record = await guarded(() => api('GET', `${base}/records/${encodeURIComponent(recordId)}`));
  if (!record) return;
  const history = await guarded(() => api('GET', `${base}/records/${encodeURIComponent(recordId)}/history`));
  const fence = { expectedRevision: record.revision, expectedHash: record.sha256 };
  const actions = canWrite() ? h('div', { class: 'actions' },
    h('button', { type: 'button', class: 'danger', id: 'withdraw', onclick: async () => {
      const reason = prompt('Why withdraw this record?');
      if (!reason) return;
      if (await guarded(() => api('POST', `${base}/withdraw`, { requestId: crypto.randomUUID(), id: recordId, reason, ...fence }))) {
        location.hash = `#/memory/${storeId}`;
      }
    } }, 'Withdraw'),
    record.kind !== 'page' ? h('button', { type: 'button', class: 'secondary', onclick: () => correctForm(base, storeId, record, fence) }, 'Correct…') : null)
    : null;
  fill(main, 
    h('p', {}, h('a', { href: `#/memory/${storeId}` }, '← back to the store')),
    h('h1', {}, record.title), actions, h('div', { id: 'correct' }),
    h('div', { class: 'meta' }, `${record.kind}/${record.type} · ${record.id} · ${record.lifecycle} · r${record.revision} · ${record.path} · sha256 ${record.sha256.slice(0, 12)}…`),
    h('div', { class: 'panel record-body', html: markdown(record.body) }),
    h('h2', {}, 'Front matter'), h('pre', {}, JSON.stringify(record.frontMatter, null, 2)),
    record.evidence.length ? [h('h2', {}, 'Evidence'), h('pre', {}, JSON.stringify(record.evidence, null, 2))] : null,
    h('h2', {}, 'History'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Revision', 'Operation', 'Lifecycle', 'At', 'Receipt'].map((t) => h('th', {}, t)))),
      h('tbody', {}, (history?.revisions ?? []).map((r) => h('tr', {},
        h('td', {}, r.revision), h('td', {}, r.operation), h('td', {}, r.lifecycle), h('td', {}, r.at),
        h('td', {}, r.receipt ? `${r.receipt.requestId} · git ${r.receipt.git.state}${r.receipt.git.commit ? ` ${r.receipt.git.commit.slice(0, 8)}` : ''} · ${r.receipt.indexed ? 'indexed' : 'not yet indexed'}` : '—'))))));
}

function correctForm(base, storeId, record, fence) {
  const form = h('form', { class: 'panel', onsubmit: async (event) => {
    event.preventDefault();
    const v = values(form);
    const receipt = await guarded(() => api('POST', `${base}/correct`, {
      requestId: crypto.randomUUID(), id: record.id, ...fence, reason: v.reason,
      replacement: { title: v.title, body: v.body },
    }));
    if (receipt) location.hash = `#/record/${storeId}/${encodeURIComponent(receipt.records[0].id)}`;
  } },
  h('h2', {}, 'Correct (supersede with a replacement)'),
  h('div', { class: 'fields' }, field('Title', input('title', { value: record.title, required: true })), field('Reason', input('reason', { required: true }))),
  field('Body', h('textarea', { name: 'body' }, record.body)),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Correct')));
  fill(document.getElementById('correct'), form);
}

// --- time ------------------------------------------------------------------------------------
async function timePage() {
  const stores = await guarded(() => api('GET', `${project()}/memory_stores`));
  if (!stores) return;
  const store = h('select', { name: 'store', id: 'f-time-store' }, stores.data.map((s) => h('option', { value: s.id }, s.name)));
  const out = h('div', { id: 'rows' });
  const base = () => `${project()}/memory_stores/${store.value}/knowledge`;
  const row = (r) => h('article', { class: 'hit' },
    h('div', { class: 'meta' }, h('span', {}, r.date.local ?? r.date.value), h('span', {}, `${r.kind}/${r.type}`), h('span', {}, r.id),
      r.source ? h('span', {}, `source ${r.source.title}`) : null),
    h('h3', {}, r.title), h('div', {}, r.summary));
  const show = (data, body, ask) => fill(out,
    h('p', { class: 'status' }, data.rows ? `${data.total ?? '?'} row(s)${data.from ? ` from ${data.from} to ${data.to} (${data.timeZone})` : ''}` : ''),
    (data.rows ?? (data.lastSeen ? [data.lastSeen] : [])).map(row),
    data.found === false ? h('p', {}, 'not seen') : null,
    data.rows ? offsetPager(body, data, ask, (page) => page.rows.map(row)) : null);
  const post = (path, body) => guarded(async () => {
    const ask = (b) => api('POST', `${base()}${path}`, b);
    show(await ask(body), body, ask);
  });
  const clean = (v) => Object.fromEntries(Object.entries(v).filter(([, x]) => x !== '' && x !== undefined));
  const timeline = h('form', { class: 'panel', onsubmit: (e) => { e.preventDefault(); const v = values(timeline);
    post('/timeline', clean({ entity: v.entity, kind: v.kind, since: v.since, until: v.until, group: timeline.elements.group.checked ? 'source' : undefined })); } },
  h('h2', {}, 'Timeline'), h('div', { class: 'fields' }, field('Entity', input('entity', { list: 'entity-options' })), field('Kind (record type)', input('kind', { list: 'kind-options' })),
    field('Since', input('since', { placeholder: '2026-01-01' })), field('Until', input('until')),
    h('label', { class: 'check' }, input('group', { type: 'checkbox' }), 'One row per source')),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Timeline')));
  const day = h('form', { class: 'panel', onsubmit: (e) => { e.preventDefault(); const v = values(day);
    post('/chronicle/day', { date: v.date, week: day.elements.week.checked, timeZone: v.timeZone || 'UTC' }); } },
  h('h2', {}, 'Chronicle'), h('div', { class: 'fields' }, field('Date', input('date', { type: 'date', required: true })),
    field('Time zone (IANA)', input('timeZone', { value: 'UTC' })),
    h('label', { class: 'check' }, input('week', { type: 'checkbox' }), 'Its Monday–Sunday week')),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Chronicle')));
  const since = h('form', { class: 'panel', onsubmit: (e) => { e.preventDefault(); post('/chronicle/since', clean(values(since))); } },
    h('h2', {}, 'Since'), h('div', { class: 'fields' }, field('Since', input('since', { required: true })), field('Until', input('until')), field('Entity', input('entity', { list: 'entity-options' }))),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Since')));
  const seen = h('form', { class: 'panel', onsubmit: (e) => { e.preventDefault(); post('/chronicle/last_seen', clean(values(seen))); } },
    h('h2', {}, 'Last seen'), h('div', { class: 'fields' }, field('Entity', input('entity', { required: true, list: 'entity-options' })), field('On or before', input('occurredOnOrBefore'))),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Last seen')));
  // Entities are the store's pages (their ids), kinds its records' types; refilled per store.
  const options = h('div', {});
  const pick = () => {
    const records = once(() => storeRecords(store.value));
    fill(options, picker('entity-options', () => records().then(entityIds)),
      picker('kind-options', () => records().then(recordTypes)));
  };
  store.addEventListener('change', pick);
  if (store.value) pick();
  fill(main, h('h1', {}, 'Time'), h('div', { class: 'panel' }, field('Memory store', store)),
    h('div', { class: 'cols' }, timeline, day, since, seen), options, out);
}

// --- tokens ----------------------------------------------------------------------------------
// The signed-in user's tokens: each with what it reaches — its scope, projects, and inside a
// project the path prefixes and memory stores it is limited to — and a form that makes one
// (never wider than the token signed in with: the server refuses it). The secret shows once.
const reach = (values, all) => (values === null || values === undefined ? all : values.length ? values.join(', ') : 'none');

async function tokensPage() {
  const rows = h('tbody');
  const made = h('div', { role: 'status' });
  const slot = errorSlot();
  const load = async () => {
    const got = await guarded(() => api('GET', '/v1/tokens'));
    if (got) fill(rows, got.data.map(tokenRow));
  };
  // "none" is an empty list (reaches none of them); an empty field, the default.
  const limit = (text) => (text.trim() === '' ? undefined : text.trim() === 'none' ? [] : list(text));
  const form = h('form', { class: 'panel', 'aria-label': 'New token', novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    const v = values(form);
    const body = { name: v.name, scope: v.scope, projects: limit(v.projects), path_prefixes: limit(v.path_prefixes),
      memory_store_ids: limit(v.memory_store_ids), expires_in: v.expires_in.trim() || undefined };
    const token = await guarded(() => api('POST', '/v1/tokens', body), slot);
    if (!token) return;
    fill(made, h('p', { class: 'panel' }, `Token ${token.name} — copy its secret now, it is shown this once: `, h('code', { class: 'secret' }, token.token)));
    form.reset();
    load();
  } },
  h('h2', {}, 'New token'),
  h('div', { class: 'fields' },
    field('Name', input('name', { required: true })),
    field('Scope', h('select', { name: 'scope', id: 'f-scope' }, ['read', 'write', 'admin'].map((m) => h('option', {}, m)))),
    field('Projects (empty: all)', input('projects', { placeholder: state.project ?? '' })),
    field('Path prefixes (empty: every document; none)', input('path_prefixes', { placeholder: '/eng/, /public/', list: state.project ? 'folder-options' : undefined })),
    field('Memory store ids (empty: every store; none)', input('memory_store_ids', { list: state.project ? 'store-options' : undefined })),
    field('Expires in (30d, 12h)', input('expires_in'))),
  state.project ? [picker('folder-options', folderOptions), picker('store-options', storeOptions)] : null,
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create token')), slot);
  fill(main, h('h1', {}, 'Tokens'), made,
    h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Reaches', '', 'Scope', 'Projects', 'Last used', 'State'].map((t) => h('th', {}, t)))), rows),
    form);
  load();

  function tokenRow(t) {
    const revoke = t.revoked_at ? null : h('button', { type: 'button', class: 'secondary', onclick: async () => {
      if (await guarded(() => api('DELETE', `/v1/tokens/${t.id}`))) load();
    } }, 'Revoke');
    const stateText = t.revoked_at ? `revoked ${t.revoked_at}` : `expires ${t.expires_at ?? 'never'}`;
    // On a phone the first three columns show: its name, what it reaches, Revoke.
    const reaches = `documents: ${reach(t.path_prefixes, 'all')} · memory stores: ${reach(t.memory_store_ids, 'all')}`;
    return h('tr', {}, h('td', { title: t.id }, t.name), h('td', { class: 'wrap' }, reaches), h('td', {}, revoke ?? 'revoked'),
      h('td', {}, t.scope), h('td', { class: 'wrap' }, reach(t.projects, 'all')), h('td', {}, t.last_used_at ?? 'never'), h('td', {}, stateText));
  }
}

const storeOptions = async () => (await api('GET', `${project()}/memory_stores`)).data.map((st) => [st.id, st.name]);

// --- routing ---------------------------------------------------------------------------------
async function route() {
  const [path, query] = location.hash.slice(1).split('?');
  const parts = (path || '/').split('/').filter(Boolean);
  document.getElementById('nav').hidden = !state.token || !state.project;
  document.getElementById('account').hidden = !state.token;
  // The project by its name (its id on hover): what a person recognises.
  const who = document.getElementById('who');
  who.textContent = state.project ? `project ${state.projectName ?? state.project} · ${state.role}` : '';
  who.title = state.project ?? '';
  for (const link of document.querySelectorAll('nav a')) {
    link.toggleAttribute('aria-current', link.getAttribute('href') === `#/${parts[0]}`);
    if (link.hasAttribute('aria-current')) link.setAttribute('aria-current', 'page');
  }
  if (!state.token) return signIn();
  if (parts[0] === 'tokens') return tokensPage();  // the user's, not a project's
  if (!state.project || parts.length === 0) {
    const projects = await guarded(() => api('GET', '/v1/projects'));
    return projects ? pickProject(projects.data) : signIn();
  }
  const params = new URLSearchParams(query);
  const page = Number(params.get('page')) || null;
  switch (parts[0]) {
    case 'search': return searchPage();
    case 'project': return projectPage();
    case 'documents': return documentsPage(params.get('prefix'));
    case 'document': return documentPage(parts[1], page, params.get('chunk'));
    case 'memory': return memoryPage(parts[1]);
    case 'record': return recordPage(parts[1], decodeURIComponent(parts[2]));
    case 'time': return timePage();
    default: return searchPage();
  }
}

function signOut() {
  for (const key of ['naturali.token', 'naturali.project', 'naturali.role']) sessionStorage.removeItem(key);
  Object.assign(state, { token: null, project: null, role: null });
  if (location.hash === '#/') route(); else location.hash = '#/';
}

document.getElementById('sign-out').addEventListener('click', signOut);
document.getElementById('switch-project').addEventListener('click', () => {
  Object.assign(state, { project: null, role: null });
  sessionStorage.removeItem('naturali.project');
});
window.addEventListener('hashchange', () => { showError(''); route(); });
route();

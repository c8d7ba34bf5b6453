/**
 * Change tracking through the service (bench/changes.ts section 6): the API's own app on loopback
 * (authentication, a concurrency slot, exact charging, the real database: MONGODB_URL, else a FerretDB
 * started in a temporary folder), a fixture site on loopback answering every page with new noise.
 *
 * a. false changes on noise-only re-fetches of 100 pages (goal 0): pages whose noise the rules catch;
 *    pages with a rotating banner too, for scale (a Fetch learns those only from history);
 * b. precision and recall of `changed` on real edits, each edit followed by a noise-only re-fetch;
 * c. `track_changes` overhead on a Fetch, p50 against the same Fetch without it, interleaved rounds in
 *    one run: HTML answers (the Markdown is made only for the comparison) and Markdown answers (made
 *    once), on the generated pages and on real article pages (../shared/data), from the loopback site
 *    at once, 20 ms and 100 ms later;
 * d. storage added by unchanged re-fetches: blob chunks and versions counted before and after;
 * e. a 1 MB page: a tracked Fetch that finds it changed against a plain Fetch of it;
 * f. `as_of` latency against a plain Fetch of the same page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { createApp } from '../api/app';
import { apiDeps } from '../api/deps';
import { loadConfig, processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { createLogger } from '../base/log';
import { connectTemporal } from '../base/temporal';
import { createAccounts } from '../core/accounts';
import { createFetching } from '../core/fetch/service';
import { SERVICE_INDEXES } from '../core/indexes';
import { Stack } from '../scripts/stack/stack';
import { injectNoise } from '../test/fixtures/changes/inject';
import { EDITS, pageModel, renderPage, rotates, type PageModel } from '../test/fixtures/changes/pages';
import { seeded } from '../test/helpers/random';

export interface ServiceOptions {
  pages: number;
  rounds: number;
  /** Real pages (id, URL, HTML) to serve too. */
  real: Array<{ id: string; url: string; html: string }>;
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const ms = (value: number): string => `${value.toFixed(2)} ms`;

/**
 * The site: `/g/<n>` generated pages (rendered anew per answer), `/r/<n>` real pages with noise of the
 * kinds the rules catch injected per answer, `/big` a 1 MB page; `/slow/...` and `/slower/...` any of
 * them 20 and 100 ms later (sites a little and some way off, as every real one is).
 */
function startSite(models: Map<number, PageModel>, real: ServiceOptions['real'], big: { html: string }): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let answers = 0;
  const server = http.createServer((req, res) => {
    answers++;
    const parts = (req.url ?? '/').split('?')[0]?.split('/') ?? [];
    const delay = parts[1] === 'slow' ? 20 : parts[1] === 'slower' ? 100 : 0;
    const slow = delay > 0;
    const [kind, id] = slow ? parts.slice(2) : parts.slice(1);
    let body: string | undefined;
    if (kind === 'g') {
      const model = models.get(Number(id));
      if (model) body = renderPage(model, 100_000 + answers);
    } else if (kind === 'r') {
      const page = real[Number(id)];
      if (page) body = injectNoise(page.html, Number(id) + 1, answers, 'tune');
    } else if (kind === 'big') body = big.html;
    const answer = (): void => {
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body ?? 'not found');
    };
    if (slow) setTimeout(answer, delay);
    else answer();
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests: () => answers,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    ),
  );
}

export async function serviceMeasures(options: ServiceOptions): Promise<void> {
  const base = processConfig();
  const log = createLogger('error');
  let stack: Stack | undefined;
  let dataDir: string | undefined;
  let mongodbUrl = base.mongodbUrl;
  if (!mongodbUrl) {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-bench-'));
    stack = new Stack({ config: { ...base, dataDir }, ports: { ferretdb: 0 } });
    stack.prepare();
    await stack.startOne('ferretdb');
    mongodbUrl = stack.urls.mongodb;
  }
  const config = loadConfig({ MONGODB_URL: mongodbUrl, MONGODB_DATABASE: `fetchplane_bench_${process.pid}`, TARGET_ALLOWLIST: '127.0.0.1', LOG_LEVEL: 'error', DATA_DIR: dataDir ?? base.dataDir, TEMPORAL_ADDRESS: '127.0.0.1:7233' });
  const db = await openDatabase(config, log, { indexes: SERVICE_INDEXES });
  const temporal = connectTemporal(config); // lazy, never connected: a Fetch does not call Temporal
  const closers: Array<() => Promise<void>> = [];
  try {
    const accounts = createAccounts({ db: db.db, config, log });
    const fetching = createFetching({ config, log, db: db.db });
    closers.push(() => fetching.close());
    const deps = apiDeps({ config, log, db, temporal, accounts, fetching });
    const server = http.createServer(createApp(deps).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const account = await accounts.store.createAccount({ plan: 'business', overrides: { credits: 1_000_000_000, requestsPerSecond: 1_000_000, requestBurst: 1_000_000, requestsInFlight: 1_000_000 } });
    const { key } = await accounts.store.createKey(account._id);

    const models = new Map<number, PageModel>();
    const plain: number[] = [];
    const rotating: number[] = [];
    for (let index = 0; plain.length < options.pages || rotating.length < options.pages; index++) {
      const model = pageModel(21, index, 'all');
      const list = rotates(model) ? rotating : plain;
      if (list.length >= options.pages) continue;
      models.set(model.id, model);
      list.push(model.id);
    }
    const next = seeded(77);
    const words = ['market', 'river', 'signal', 'winter', 'engine', 'paper', 'design', 'quiet'];
    const bigModel: PageModel = { ...pageModel(22, 0, 'all'), paragraphs: Array.from({ length: 2600 }, (_, k) => `Section ${k}: ${Array.from({ length: 40 }, () => words[Math.floor(next() * 8)]).join(' ')}.`) };
    const big = { html: renderPage(bigModel, 1) };
    const site = await startSite(models, options.real, big);
    closers.push(() => site.close());
    const pool = new Pool(api, { connections: 4 });
    closers.push(() => pool.close());

    const call = async (params: Record<string, string>): Promise<{ ms: number; status: number; headers: Record<string, string | string[] | undefined>; body: string }> => {
      const started = process.hrtime.bigint();
      const response = await pool.request({ path: `/v1/?${new URLSearchParams({ apikey: key, ...params }).toString()}`, method: 'GET' });
      const body = await response.body.text();
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${body.slice(0, 300)}`);
      return { ms: elapsed, status: response.statusCode, headers: response.headers, body };
    };
    const tracked = async (url: string, extra: Record<string, string> = {}): Promise<string> => String((await call({ url, track_changes: 'true', ...extra })).headers['x-change-status']);
    const chunks = () => db.db.collection('blob_chunks').countDocuments({ kind: 'change_track' });
    const versions = () => db.db.collection('change_versions').countDocuments({});

    // a. noise-only re-fetches
    console.log(` a. noise-only re-fetches through the service (each page tracked, then fetched again):`);
    for (const [name, ids] of [
      ['pages whose noise the rules catch (generation time, request id, counter, CSRF token, cache busters)', plain],
      ['pages with a rotating banner or region name besides (no probe on Fetch: learned from history only)', rotating],
    ] as const) {
      let falseChanges = 0;
      for (const id of ids) await tracked(`${site.url}/g/${id}`);
      for (const id of ids) if ((await tracked(`${site.url}/g/${id}`)) !== 'same') falseChanges++;
      console.log(`    ${name}: false changes ${falseChanges}/${ids.length}`);
    }
    // History learning through the service: a region that changed in 4 comparisons within the hour is noise from then on.
    const learning: number[] = [];
    for (let again = 0; again < 6; again++) {
      let falseChanges = 0;
      for (const id of rotating) if ((await tracked(`${site.url}/g/${id}`)) !== 'same') falseChanges++;
      learning.push(falseChanges);
    }
    console.log(`    the rotating pages fetched 6 times more, minutes apart at most: false changes ${learning.join(', ')} (of ${rotating.length} each time)`);
    if (options.real.length > 0) {
      let falseChanges = 0;
      for (const [index] of options.real.entries()) await tracked(`${site.url}/r/${index}`);
      for (const [index] of options.real.entries()) if ((await tracked(`${site.url}/r/${index}`)) !== 'same') falseChanges++;
      console.log(`    ${options.real.length} real article pages with noise of those kinds injected in every answer: false changes ${falseChanges}/${options.real.length}`);
    }

    // d. storage of unchanged re-fetches
    const before = { chunks: await chunks(), versions: await versions() };
    for (const id of plain) await tracked(`${site.url}/g/${id}`);
    const after = { chunks: await chunks(), versions: await versions() };
    console.log(` d. ${plain.length} unchanged re-fetches added ${after.chunks - before.chunks} blob chunks and ${after.versions - before.versions} versions (goal: none)`);

    // b. real edits
    let tp = 0;
    let fn = 0;
    let fp = 0;
    let tn = 0;
    const draw = seeded(99);
    for (const id of plain) {
      const url = `${site.url}/g/${id}`;
      for (const edit of EDITS) {
        const model = models.get(id) as PageModel;
        if (!edit.applies(model)) continue;
        models.set(id, { ...edit.apply(model, draw).model, id });
        if ((await tracked(url)) === 'changed') tp++;
        else fn++;
        if ((await tracked(url)) === 'same') tn++;
        else fp++;
      }
    }
    console.log(` b. real edits through the service: ${tp + fn} edits, ${tn + fp} noise-only re-fetches after them: precision ${(tp / Math.max(1, tp + fp)).toFixed(3)}, recall ${(tp / Math.max(1, tp + fn)).toFixed(3)}`);

    // c. overhead
    console.log(` c. track_changes overhead on a Fetch (p50 of sequential requests, ${options.rounds} interleaved rounds; a re-fetch found the same):`);
    const overhead = async (name: string, urls: string[], extra: Record<string, string>): Promise<void> => {
      for (const url of urls) await tracked(url, extra);
      const without: number[] = [];
      const withTracking: number[] = [];
      const found = new Map<string, number>();
      for (let round = 0; round < options.rounds; round++) {
        for (const url of urls) without.push((await call({ url, ...extra })).ms);
        for (const url of urls) {
          const answer = await call({ url, track_changes: 'true', ...extra });
          withTracking.push(answer.ms);
          const status = String(answer.headers['x-change-status']);
          found.set(status, (found.get(status) ?? 0) + 1);
        }
      }
      const [p, t] = [quantile(without, 0.5), quantile(withTracking, 0.5)];
      const statuses = [...found].map(([status, count]) => `${count} ${status}`).join(', ');
      console.log(`    ${name}: without ${ms(p)}, with ${ms(t)}: ${(t / p).toFixed(3)}× (goal ≤ 1.2×); p90 ${(quantile(withTracking, 0.9) / quantile(without, 0.9)).toFixed(3)}× (${statuses})`);
    };
    const generated = plain.map((id) => `${site.url}/g/${id}`);
    const realUrls = options.real.map((_, index) => `${site.url}/r/${index}`);
    await overhead(`generated pages (${(renderPage(models.get(plain[0] as number) as PageModel, 1).length / 1024).toFixed(1)} KB), HTML answer`, generated, {});
    await overhead('generated pages, Markdown answer', generated, { response_type: 'markdown' });
    if (realUrls.length > 0) {
      const sizes = options.real.map((page) => page.html.length).sort((a, b) => a - b);
      await overhead(`${realUrls.length} real article pages (median ${(quantile(sizes, 0.5) / 1024).toFixed(0)} KB), HTML answer`, realUrls, {});
      await overhead(`${realUrls.length} real article pages, Markdown answer`, realUrls, { response_type: 'markdown' });
      await overhead(`the same real pages from a site answering in 20 ms, HTML answer`, options.real.map((_, index) => `${site.url}/slow/r/${index}`), {});
      await overhead(`the same real pages from a site answering in 100 ms, HTML answer`, options.real.map((_, index) => `${site.url}/slower/r/${index}`), {});
    }

    // e. a 1 MB page
    const bigUrl = `${site.url}/big`;
    await tracked(bigUrl);
    const plainBig: number[] = [];
    const changedBig: number[] = [];
    for (let round = 0; round < Math.max(3, options.rounds); round++) {
      plainBig.push((await call({ url: bigUrl })).ms);
      const paragraphs = [...bigModel.paragraphs];
      for (let k = 0; k < 50; k++) paragraphs[(k * 53 + round) % paragraphs.length] += ` Edited ${round}.${k}.`;
      big.html = renderPage({ ...bigModel, paragraphs }, round + 2);
      const started = process.hrtime.bigint();
      const status = await tracked(bigUrl);
      changedBig.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (status !== 'changed') throw new Error(`the 1 MB page read ${status}`);
    }
    console.log(` e. ${(big.html.length / 1e6).toFixed(2)} MB page: tracked Fetch finding 50 paragraphs changed p50 ${ms(quantile(changedBig, 0.5))} against a plain Fetch of it ${ms(quantile(plainBig, 0.5))} (diff and storage: +${ms(quantile(changedBig, 0.5) - quantile(plainBig, 0.5))})`);

    // f. as_of
    const asOf: number[] = [];
    const fetched: number[] = [];
    const requestsBefore = site.requests();
    let asOfRequests = 0;
    for (let round = 0; round < options.rounds; round++) {
      for (const url of generated) fetched.push((await call({ url, response_type: 'markdown' })).ms);
      const seen = site.requests();
      for (const url of generated) asOf.push((await call({ url, as_of: '2999-01-01T00:00:00Z', response_type: 'markdown' })).ms);
      asOfRequests += site.requests() - seen;
    }
    console.log(
      ` f. as_of (Markdown of the version current now): p50 ${ms(quantile(asOf, 0.5))} against a plain Fetch of the same page ${ms(quantile(fetched, 0.5))} (${(quantile(asOf, 0.5) / quantile(fetched, 0.5)).toFixed(3)}×); ` +
        `requests it sent to the site: ${asOfRequests} (of ${site.requests() - requestsBefore} in the section)`,
    );
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await db.db.dropDatabase().catch(() => undefined);
    await db.close();
    await temporal.close();
    if (stack) await stack.component('ferretdb').stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { readExport } from '../../core/batch/exports/read';
import { checkpointOf, writeExport, type ExportCheckpoint } from '../../core/batch/exports/write';
import type { ExportDoc } from '../../core/batch/store';
import { newUlid } from '../../base/ids';
import { batchExportWorkflowId } from '../../core/jobs/workflow-names';
import { connectTemporal } from '../../base/temporal';
import { blobChunkId, blobCollection, Blobs, sweepOrphanBlobs, type BlobOwner, type BlobOwnerKind } from '../../core/jobs/blobs';
import { CrawlClient, crawlAccount } from '../crawls/helpers';
import { startCrawlSite } from '../fixtures/crawl-site/server';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { pythonWithClient } from '../helpers/python-clients';
import { eventually, testStack } from '../helpers/stack';
import { accountsHandle, allResults, batchAccount, batchRequest, batchStore, waitForRun, type Json } from './helpers';

const DAY_MS = 24 * 60 * 60 * 1000;

async function database(): Promise<Db> {
  return (await accountsHandle()).db.db;
}

async function fileOf(db: Db, exportId: string): Promise<Buffer> {
  const doc = (await (await batchStore()).exports.findOne({ _id: exportId })) as ExportDoc;
  const parts: Buffer[] = [];
  for await (const part of readExport(db, doc)) parts.push(part);
  return Buffer.concat(parts);
}

async function content(key: string, path: string): Promise<{ status: number; text: string }> {
  const answer = await fetch(`${testStack().urls.api}${path}`, { headers: { 'X-API-Key': key } });
  return { status: answer.status, text: await answer.text() };
}

describe('Batch stored bodies: the blob store, resumed exports, expired results', function () {
  this.timeout(180_000);
  /** `/page/<n>` a small page, `/big/<n>` a page of about 100 kB (stored as a blob of its own). */
  let site: FixtureServer;
  before(async () => {
    site = await startFixtureServer((req, res) => {
      const path = req.url ?? '/';
      if (path.startsWith('/missing/')) {
        res.statusCode = 404;
        res.end('no such page');
        return;
      }
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      const filler = path.startsWith('/big/') ? `<p>${'big page '.repeat(12_000)}</p>` : '';
      res.end(`<html><head><title>${path}</title></head><body><h1>Page ${path}</h1>${filler}</body></html>`);
    });
  });
  after(async () => {
    await site.close();
  });

  const task = (path: string) => ({ url: `${site.url}${path.replace(/^\//, '')}` });

  async function finishedJob(key: string, paths: string[]): Promise<{ job: string; run: string }> {
    const created = await batchRequest(key, 'POST', '/v1/jobs', { tasks: paths.map(task) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const job = created.body.job_id as string;
    const run = await waitForRun(key, job);
    expect(run.status).to.equal('completed');
    return { job, run: run.run_id as string };
  }

  it('stores a blob once under its id, reads it whole or not at all, and removes it by owner', async () => {
    const db = await database();
    const blobs = new Blobs(db, 1024);
    const owner: BlobOwner = { kind: 'batch_run', id: `blob-owner-${newUlid()}` };
    const [a, b, c] = ['a', 'b', 'c'].map((name) => `${owner.id}:${name}`) as [string, string, string];
    const data = randomBytes(2_500);
    expect(await blobs.put(owner, a, data)).to.equal(3);
    // Written again (a retried writer): the same three documents, nothing added.
    expect(await blobs.put(owner, a, data)).to.equal(3);
    expect(await blobCollection(db).countDocuments({ owner: owner.id })).to.equal(3);
    expect((await blobs.read(a))?.equals(data)).to.equal(true);
    await blobs.put(owner, b, Buffer.from('small'));
    const many = await blobs.readMany([a, b, `${owner.id}:never`]);
    expect([...many.keys()].sort()).to.deep.equal([a, b]);
    expect(many.get(b)?.toString()).to.equal('small');
    expect(await blobs.read(`${owner.id}:never`)).to.equal(undefined);

    // A chunk written a chunk at a time is replaced by a later write of it.
    await blobs.putChunk(owner, c, 0, Buffer.from('first'));
    await blobs.putChunk(owner, c, 0, Buffer.from('second'));
    expect((await blobs.readChunks(c, 0, 2)).map((chunk) => chunk?.toString())).to.deep.equal(['second', undefined]);

    // A blob missing a chunk reads as missing, never as a shorter body.
    await blobCollection(db).deleteOne({ _id: blobChunkId(a, 1) });
    expect(await blobs.read(a)).to.equal(undefined);

    expect(await blobs.removeOwners([owner.id])).to.equal(4);
    expect(await blobCollection(db).countDocuments({ owner: owner.id })).to.equal(0);
  });

  it('sweeps exactly the blobs whose owner has no record, asking per kind of owner', async () => {
    const db = await database();
    const blobs = new Blobs(db, 1024);
    const gone: BlobOwner = { kind: 'batch_export', id: `gone-${newUlid()}` };
    const kept: BlobOwner = { kind: 'batch_export', id: `kept-${newUlid()}` };
    const crawl: BlobOwner = { kind: 'crawl', id: `crawl-${newUlid()}` };
    for (const owner of [gone, kept, crawl]) await blobs.put(owner, `${owner.id}|page`, randomBytes(3_000));
    const asked = new Set<BlobOwnerKind>();
    // Every other owner in the database counts as living: only `gone` has lost its record.
    const removed = await sweepOrphanBlobs(db, 2, () => undefined, async (kind, owners) => {
      asked.add(kind);
      return new Set(owners.filter((owner) => owner !== gone.id));
    });
    expect(removed).to.equal(3);
    expect(await blobCollection(db).countDocuments({ owner: gone.id })).to.equal(0);
    expect(await blobCollection(db).countDocuments({ owner: kept.id })).to.equal(3);
    expect(await blobCollection(db).countDocuments({ owner: crawl.id })).to.equal(3);
    expect([...asked]).to.include.members(['batch_export', 'crawl']);
    await blobs.removeOwners([kept.id, crawl.id]);
  });

  it('keeps a run’s bodies in the blob store', async () => {
    const db = await database();
    const account = await batchAccount();
    const { job, run } = await finishedJob(account.key, ['/page/1', '/big/1', '/page/2']);
    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    const bodies = await Promise.all(rows.map(async (row) => (await content(account.key, `/v1/jobs/${job}/tasks/${row.task_id as string}/content`)).text));
    expect(bodies[1]).to.contain('big page').and.to.have.length.greaterThan(90_000);
    const chunks = await blobCollection(db).find({ owner: run }).toArray();
    expect(chunks.map((chunk) => chunk.kind)).to.satisfy((kinds: string[]) => kinds.length >= 2 && kinds.every((kind) => kind === 'batch_run'));
  });

  it('serves a crawl’s kept pages from the blob store, one blob per page', async () => {
    const db = await database();
    const crawlSite = await startCrawlSite({ pages: 4, fanout: 2, name: 'blob-pages' });
    try {
      const client = new CrawlClient(await crawlAccount());
      const crawlId = await client.started({ url: crawlSite.url, depth: 1, output_format: 'html', max_items: 100, max_pages: 100 });
      await client.finish(crawlId);
      const { results } = await client.finish(crawlId, { limit: 1_000 });
      const read = async (path: string): Promise<string> => (await fetch(`${client.api}${path}`, { headers: { 'X-API-Key': client.account.key } })).text();
      const pages = await Promise.all(results.map((result) => read(result.content_url as string)));
      const download = await read(`/v1/crawls/${crawlId}/download`);
      const chunks = await blobCollection(db).find({ owner: crawlId }).toArray();
      expect(chunks.length).to.equal(results.length);
      expect(chunks.every((chunk) => chunk.kind === 'crawl')).to.equal(true);
      expect(pages.every((page) => /<h1>(Page|Post) \d+<\/h1>/.test(page))).to.equal(true);
      expect(download.trim().split('\n')).to.have.length(results.length);
    } finally {
      await crawlSite.close();
    }
  });

  it('resumes an export retried after some chunks from its last checkpoint, keeping the chunks written', async () => {
    const db = await database();
    const store = await batchStore();
    const account = await batchAccount();
    const paths = Array.from({ length: 60 }, (_, index) => (index % 7 === 3 ? `/missing/${index}` : `/page/${index}`));
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks: paths.map(task) });
    const job = created.body.job_id as string;
    const run = (await waitForRun(account.key, job)).run_id as string;
    const newExport = async (format: 'ndjson' | 'csv'): Promise<string> => {
      const now = new Date();
      const doc: ExportDoc = { _id: newUlid(), job_id: job, run_id: run, account_id: account.accountId, format, status: 'pending', error: null, size: 0, chunks: 0, created_at: now, expires_at: new Date(now.getTime() + DAY_MS) };
      await store.exports.insertOne(doc);
      return doc._id;
    };
    for (const format of ['ndjson', 'csv'] as const) {
      const whole = await newExport(format);
      await writeExport(db, whole, { chunkBytes: 1024 });
      const reference = await fileOf(db, whole);
      expect((await store.exports.findOne({ _id: whole }))?.chunks).to.be.greaterThan(6);

      // The first attempt dies after its third chunk (its last heartbeat carried the checkpoint).
      const retried = await newExport(format);
      let last: ExportCheckpoint | undefined;
      const died = await writeExport(db, retried, {
        chunkBytes: 1024,
        progress: (checkpoint) => {
          last = checkpoint;
          if (checkpoint.chunks === 3) throw new Error('the worker was lost');
        },
      }).then(
        () => 'finished',
        (error: Error) => error.message,
      );
      expect(died).to.equal('the worker was lost');
      expect(last?.chunks).to.equal(3);
      await blobCollection(db).updateMany({ owner: retried }, { $set: { before_retry: true } });

      const written: number[] = [];
      await writeExport(db, retried, { chunkBytes: 1024, resume: checkpointOf(JSON.parse(JSON.stringify(last))), progress: (checkpoint) => written.push(checkpoint.chunks) });
      expect(Math.min(...written), 'no chunk before the checkpoint is written again').to.equal(3);
      const doc = await store.exports.findOne({ _id: retried });
      expect(doc).to.deep.include({ status: 'completed', chunks: (await store.exports.findOne({ _id: whole }))?.chunks, size: reference.length });
      expect((await fileOf(db, retried)).equals(reference), `${format}: the resumed file is the file written at once`).to.equal(true);
      const kept = await blobCollection(db).find({ owner: retried, before_retry: true } as never).toArray();
      expect(kept.map((chunk) => chunk.n).sort()).to.deep.equal([0, 1, 2]);
    }
    expect(checkpointOf({ chunks: 'x' })).to.deep.equal({ chunks: 0, size: 0, slice: 0, index: 0 });
  });

  it('resumes the export workflow’s retried activity after the chunks its failed attempt wrote', async () => {
    const db = await database();
    const store = await batchStore();
    const account = await batchAccount();
    // 40 small pages, then a large one whose stored body the first attempt cannot read, then 10 more.
    const paths = [...Array.from({ length: 40 }, (_, index) => `/page/${index}`), '/big/0', ...Array.from({ length: 10 }, (_, index) => `/page/${40 + index}`)];
    const { job, run } = await finishedJob(account.key, paths);
    const big = await blobCollection(db).findOne({ owner: run, blob: { $not: /:p\d+$/ } } as never);
    expect(big, 'the large body is a blob of its own').to.not.equal(null);
    await blobCollection(db).updateOne({ _id: big!._id }, { $set: { data: { buffer: { buffer: 1 } } as never } });

    const started = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/runs/${run}/exports`);
    expect(started.status).to.equal(202);
    const exportId = started.body.export_id as string;
    const temporal = connectTemporal((await accountsHandle()).config);
    let checkpoint = 0;
    try {
      const handle = temporal.client.workflow.getHandle(batchExportWorkflowId(exportId));
      // The failed attempt leaves its checkpoint; the next attempts are retried 1, 2, 4 s later.
      await eventually(async () => ((await handle.describe()).raw.pendingActivities?.[0]?.attempt ?? 0) >= 2, 150, 200);
      checkpoint = (await store.exports.findOne({ _id: exportId }))?.checkpoint?.chunks ?? 0;
      expect(checkpoint, 'chunks written before the unreadable body').to.be.at.least(2);
      await blobCollection(db).updateMany({ owner: exportId }, { $set: { before_retry: true } });
      await blobCollection(db).updateOne({ _id: big!._id }, { $set: { data: big!.data } });
      await handle.result();
    } finally {
      await temporal.close();
    }
    const doc = await store.exports.findOne({ _id: exportId });
    expect(doc?.status).to.equal('completed');
    const kept = await blobCollection(db).find({ owner: exportId, before_retry: true } as never).toArray();
    // Exactly the chunks before the checkpoint kept their mark: the retry wrote none of them again.
    expect(kept.map((chunk) => chunk.n).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: checkpoint }, (_, index) => index));
    const lines = (await fileOf(db, exportId)).toString('utf8').trim().split('\n').map((line) => JSON.parse(line) as Json);
    expect(lines.map((line) => line.url)).to.deep.equal(paths.map((path) => task(path).url));
    expect(lines.map((line) => line.status)).to.deep.equal(paths.map(() => 'successful'));
    expect(lines[40]!.content).to.contain('big page');
  });

  it('answers 410 result_expired for a result past the retention window or no longer stored, and lists it as expired', async () => {
    const store = await batchStore();
    const account = await batchAccount();
    const { job, run } = await finishedJob(account.key, ['/page/1', '/page/2', '/missing/3']);
    const before = await allResults(account.key, `/v1/jobs/${job}/results`);
    const [first, second, failed] = before as [Json, Json, Json];
    expect(first.result_url).to.be.a('string');

    // Swept while the run is kept: its body answers 410 on every path, the failed task is still not ready.
    const db = await database();
    const sweptRun = await finishedJob(account.key, ['/page/5']);
    const sweptRow = (await allResults(account.key, `/v1/jobs/${sweptRun.job}/results`))[0] as Json;
    await blobCollection(db).deleteMany({ owner: sweptRun.run });
    const swept = await content(account.key, `/v1/jobs/${sweptRun.job}/tasks/${sweptRow.task_id as string}/content`);
    expect(swept.status).to.equal(410);
    expect(JSON.parse(swept.text)).to.include({ code: 'result_expired', status: 410 });
    expect((await fetch(sweptRow.result_url as string)).status).to.equal(410);

    // The run ended past RESULTS_RETENTION_DAYS (30 in the test stack): expired before any sweep.
    await store.runs.updateOne({ _id: run }, { $set: { ended_at: new Date(Date.now() - 31 * DAY_MS) } });
    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    expect(rows.map((row) => row.status)).to.deep.equal(['expired', 'expired', 'failed']);
    expect(rows.filter((row) => row.result_url !== undefined)).to.deep.equal([]);
    const successful = await allResults(account.key, `/v1/jobs/${job}/runs/${run}/results`, 'successful');
    expect(successful.map((row) => [row.task_id, row.status])).to.deep.equal([
      [first.task_id, 'expired'],
      [second.task_id, 'expired'],
    ]);
    for (const path of [`/v1/jobs/${job}/tasks/${first.task_id as string}/content`, `/v1/jobs/${job}/runs/${run}/tasks/${second.task_id as string}/content`]) {
      const answer = await content(account.key, path);
      expect(answer.status, path).to.equal(410);
      expect(JSON.parse(answer.text)).to.include({ code: 'result_expired', status: 410 });
    }
    const link = await fetch(first.result_url as string);
    expect([link.status, ((await link.json()) as Json).code]).to.deep.equal([410, 'result_expired']);
    expect((await content(account.key, `/v1/jobs/${job}/tasks/${failed.task_id as string}/content`)).status).to.equal(409);

    // The Python client 1.11.0 reads the rows as EXPIRED and its bulk download skips them.
    const python = pythonWithClient();
    const code = [
      'import json, sys',
      'from zenrows.batch import ZenRowsBatchClient, TaskStatus',
      'a = json.load(sys.stdin)',
      'client = ZenRowsBatchClient(api_key=a["key"], base_url=a["api"] + "/v1", retries=0)',
      'rows = list(client.iter_results(a["job"], status="successful"))',
      'skipped = []',
      'got = client.job(a["job"]).run.download_to_memory(on_skip=skipped.append)',
      'print(json.dumps({"rows": [r.status.value for r in rows], "urls": [r.result_url for r in rows], "downloaded": len(got), "skipped": [r.status is TaskStatus.EXPIRED for r in skipped]}))',
    ].join('\n');
    const out = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(python, ['-c', code], { stdio: 'pipe' });
      child.stdin.end(JSON.stringify({ key: account.key, api: testStack().urls.api, job }));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    expect(out.status, out.stderr).to.equal(0);
    expect(JSON.parse(out.stdout)).to.deep.equal({ rows: ['expired', 'expired'], urls: [null, null], downloaded: 0, skipped: [true, true] });
  });
});

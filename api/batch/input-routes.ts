/** CSV inputs for Batch jobs, and the capability links the clients fetch without credentials (result bodies, export files, input uploads). */
import { Readable } from 'node:stream';
import { readExport } from '../../core/batch/exports';
import type { Links } from '../../core/batch/links';
import { isDeleted } from '../../core/batch/runs';
import type { JobDoc, RunDoc } from '../../core/batch/store';
import { problem } from '../../core/errors';
import { newUlid } from '../../core/ids';
import { principalOf } from '../auth/authenticate';
import type { AppContext } from '../http/context';
import type { Route } from '../http/routes';
import { batchIssues } from '../webhooks/routes';
import type { BatchContext } from './context';
import { errors, INPUT_BODY, json, SANDBOX } from './schemas';

export function inputRoutes(c: BatchContext): Route[] {
  const { deps, commands, collections, common, linksOf, ttlMs, originOf, sendTaskBody } = c;
  return [
    {
      ...common,
      method: 'POST',
      path: '/v1/job_inputs',
      operationId: 'createJobInput',
      summary: 'Allocate a CSV upload for a job’s tasks; PUT the file to `upload.url`, then create the job with `file_input_id`.',
      body: INPUT_BODY,
      responses: { 201: json('`{file_input_id, upload, expires_at}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        const body = input.body as { csv?: { delimiter?: string; quote?: string; header?: boolean; fields: { url: string | number; external_id?: string | number } } };
        if (!body.csv) throw problem('invalid_argument', '"csv" is required for a CSV input.', { members: { parameter: 'csv' } });
        const now = new Date();
        const expires = new Date(now.getTime() + 24 * 3_600_000);
        const id = `in_${newUlid(now.getTime()).toLowerCase()}`;
        await collections.inputs.insertOne({
          _id: id,
          account_id: principal.accountId,
          csv: { delimiter: body.csv.delimiter ?? ',', quote: body.csv.quote ?? '"', header: body.csv.header ?? false, fields: body.csv.fields },
          uploaded: false,
          chunks: 0,
          created_at: now,
          expires_at: expires,
        });
        const linkExpires = Math.min(expires.getTime(), now.getTime() + ttlMs);
        ctx.status = 201;
        ctx.body = {
          file_input_id: id,
          upload: { method: 'PUT', url: `${originOf(ctx)}/v1/batch/links/inputs/${linksOf().sign('input', id, linkExpires)}`, headers: { 'Content-Type': 'text/csv' }, expires_at: new Date(linkExpires).toISOString() },
          expires_at: expires.toISOString(),
        };
      },
    },
    ...linkRoutes(linksOf, commands, sendTaskBody),
  ];

  function linkRoutes(
    linksFor: () => Links,
    batch: BatchContext['commands'],
    send: (ctx: AppContext, job: JobDoc, run: RunDoc, taskId: string) => Promise<void>,
  ): Route[] {
    const linkCommon = { tags: ['Batch links'], issues: batchIssues };
    const gone = (): never => {
      throw problem('not_found', 'This link is unknown or has expired.');
    };
    return [
      {
        ...linkCommon,
        method: 'GET',
        path: '/v1/batch/links/results/{token}',
        operationId: 'readResultLink',
        summary: 'A task’s body through its capability link (no credentials).',
        responses: { 200: { description: 'The body' }, 404: { description: 'Unknown or expired link (not_found)' } },
        async handler(ctx, input) {
          const claim = linksFor().verify(input.params.token ?? '', 'result');
          if (!claim) return gone();
          const [jobId, runId, taskId] = claim.id.split(':');
          const job = await collections.jobs.findOne({ _id: jobId ?? '' });
          const view = await batch.runs.one({ _id: runId ?? '', job_id: jobId ?? '' });
          if (!job || !view || job.status === 'deleted' || isDeleted(view)) return gone();
          ctx.set('Cache-Control', 'private, no-store');
          await send(ctx, job, view.run, taskId ?? '');
        },
      },
      {
        ...linkCommon,
        method: 'GET',
        path: '/v1/batch/links/exports/{token}',
        operationId: 'readExportLink',
        summary: 'An export’s file through its capability link (no credentials).',
        responses: { 200: { description: 'The file (NDJSON or CSV)' }, 404: { description: 'Unknown or expired link (not_found)' } },
        async handler(ctx, input) {
          const claim = linksFor().verify(input.params.token ?? '', 'export');
          if (!claim) return gone();
          const doc = await collections.exports.findOne({ _id: claim.id });
          if (!doc || doc.status !== 'completed') return gone();
          ctx.set(SANDBOX);
          ctx.set('Cache-Control', 'private, no-store');
          ctx.set('Content-Type', doc.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
          ctx.set('Content-Disposition', `attachment; filename="${doc.run_id}.${doc.format}"`);
          ctx.length = doc.size;
          // Streamed a few chunks at a time: a large export is never whole in memory.
          ctx.body = Readable.from(readExport(deps.db.db, doc), { objectMode: false });
        },
      },
      {
        ...linkCommon,
        method: 'PUT',
        path: '/v1/batch/links/inputs/{token}',
        operationId: 'uploadInputLink',
        summary: 'Upload a CSV input through its capability link (no credentials).',
        body: 'raw',
        responses: { 200: { description: 'Stored' }, 404: { description: 'Unknown or expired link (not_found)' }, 409: { description: 'Already uploaded (conflict)' } },
        async handler(ctx, input) {
          const claim = linksFor().verify(input.params.token ?? '', 'input');
          if (!claim) return gone();
          const doc = await collections.inputs.findOne({ _id: claim.id });
          if (!doc || doc.expires_at.getTime() < Date.now()) return gone();
          if (doc.uploaded) throw problem('conflict', 'This input was already uploaded.');
          const data = input.rawBody ?? Buffer.alloc(0);
          const chunk = 4 * 1024 * 1024;
          let count = 0;
          for (let offset = 0; offset < data.length || count === 0; offset += chunk, count++) {
            await collections.contents.replaceOne({ _id: `${doc._id}:${count}` }, { run_id: doc._id, data: data.subarray(offset, offset + chunk) }, { upsert: true });
          }
          await collections.inputs.updateOne({ _id: doc._id, uploaded: false }, { $set: { uploaded: true, chunks: count } });
          ctx.status = 200;
          ctx.body = '';
        },
      },
    ];
  }
}

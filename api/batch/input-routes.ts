/** CSV inputs for Batch jobs, and the capability links the clients fetch without credentials (result bodies, export files, input uploads). */
import { Readable } from 'node:stream';
import type { CsvSettings } from '../../core/batch/commands';
import { requestChunks } from '../http/body';
import { problem } from '../../base/errors';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import { batchIssues } from '../webhooks/routes';
import type { BatchContext } from './context';
import { sendBody } from './present';
import { INPUT_CREATED } from './response-schemas';
import { errors, INPUT_BODY, json, SANDBOX } from './schemas';

export function inputRoutes(c: BatchContext): Route[] {
  const { commands, common, linksOf, ttlMs, originOf } = c;
  return [
    {
      ...common,
      method: 'POST',
      path: '/v1/job_inputs',
      operationId: 'createJobInput',
      summary: 'Allocate a CSV upload for a job’s tasks; PUT the file to `upload.url`, then create the job with `file_input_id`.',
      description: 'An account holds at most its plan’s `stored_inputs` inputs (429 quota_exceeded).',
      body: INPUT_BODY,
      responses: { 201: json('`{file_input_id, upload, expires_at}`', INPUT_CREATED), ...errors },
      async handler(ctx, input) {
        const body = input.body as { csv?: CsvSettings };
        if (!body.csv) throw problem('invalid_argument', '"csv" is required for a CSV input.', { members: { parameter: 'csv' } });
        const doc = await commands.inputs.create(principalOf(ctx), body.csv);
        const id = doc._id;
        const now = doc.created_at;
        const expires = doc.expires_at;
        const linkExpires = Math.min(expires.getTime(), now.getTime() + ttlMs);
        ctx.status = 201;
        ctx.body = {
          file_input_id: id,
          upload: { method: 'PUT', url: `${originOf(ctx)}/v1/batch/links/inputs/${linksOf().sign('input', id, linkExpires)}`, headers: { 'Content-Type': 'text/csv' }, expires_at: new Date(linkExpires).toISOString() },
          expires_at: expires.toISOString(),
        };
      },
    },
    ...linkRoutes(),
  ];

  function linkRoutes(): Route[] {
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
        responses: { 200: { description: 'The body' }, 404: { description: 'Unknown or expired link (not_found)' }, 410: { description: 'The result is past the run\'s retention window or no longer stored (result_expired)' } },
        async handler(ctx, input) {
          const claim = linksOf().verify(input.params.token ?? '', 'result');
          if (!claim) return gone();
          const [jobId, runId, taskId] = claim.id.split(':');
          const found = await commands.query.linkedTaskBody(jobId ?? '', runId ?? '', taskId ?? '');
          if (!found) return gone();
          ctx.set('Cache-Control', 'private, no-store');
          sendBody(ctx, found);
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
          const claim = linksOf().verify(input.params.token ?? '', 'export');
          if (!claim) return gone();
          const file = await commands.exports.linkedFile(claim.id);
          if (!file) return gone();
          const { doc } = file;
          ctx.set(SANDBOX);
          ctx.set('Cache-Control', 'private, no-store');
          ctx.set('Content-Type', doc.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
          ctx.set('Content-Disposition', `attachment; filename="${doc.run_id}.${doc.format}"`);
          ctx.length = doc.size;
          // Streamed a few chunks at a time: a large export is never whole in memory.
          ctx.body = Readable.from(file.chunks, { objectMode: false });
        },
      },
      {
        ...linkCommon,
        method: 'PUT',
        path: '/v1/batch/links/inputs/{token}',
        operationId: 'uploadInputLink',
        summary: 'Upload a CSV input through its capability link (no credentials).',
        body: 'stream',
        responses: { 200: { description: 'Stored' }, 400: { description: 'Not UTF-8, an unterminated quote (the line named), a cell or row past its cap (`limit` csv_cell_chars or csv_row_cells, `allowed`, `line`), or more tasks than a job holds (invalid_argument)' }, 413: { description: 'Larger than CSV_INPUT_MAX_BYTES (payload_too_large, the cap named)' }, 429: { description: 'The account’s stored_input_bytes (quota_exceeded)' }, 404: { description: 'Unknown or expired link (not_found)' }, 409: { description: 'Already uploaded (conflict)' } },
        async handler(ctx, input) {
          const claim = linksOf().verify(input.params.token ?? '', 'input');
          if (!claim) return gone();
          if (!(await commands.inputs.upload(claim.id, requestChunks(ctx), Number(ctx.get('Content-Length') || 0)))) return gone();
          ctx.status = 200;
          ctx.body = '';
        },
      },
    ];
  }
}

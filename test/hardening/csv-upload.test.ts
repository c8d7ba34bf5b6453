/**
 * A CSV upload of one 42 MB cell: under the 50 MB size cap, it was read whole and stalled the API for
 * over a second while the cell was assembled and stored. The reader caps cells while reading now: the
 * upload is refused once the cell passes its cap, long before its end, and /healthz answers throughout.
 */
import http from 'node:http';
import { expect } from 'chai';
import { newAccount, openAccounts, type AccountsHandle } from '../helpers/app';
import { testStack } from '../helpers/stack';
import { batchRequest } from '../webhooks/helpers';
import { probeWhile } from './responsive';

const CELL_BYTES = 42 * 1024 * 1024;
const CHUNK = Buffer.alloc(256 * 1024, 'a');

/**
 * PUTs `totalBytes` of one cell to `url`, a chunk at a time as the socket takes them, and stops sending
 * when the answer comes: the answer, and how many bytes had been handed to the socket by then.
 */
function streamUpload(url: string, totalBytes: number): Promise<{ status: number; body: Record<string, unknown>; sentBeforeAnswer: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const request = http.request(url, { method: 'PUT', headers: { 'content-type': 'text/csv', 'content-length': String(totalBytes) } });
    request.on('response', (response) => {
      answered = true;
      const sentBeforeAnswer = sent;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, sentBeforeAnswer });
        request.destroy();
      });
    });
    // The server closes the connection with its refusal: writes after that fail, which is expected.
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    const pump = (): void => {
      while (!answered && sent < totalBytes) {
        const piece = sent + CHUNK.length <= totalBytes ? CHUNK : CHUNK.subarray(0, totalBytes - sent);
        sent += piece.length;
        if (!request.write(piece)) return void request.once('drain', pump);
      }
      if (!answered) request.end();
    };
    pump();
  });
}

describe('hardening: a CSV upload of one huge cell', function () {
  this.timeout(180_000);
  let handle: AccountsHandle;
  before(async () => {
    handle = await openAccounts();
  });
  after(() => handle.close());

  it('is refused once the cell passes its cap, naming it, and /healthz answers throughout', async () => {
    const account = await newAccount(handle.accounts, { credits: 1_000 });
    const created = await batchRequest(account.key, 'POST', '/v1/job_inputs', { type: 'csv', csv: { fields: { url: 0 } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const uploadUrl = (created.body.upload as { url: string }).url;

    const { result, probes } = await probeWhile(testStack().urls.api, streamUpload(uploadUrl, CELL_BYTES), { everyMs: 100 });
    expect(result.status, JSON.stringify(result.body)).to.equal(400);
    expect(result.body).to.deep.include({ code: 'invalid_argument', parameter: 'file', limit: 'csv_cell_chars', allowed: 65_536, line: 1 });
    expect(String(result.body.detail)).to.contain('65536');
    // Refused early: the answer came while most of the file was still to be sent (socket buffers hold a few MB).
    expect(result.sentBeforeAnswer).to.be.below(CELL_BYTES / 2);
    expect(probes.filter((probe) => probe.status !== 200), JSON.stringify(probes)).to.deep.equal([]);

    // Nothing of it was kept: the input is still waiting for its upload.
    const job = await batchRequest(account.key, 'POST', '/v1/jobs', { file_input_id: created.body.file_input_id });
    expect([job.status, job.body.code]).to.deep.equal([409, 'file_input_not_uploaded']);
  });
});

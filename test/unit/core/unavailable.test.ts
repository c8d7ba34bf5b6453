import { expect } from 'chai';
import net from 'node:net';
import { MongoServerError } from 'mongodb';
import { UnknownOutcome } from '../../../base/db';
import { openDatabase } from '../../../base/db';
import { problem } from '../../../base/errors';
import { createLogger } from '../../../base/log';
import { connectTemporal } from '../../../base/temporal';
import { serviceUnavailable, unavailableDependency } from '../../../base/unavailable';

/** A loopback port nothing listens on (taken from the kernel, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const failure = async (work: () => Promise<unknown>): Promise<unknown> => {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
};

describe('what counts as a component being down', () => {
  it('a database nobody answers at: the driver’s own error, seen through a cause chain', async () => {
    const port = await closedPort();
    const error = await failure(() => openDatabase({ mongodbUrl: `mongodb://127.0.0.1:${port}`, mongodbDatabase: 'x', databaseTimeoutMs: 300 }, createLogger('error')));
    expect(unavailableDependency(error)).to.equal('database');
    expect(unavailableDependency(new Error('wrapped', { cause: error }))).to.equal('database');
  });

  it('a Temporal nobody answers at: the client fails within its deadline instead of retrying for 20 s', async function () {
    // Generous against the 0.5 s deadline; the client's own retries used to take about 20 s.
    this.timeout(8_000);
    const port = await closedPort();
    const temporal = connectTemporal({ temporalAddress: `127.0.0.1:${port}`, temporalNamespace: 'default', temporalTimeoutMs: 500 });
    try {
      const error = await failure(() => temporal.client.workflow.start('anything', { taskQueue: 'q', workflowId: 'w' }));
      expect(unavailableDependency(error)).to.equal('temporal');
    } finally {
      await temporal.close();
    }
  });

  it('a ledger write whose landing could not be read back, whatever its first failure was', () => {
    // A killed server's last answer can be a server error rather than a network one.
    const outcome = new UnknownOutcome(new MongoServerError({ code: 1, errmsg: 'connection closed by the backend' }), 'chain#1', 'token');
    expect(unavailableDependency(outcome)).to.equal('database');
    expect(unavailableDependency(new Error('billing failed', { cause: outcome }))).to.equal('database');
  });

  it('a store that cannot write for want of space: FerretDB’s SQLite error and MongoDB’s OutOfDiskSpace, with a detail that says so', () => {
    // As FerretDB 1.24 answers an insert on a full disk (seen on a full tmpfs).
    const full = new MongoServerError({ ok: 0, code: 1, codeName: 'InternalError', errmsg: '[msg_insert.go:168 handler.(*Handler).MsgInsert] [db.go:167 fsql.(*DB).InTransaction] database or disk is full (13)' });
    const mongo = new MongoServerError({ ok: 0, code: 14031, codeName: 'OutOfDiskSpace', errmsg: 'Command insert failed: out of disk space' });
    for (const error of [full, mongo, new Error('charge failed', { cause: full })]) {
      expect(unavailableDependency(error)).to.equal('database');
      const answer = serviceUnavailable('database', error);
      expect([answer.status, answer.code, answer.members.component]).to.deep.equal([503, 'service_unavailable', 'database']);
      expect(answer.detail).to.match(/disk is full/);
      expect(answer.headers['Retry-After']).to.match(/^\d+$/);
    }
    // Another InternalError is a bug of ours or the store’s, not an outage.
    expect(unavailableDependency(new MongoServerError({ ok: 0, code: 1, codeName: 'InternalError', errmsg: 'unexpected pushdown' }))).to.equal(undefined);
  });

  it('not: our own bugs, the caller’s errors, or a database error that merely shares a gRPC code', () => {
    expect(unavailableDependency(new Error('boom'))).to.equal(undefined);
    expect(unavailableDependency(problem('invalid_argument', 'bad'))).to.equal(undefined);
    // Code 14 is TypeMismatch to MongoDB and UNAVAILABLE to gRPC.
    expect(unavailableDependency(new MongoServerError({ code: 14, errmsg: 'type mismatch' }))).to.equal(undefined);
    expect(unavailableDependency(null)).to.equal(undefined);
  });

  it('answers 503 service_unavailable naming the component, with Retry-After', () => {
    const error = serviceUnavailable('worker');
    expect([error.status, error.code, error.members.component]).to.deep.equal([503, 'service_unavailable', 'worker']);
    expect(error.headers['Retry-After']).to.match(/^\d+$/);
  });
});

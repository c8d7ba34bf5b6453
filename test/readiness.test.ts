import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { connectTemporal } from '../base/temporal';
import { serviceConfig } from './helpers/app';
import { eventually, operatorHeaders, testStack } from './helpers/stack';

interface Readiness {
  status?: string;
  code?: string;
  checks: Record<string, string>;
  self_check?: { workflow_id: string; worker: string };
}

async function readiness(deep = false): Promise<{ status: number; body: Readiness; type: string | null }> {
  const response = await fetch(`${testStack().urls.api}/readyz${deep ? '?deep=true' : ''}`, { headers: deep ? operatorHeaders() : {} });
  return { status: response.status, body: (await response.json()) as Readiness, type: response.headers.get('content-type') };
}

describe('readiness and the round trip', () => {
  it('goes API → Temporal → worker → activity → MongoDB → API', async () => {
    const { status, body } = await readiness(true);
    expect(status).to.equal(200);
    expect(body.checks).to.deep.equal({ database: 'ok', temporal: 'ok', worker: 'ok' });
    const workflowId = body.self_check?.workflow_id;
    expect(workflowId).to.match(/^selfcheck-/);

    // The activity's record is in the services' database, written by the worker process.
    const config = serviceConfig();
    const client = new MongoClient(testStack().urls.mongodb);
    try {
      const record = await client.db(config.mongodbDatabase).collection('self_checks').findOne({ _id: workflowId!.slice('selfcheck-'.length) as never });
      expect(record?.worker).to.equal(body.self_check?.worker);
      expect(record?.worker).to.equal(`${testStack().component('worker').pid}@${(await import('node:os')).hostname()}`);
    } finally {
      await client.close();
    }
    // And Temporal ran it as a workflow on our task queue.
    const temporal = connectTemporal({ temporalAddress: testStack().urls.temporal, temporalNamespace: config.temporalNamespace });
    try {
      const description = await temporal.client.workflow.getHandle(workflowId!).describe();
      expect(description.status.name).to.equal('COMPLETED');
      expect(description.taskQueue).to.equal(config.temporalTaskQueue);
    } finally {
      await temporal.close();
    }
  });

  it('reports the database unreachable while FerretDB is down, and ready again after', async () => {
    const ferretdb = testStack().component('ferretdb');
    await ferretdb.stop();
    try {
      const down = await readiness();
      expect(down.status).to.equal(503);
      expect(down.type).to.equal('application/problem+json');
      expect(down.body.code).to.equal('not_ready');
      expect(down.body.checks.database).to.match(/^unreachable/);
      expect(down.body.checks.temporal).to.equal('ok');
    } finally {
      await testStack().startOne('ferretdb');
    }
    await eventually(async () => (await readiness()).status === 200);
  });

  it('reports Temporal unreachable while it is down, and the worker serves again after a restart', async () => {
    const temporal = testStack().component('temporal');
    await temporal.stop();
    try {
      const down = await readiness();
      expect(down.status).to.equal(503);
      expect(down.body.checks.temporal).to.match(/^unreachable/);
      expect(down.body.checks.database).to.equal('ok');
    } finally {
      await testStack().startOne('temporal');
    }
    await eventually(async () => {
      const { status, body } = await readiness(true);
      return status === 200 && body.checks.worker === 'ok';
    }, 60, 500);
  });

  it('reports the worker missing when no worker polls the task queue', async function () {
    const worker = testStack().component('worker');
    await worker.stop();
    try {
      const { status, body } = await readiness(true);
      expect(status).to.equal(503);
      expect(body.checks.worker).to.match(/^unreachable/);
    } finally {
      await testStack().startOne('worker');
    }
    // Ready once the new worker's first poll reached Temporal.
    await eventually(async () => (await readiness(true)).status === 200, 60, 500);
  });
});

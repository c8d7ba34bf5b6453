/**
 * One browser per machine (engine/browser/share.ts) through the running service: while the API renders
 * Fetch requests and the worker renders a Batch run's tasks, /proc shows one Chromium browser process
 * in all, under one of the two; after the idle close there is none. The API and the worker are
 * restarted with a short BROWSER_IDLE_CLOSE_MS for this and restarted as they were afterwards.
 */
import { expect } from 'chai';
import { processKind, processTree } from '../../scripts/stack/proc';
import { batchAccount, batchRequest, waitForRun } from '../batch/helpers';
import { startCompletenessSite } from '../fixtures/browser/completeness';
import { fetchClient } from '../fetch/helpers';
import { eventually, testStack } from '../helpers/stack';

const IDLE_CLOSE_MS = 3_000;

async function restart(env: Record<string, string | undefined>): Promise<void> {
  const stack = testStack();
  for (const name of ['api', 'worker'] as const) {
    const component = stack.component(name);
    await component.stop();
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete component.spec.env[key];
      else component.spec.env[key] = value;
    }
    await stack.startOne(name);
  }
}

/** Chromium processes under the API's and under the worker's process, by kind. */
function chromiumOf(name: 'api' | 'worker'): { browsers: number; all: number } {
  const pid = testStack().component(name).pid;
  const kinds = (pid === undefined ? [] : processTree(pid)).map(processKind).filter((kind) => kind?.chromium);
  return { browsers: kinds.filter((kind) => kind?.name === 'browser').length, all: kinds.length };
}

describe('one browser per machine', function () {
  this.timeout(240_000);
  let site: Awaited<ReturnType<typeof startCompletenessSite>>;

  before(async () => {
    site = await startCompletenessSite();
    await restart({ BROWSER_IDLE_CLOSE_MS: String(IDLE_CLOSE_MS) });
  });
  after(async () => {
    await restart({ BROWSER_IDLE_CLOSE_MS: undefined });
    await site.close();
  });

  it('renders the API’s and the worker’s pages on one Chromium, which is gone after the idle close', async () => {
    const account = await batchAccount({ concurrency: 4 });
    const client = fetchClient(testStack().urls.api, account);
    const pages = ['timer-500', 'fetch', 'chain', 'hydrate'];
    const tasks = Array.from({ length: 12 }, (_, index) => ({ url: site.at(pages[index % pages.length] as string), zenrows_params: { js_render: true } }));
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', tasks });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const job = created.body.job_id as string;

    const looks: Array<{ api: { browsers: number; all: number }; worker: { browsers: number; all: number } }> = [];
    let apiRendered = 0;
    let done = false;
    const run = waitForRun(account.key, job).finally(() => (done = true));
    for (let index = 0; !done && index < 200; index++) {
      const response = await client.fetch({ url: site.at(pages[index % pages.length] as string), js_render: 'true' });
      expect(response.status).to.equal(200);
      expect(await response.text()).to.contain('LATE:');
      apiRendered++;
      looks.push({ api: chromiumOf('api'), worker: chromiumOf('worker') });
    }
    const ended = await run;
    expect(ended.status, JSON.stringify(ended)).to.equal('completed');
    expect((ended.stats as { completed: number }).completed).to.equal(tasks.length);
    expect(apiRendered, 'the API rendered while the worker did').to.be.at.least(2);

    // Every look: one browser in all, and every Chromium process under the one host.
    for (const look of looks) {
      expect(look.api.browsers + look.worker.browsers, JSON.stringify(look)).to.equal(1);
      expect(look.api.all === 0 || look.worker.all === 0, JSON.stringify(look)).to.equal(true);
    }

    await eventually(async () => chromiumOf('api').all + chromiumOf('worker').all === 0, 100, 200);
  });
});

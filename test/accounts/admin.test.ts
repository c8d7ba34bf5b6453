import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { admin, adminJson, adminWith } from '../helpers/admin';
import { eventually, testStack } from '../helpers/stack';
import { readJson } from '../helpers/app';

const details = async (key: string) => {
  const response = await fetch(`${testStack().urls.api}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': key } });
  return { status: response.status, body: await readJson(response) };
};

describe('npm run admin', () => {
  it('creates an account whose key works, sets its plan, caps, revokes and reports usage', async () => {
    const created = await adminJson('create-account', '--email', 'ops@example.com');
    expect(created.api_key).to.match(/^[0-9a-f]{40}$/);
    const accountId = String(created.account_id);
    const first = await details(String(created.api_key));
    expect(first.status).to.equal(200);
    expect((first.body.plan as { name: string }).name).to.equal('free');

    const planned = await adminJson('set-plan', accountId, 'business', '--concurrency', '7');
    expect(planned.plan).to.deep.include({ name: 'business', concurrency: 7, credits: 3_000_000 });
    const second = await adminJson('create-key', accountId, '--cap', '40', '--name', 'ci');
    await eventually(async () => ((await details(String(second.api_key))).body.plan as { name?: string }).name === 'business', 60, 250);

    const shown = await adminJson('show-account', accountId);
    expect(shown.keys).to.have.length(2);
    expect(JSON.stringify(shown)).not.to.include(String(created.api_key));

    const usage = await adminJson('usage', accountId);
    expect(usage).to.include({ used: 0, limit: 3_000_000 });

    await adminJson('revoke-key', String(created.key_id));
    await eventually(async () => (await details(String(created.api_key))).body.code === 'AUTH003', 60, 250);
    expect((await details(String(second.api_key))).status).to.equal(200);
  });

  it('explains mistakes with a non-zero exit and changes nothing', async () => {
    const unknownPlan = await admin('create-account', '--plan', 'gold');
    expect(unknownPlan.code).to.equal(2);
    expect(unknownPlan.stderr).to.match(/unknown plan "gold"/);
    const noAccount = await admin('create-key', 'acc_missing');
    expect(noAccount.code).to.equal(1);
    expect(noAccount.stderr).to.match(/No account acc_missing/);
    const badOption = await admin('usage', 'x', '--bogus');
    expect(badOption.code).to.equal(2);
    const help = await admin('--help');
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(/create-account/);
  });

  describe('without MONGODB_URL', () => {
    /** A listener on the configured FerretDB port that is not the stack's: nothing may connect to it. */
    let trap: net.Server;
    let trapPort = 0;
    let trapped = 0;
    let emptyData: string;
    before(async () => {
      trap = net.createServer((socket) => {
        trapped++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
      trapPort = (trap.address() as net.AddressInfo).port;
      emptyData = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-admin-'));
    });
    after(async () => {
      await new Promise<void>((resolve) => trap.close(() => resolve()));
      rmSync(emptyData, { recursive: true, force: true });
    });
    const operator = (dataDir: string) => ({ MONGODB_URL: undefined, DATA_DIR: dataDir, FERRETDB_PORT: String(trapPort), MONGODB_DATABASE: testStack().component('api').spec.env.MONGODB_DATABASE });

    it('reaches the FerretDB of the stack running on DATA_DIR at the port its launcher chose', async function () {
      if (!testStack().has('ferretdb')) this.skip();
      const created = await adminWith(operator(testStack().urls.dataDir), 'create-account', '--json');
      expect(created.code, created.stderr).to.equal(0);
      const { api_key: key } = JSON.parse(created.stdout) as { api_key: string };
      expect((await details(key)).status, 'the key works on the running stack').to.equal(200);
      expect(trapped, 'connections to the configured port').to.equal(0);
    });

    it('connects nowhere when no running stack recorded its database, and says how to choose one', async () => {
      const missing = await adminWith(operator(emptyData), 'create-account');
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.match(/no database to use: .*MONGODB_URL/);
      // A record left by a launcher that is gone is not trusted either.
      const gone = spawnSync(process.execPath, ['-e', '0']).pid;
      mkdirSync(path.join(emptyData, 'run'), { recursive: true });
      writeFileSync(path.join(emptyData, 'run', 'ferretdb.json'), JSON.stringify({ pid: gone, url: `mongodb://127.0.0.1:${trapPort}/` }));
      const stale = await adminWith(operator(emptyData), 'create-account');
      expect(stale.code).to.equal(1);
      expect(stale.stderr).to.match(/is gone/);
      expect(trapped, 'connections to the configured port').to.equal(0);
    });
  });
});

import { expect } from 'chai';
import { admin, adminJson } from '../helpers/admin';
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
});

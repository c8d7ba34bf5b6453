import { expect } from 'chai';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { ChangeRecorder, type Observation } from '../../core/changes';
import { RETENTION_SCHEDULE_ID } from '../../core/retention';
import { createLogger } from '../../base/log';
import { htmlOutputsFromConfig } from '../../engine';
import { accountsHandle, crawlAccount } from '../crawls/helpers';
import { renderPage } from '../fixtures/changes/pages';
import { startChangeSite, type ChangeSite } from '../fixtures/changes/site';
import { triggerScheduleNow } from '../helpers/schedules';
import { changeBlobChunks, historyClient, storedVersions } from './helpers';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('change tracking under retention: the plan’s versions and days limits', function () {
  this.timeout(180_000);
  let site: ChangeSite;
  let temporal: TemporalHandle;
  let outputs: ReturnType<typeof htmlOutputsFromConfig>;

  before(async () => {
    site = await startChangeSite({ pages: 3, seed: 11 });
    const handle = await accountsHandle();
    temporal = connectTemporal(handle.config);
    outputs = htmlOutputsFromConfig(handle.config, createLogger('error', {}, () => undefined));
  });
  after(async () => {
    await outputs.threads.close();
    await temporal.close();
    await site.close();
  });

  /** One sweep, now. A Schedule names its workflows to the second: two triggers in one second would be one. */
  const sweepNow = async (): Promise<Record<string, number>> => {
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    return (await triggerScheduleNow<{ removed: Record<string, number> }>(temporal.client, RETENTION_SCHEDULE_ID)).removed;
  };

  it('shows the newest history_versions versions at once, and the sweep removes the older ones, their blobs after a second sweep', async () => {
    const client = historyClient(await crawlAccount());
    const id = site.ids()[0] as number;
    const url = site.url(id);
    const limit = client.account.principal.plan.limits.historyVersions;
    expect(limit).to.equal(10);
    await client.tracked(url);
    for (let edit = 0; edit < limit + 2; edit++) {
      site.edit(id, edit % 2 === 0 ? 'paragraph added' : 'list item added');
      expect((await client.tracked(url)).change.status).to.equal('changed');
    }
    const versions = async (): Promise<string[]> => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.history({ url, limit: '4', ...(cursor ? { cursor } : {}) });
        ids.push(...(page.body.versions as Array<{ version_id: string }>).map((version) => version.version_id));
        cursor = (page.body.next_cursor as string | null) ?? undefined;
      } while (cursor);
      return ids;
    };
    const shown = await versions();
    expect(shown).to.have.length(limit);
    expect(shown.map((version) => Number(version.split('.').at(-1)))).to.deep.equal(Array.from({ length: limit }, (_, k) => limit + 3 - k));
    const oldest = `${shown[0]?.split('.').slice(0, 3).join('.') ?? ''}.1`;
    expect((await client.fetch({ url, as_of: oldest })).status).to.equal(404);
    expect(await storedVersions(client.account.accountId)).to.equal(limit + 3);
    const chunks = await changeBlobChunks(client.account.accountId);
    expect(chunks).to.equal(2 * (limit + 3));

    await sweepNow();
    expect(await storedVersions(client.account.accountId)).to.equal(limit);
    // Blobs no kept version names are taken by the next sweep, not this one.
    expect(await changeBlobChunks(client.account.accountId)).to.equal(chunks);
    await sweepNow();
    expect(await changeBlobChunks(client.account.accountId)).to.equal(2 * limit);
    expect(await versions()).to.deep.equal(shown);
    // The history goes on from there.
    site.edit(id, 'paragraph removed');
    expect((await client.tracked(url)).change.status).to.equal('changed');
  });

  it('drops versions replaced more than history_days ago, and a URL no fetch tracked for as long', async () => {
    const account = await crawlAccount();
    const client = historyClient(account);
    const recorder = new ChangeRecorder((await accountsHandle()).db.db, outputs.html);
    const model = site.model(site.ids()[1] as number);
    const days = account.principal.plan.limits.historyDays;
    const at = (daysAgo: number): Date => new Date(Date.now() - daysAgo * DAY_MS);
    const page = (html: string, daysAgo: number): Observation => ({ body: Buffer.from(html), contentType: 'text/html; charset=utf-8', finalUrl: model.url, status: 200, fetchedAt: at(daysAgo) });
    const edited = (text: string): string => renderPage({ ...model, paragraphs: [...model.paragraphs, text] }, 3);
    const key = { accountId: account.accountId, url: model.url };
    // Versions 40, 35 and 1 days old: the first was replaced 35 days ago (gone), the second a day ago (kept).
    expect((await recorder.record(key, page(renderPage(model, 1), days + 10))).status).to.equal('new');
    expect((await recorder.record(key, page(edited('Second edition.'), days + 5))).status).to.equal('changed');
    expect((await recorder.record(key, page(edited('Third edition.'), 1))).status).to.equal('changed');
    // A URL last found 31 days ago: gone whole.
    const stale = { accountId: account.accountId, url: `${model.url}-old` };
    await recorder.record(stale, page(renderPage(model, 2), days + 1));

    const listed = (await client.history({ url: model.url })).body.versions as Array<{ status: string }>;
    expect(listed.map((version) => version.status)).to.deep.equal(['changed', 'changed']);
    expect((await client.history({ url: stale.url })).status).to.equal(404);
    expect(await storedVersions(account.accountId)).to.equal(4);

    await sweepNow();
    await sweepNow();
    expect(await storedVersions(account.accountId)).to.equal(2);
    expect(await changeBlobChunks(account.accountId)).to.equal(4);
    const { db } = (await accountsHandle()).db;
    expect(await db.collection('change_tracks').countDocuments({ account: account.accountId })).to.equal(1);
    // The stale URL's blobs are orphans the blob sweep took.
    expect(await db.collection('blob_chunks').countDocuments({ kind: 'change_track', owner: { $regex: `^${account.accountId}\\|` } })).to.equal(4);
  });
});

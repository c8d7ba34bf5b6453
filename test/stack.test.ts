import { expect } from 'chai';
import { chromium } from 'playwright-core';
import { MongoClient } from 'mongodb';
import { connectTemporal } from '../base/temporal';
import { startFixtureServer } from './helpers/fixtures';
import { testStack } from './helpers/stack';

describe('the local stack', () => {
  it('serves /healthz and a ready /readyz from the API', async () => {
    const { urls } = testStack();
    const health = await fetch(`${urls.api}/healthz`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.equal({ status: 'ok' });
    const ready = await fetch(`${urls.api}/readyz`);
    expect(ready.status).to.equal(200);
    expect(await ready.json()).to.deep.equal({ status: 'ready', checks: { database: 'ok', temporal: 'ok', worker: 'ok' } });
  });

  it('runs FerretDB speaking the MongoDB protocol with its data in the run folder', async () => {
    const { urls } = testStack();
    const client = new MongoClient(urls.mongodb);
    try {
      const hello = await client.db('admin').command({ hello: 1 });
      expect(hello.isWritablePrimary ?? hello.ismaster).to.equal(true);
    } finally {
      await client.close();
    }
  });

  it('runs the Temporal dev server with our search attributes and its Web UI', async () => {
    const { urls } = testStack();
    const temporal = connectTemporal({ temporalAddress: urls.temporal, temporalNamespace: 'default' });
    try {
      const { customAttributes } = await temporal.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(customAttributes ?? {})).to.include.members(['FetchplaneAccountId', 'FetchplaneStatus']);
    } finally {
      await temporal.close();
    }
    const ui = await fetch(urls.temporalUi!);
    expect(ui.status).to.equal(200);
    expect(await ui.text()).to.match(/<html/i);
  });

  it('has a Chromium that playwright-core drives to render a local page', async () => {
    const chromiumPath = testStack().component('worker').spec.env.CHROMIUM_PATH;
    expect(chromiumPath, 'CHROMIUM_PATH handed to the worker').to.be.a('string');
    const site = await startFixtureServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<html><body><div id="out"></div><script>document.getElementById("out").textContent = "rendered " + (6 * 7)</script></body></html>');
    });
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      await page.goto(site.url);
      expect(await page.textContent('#out')).to.equal('rendered 42');
    } finally {
      await browser.close();
      await site.close();
    }
  });
});

/**
 * `npx tsx bench/extract.ts`: Extract end to end on the generated test sites (test/fixtures/extract-sites),
 * through its own stack (like the test suite), the sites served on port 80 of a loopback address of
 * its own. For each site it prints:
 * - preparation wall time (submission to `ready`), with or without example URLs;
 * - field-level precision, recall and F1 of `extract=auto` on every detail page the preparation never
 *   fetched (the server's request log says which), against the generator's ground truth
 *   (goal ≥ 0.95 overall, ≥ 0.90 per site);
 * and then the latency of `extract=auto` on a 200 KB page against a plain fetch of the same page, in
 * alternating rounds (goal: under 20% more).
 */
import { parseArgs } from 'node:util';
import { startBenchStack } from './crawl';
import { acmeHomes, casaHogar, EXTRACT_HOSTS, immoHaus, nextProp, shopWidgets, type GeneratedSite } from '../test/fixtures/extract-sites/sites';
import { serveSites } from '../test/fixtures/extract-sites/server';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' } } });
const ROUNDS = Number(values.rounds);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const median = (samples: number[]): number => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? NaN;

function flatten(node: Json, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, value] of Object.entries(node)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value && typeof value === 'object' && !Array.isArray(value)) flatten(value as Json, name, out);
    else out.set(name, value);
  }
  return out;
}

async function main(): Promise<void> {
  const address = `127.${200 + (process.pid % 50)}.${1 + (process.pid % 250)}.7`;
  const bench = await startBenchStack({
    HOST_OVERRIDES: ['*.fixture.test=127.0.0.1', ...EXTRACT_HOSTS.map((host) => `${host}=${address}`)].join(','),
    TARGET_ALLOWLIST: `127.0.0.1,::1,localhost,${address}`,
  });
  const sites: Array<{ site: GeneratedSite; examples: boolean; query?: Record<string, string> }> = [
    { site: acmeHomes(40), examples: false },
    { site: immoHaus(30), examples: true },
    { site: casaHogar(30), examples: false },
    { site: shopWidgets(30), examples: false },
    { site: nextProp(30), examples: false, query: { mode: 'auto' } },
  ];
  const big = acmeHomes(24, 1);
  const server = await serveSites(address, sites.map(({ site }) => site));
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json; ms: number }> => {
    const started = performance.now();
    const response = await fetch(`${bench.api}${path}`, {
      method,
      headers: { 'X-API-Key': bench.key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as Json) : { text }, ms };
  };
  const totals = { tp: 0, fp: 0, fn: 0 };
  try {
    console.log('| site | example URLs | preparation | held-out pages | precision | recall | F1 |');
    console.log('|---|---|---|---|---|---|---|');
    for (const { site, examples, query } of sites) {
      const started = performance.now();
      const submitted = await call('POST', '/v1/extract/prepared-domains', { domain: site.host, ...(examples ? { example_urls: [`http://${site.host}${site.details[0]}`] } : {}) });
      if (submitted.status !== 202) throw new Error(`${site.host}: ${JSON.stringify(submitted.body)}`);
      let record: Json = submitted.body;
      while (record.status === 'preparing') {
        await new Promise((resolve) => setTimeout(resolve, 250));
        record = (await call('GET', `/v1/extract/prepared-domains/${site.host}`)).body;
      }
      const seconds = (performance.now() - started) / 1000;
      const seen = new Set(server.requests.filter((request) => request.host === site.host).map((request) => request.path));
      const heldOut = site.details.filter((path) => !seen.has(path));
      const counts = { tp: 0, fp: 0, fn: 0 };
      for (const path of record.status === 'ready' ? heldOut : []) {
        const params = new URLSearchParams({ apikey: bench.key, url: `http://${site.host}${path}`, extract: 'auto', ...query });
        const answer = await call('GET', `/v1/?${params.toString()}`);
        const truth = site.pages.get(path)!.truth!;
        const got = flatten((answer.body.parsed ?? {}) as Json);
        for (const [name, expected] of Object.entries(truth)) if (got.get(name) === expected) counts.tp++;
        else counts.fn++;
        for (const [name, value] of got) if (truth[name] !== value) counts.fp++;
      }
      if (record.status !== 'ready') counts.fn += heldOut.length;
      totals.tp += counts.tp;
      totals.fp += counts.fp;
      totals.fn += counts.fn;
      const precision = counts.tp / Math.max(1, counts.tp + counts.fp);
      const recall = counts.tp / Math.max(1, counts.tp + counts.fn);
      const f1 = (2 * precision * recall) / Math.max(1e-9, precision + recall);
      console.log(`| ${site.host} | ${examples ? 'yes' : 'no'} | ${record.status} in ${seconds.toFixed(1)} s | ${heldOut.length} | ${precision.toFixed(3)} | ${recall.toFixed(3)} | ${f1.toFixed(3)} |`);
    }
    const precision = totals.tp / Math.max(1, totals.tp + totals.fp);
    const recall = totals.tp / Math.max(1, totals.tp + totals.fn);
    console.log(`\noverall F1 ${((2 * precision * recall) / Math.max(1e-9, precision + recall)).toFixed(3)} (goal ≥ 0.95; ≥ 0.90 per site)`);

    // A 200 KB listing page of the prepared template, never seen by the preparation.
    const page = big.pages.get(big.details[3]!)!;
    const padding = `<section class="more"><p>${'Quiet street, sunny garden, renovated kitchen. '.repeat(4200)}</p></section>`;
    const path = '/property/big-99999';
    sites[0]!.site.pages.set(path, { ...page, path, html: page.html.replace('</article>', `${padding}</article>`) });
    const bytes = sites[0]!.site.pages.get(path)!.html.length;
    const url = `http://acme-homes.test${path}`;
    const plain: number[] = [];
    const extracted: number[] = [];
    for (let round = 0; round < ROUNDS + 3; round++) {
      const a = await call('GET', `/v1/?${new URLSearchParams({ apikey: bench.key, url }).toString()}`);
      const b = await call('GET', `/v1/?${new URLSearchParams({ apikey: bench.key, url, extract: 'auto' }).toString()}`);
      if (b.status !== 200) throw new Error(`extract on the large page: ${JSON.stringify(b.body).slice(0, 300)}`);
      if (round < 3) continue;
      plain.push(a.ms);
      extracted.push(b.ms);
    }
    console.log(`\n${(bytes / 1024).toFixed(0)} KB page, ${ROUNDS} alternating rounds: plain fetch p50 ${median(plain).toFixed(1)} ms, extract=auto p50 ${median(extracted).toFixed(1)} ms`);
    console.log(`extract/plain: ${(median(extracted) / median(plain)).toFixed(2)} (goal < 1.20)`);
  } finally {
    await server.close();
    await bench.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { expect } from 'chai';
import { compareSnapshots, emptyProfile, isNoiseProfile, MAX_REGIONS, probeProfile, snapshotOf, updateProfile, type NoiseProfile, type RegionObservation } from '../../../engine/changes';

const BANNERS = ['Sponsored: garden furniture', 'Sponsored: coffee by post', 'Sponsored: flights to Lisbon', 'Sponsored: running shoes'];

/** A page with a banner between two stable paragraphs, and what else it is given. */
const page = (banner: number, parts: { intro?: string; extra?: string; outro?: string } = {}): string =>
  [
    '# Weekly notes',
    parts.intro ?? 'The river market opens at nine on Saturdays.',
    ...(parts.extra ? [parts.extra] : []),
    BANNERS[banner % BANNERS.length] as string,
    parts.outro ?? 'Stalls close when the bell rings.',
    '© Example',
  ].join('\n\n');

const MINUTE = 60_000;

describe('change tracking: the noise profile', () => {
  it('learns from a probe that a banner rotates, and ignores it from then on', () => {
    const first = snapshotOf(page(0));
    const unprobed = compareSnapshots(first, snapshotOf(page(1)));
    expect(unprobed.status).to.equal('changed');
    const profile = probeProfile(undefined, [snapshotOf(page(2)), snapshotOf(page(3))]);
    expect(profile.regions.filter((region) => region.volatile)).to.have.length(1);
    const comparison = compareSnapshots(first, snapshotOf(page(1)), { profile });
    expect(comparison.status).to.equal('same');
    expect(comparison.diff?.ignored).to.deep.include({ kind: 'learned', count: 1 });
  });

  it('still counts a real edit next to a learned banner, and only the edit', () => {
    const profile = probeProfile(undefined, [snapshotOf(page(2)), snapshotOf(page(3))]);
    const edited = compareSnapshots(snapshotOf(page(0)), snapshotOf(page(1, { intro: 'The river market opens at ten on Saturdays.' })), { profile });
    expect(edited.status).to.equal('changed');
    expect(edited.diff?.added).to.equal(1);
    expect(edited.diff?.removed).to.equal(1);
    expect(edited.diff?.text).to.include('+The river market opens at ten on Saturdays.');
  });

  it('counts a region grown past what it was learned to span (a paragraph added beside the banner)', () => {
    const profile = probeProfile(undefined, [snapshotOf(page(2)), snapshotOf(page(3))]);
    const grown = compareSnapshots(snapshotOf(page(0)), snapshotOf(page(1, { extra: 'New: a second market on Sundays.' })), { profile });
    expect(grown.status).to.equal('changed');
    expect(grown.diff?.text).to.include('+New: a second market on Sundays.');
  });

  it('learns from history only changes seen in a row within the window, and forgets what holds', () => {
    const observed: RegionObservation[] = [{ before: 'a.0', after: 'b.0', state: 'changed', lines: 1 }];
    let profile: NoiseProfile | undefined;
    for (let k = 0; k < 3; k++) profile = updateProfile(profile, observed, { elapsedMs: 5 * MINUTE });
    expect(profile?.regions[0]).to.include({ changes: 3, volatile: false, source: 'history' });
    profile = updateProfile(profile, observed, { elapsedMs: 5 * MINUTE });
    expect(profile.regions[0]).to.include({ changes: 4, volatile: true });

    // A daily check whose region moves each day teaches nothing: news, not noise.
    let daily: NoiseProfile | undefined;
    for (let k = 0; k < 10; k++) daily = updateProfile(daily, observed, { elapsedMs: 24 * 60 * MINUTE });
    expect(daily?.regions).to.deep.equal([]);

    // A streak broken by a hold starts again; a volatile region that holds long enough is forgotten.
    let broken = updateProfile(undefined, observed, { elapsedMs: MINUTE });
    broken = updateProfile(broken, [{ before: 'a.0', after: 'b.0', state: 'held' }], { elapsedMs: MINUTE });
    expect(broken.regions).to.deep.equal([]);
    const held: RegionObservation[] = [{ before: 'a.0', after: 'b.0', state: 'held' }];
    for (let k = 0; k < 4; k++) profile = updateProfile(profile, held, { elapsedMs: MINUTE });
    expect(profile.regions[0]).to.include({ volatile: true, holds: 4 });
    profile = updateProfile(profile, held, { elapsedMs: MINUTE });
    expect(profile.regions).to.deep.equal([]);
  });

  it('observes a known region as held when its anchors are there and nothing between them changed', () => {
    const profile = probeProfile(undefined, [snapshotOf(page(2)), snapshotOf(page(3))]);
    const region = profile.regions[0];
    const comparison = compareSnapshots(snapshotOf(page(1)), snapshotOf(page(1)), { profile });
    expect(comparison.observed).to.deep.equal([{ before: region?.before, after: region?.after, state: 'held' }]);
  });

  it('stays small and serialisable, and refuses what it cannot read', () => {
    let profile = emptyProfile();
    for (let k = 0; k < MAX_REGIONS * 2; k++) profile = updateProfile(profile, [{ before: `x${k}.0`, after: `y${k}.0`, state: 'changed', lines: 1 }], { elapsedMs: 0, source: 'probe' });
    expect(profile.regions).to.have.length(MAX_REGIONS);
    const stored: unknown = JSON.parse(JSON.stringify(profile));
    expect(isNoiseProfile(stored)).to.equal(true);
    expect(stored).to.deep.equal(profile);
    expect(JSON.stringify(profile).length).to.be.lessThan(12_000);
    expect(isNoiseProfile({ v: 2, comparisons: 0, regions: [] })).to.equal(false);
    expect(isNoiseProfile({ v: 1, comparisons: 0, regions: [{ before: 'a' }] })).to.equal(false);
    expect(isNoiseProfile(null)).to.equal(false);
  });

  it('leaves the profile it was given as it was', () => {
    const profile = probeProfile(undefined, [snapshotOf(page(2)), snapshotOf(page(3))]);
    const copy = structuredClone(profile);
    updateProfile(profile, [{ before: profile.regions[0]?.before ?? '', after: profile.regions[0]?.after ?? '', state: 'held' }], { elapsedMs: 0 });
    expect(profile).to.deep.equal(copy);
  });
});

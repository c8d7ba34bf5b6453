/**
 * A component's log file on a full disk: the launcher keeps going, drops and counts the lines, and says
 * how many once the file takes writes again. The disk is /dev/full (every write ENOSPC) behind a
 * symbolic link that is later pointed at a real file, as space coming back.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { LogFile } from '../../../scripts/stack/log-file';
import { eventually } from '../../helpers/stack';

describe('launcher log files on a full disk', function () {
  let dir: string;
  before(function () {
    if (!existsSync('/dev/full')) this.skip();
    dir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-logfile-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('drops and counts lines while writes fail with ENOSPC, and reports them once a write lands again', async () => {
    const file = path.join(dir, 'api.log');
    const real = path.join(dir, 'api.real.log');
    symlinkSync('/dev/full', file);
    const clock = { now: 0 };
    const reports: string[] = [];
    const log = new LogFile(file, { retryMs: 1_000, now: () => clock.now, report: (line) => reports.push(line) });
    // Every uncaught stream error would end this process (as it ended the launcher): none may escape.
    log.write(Buffer.from('one\ntwo\n'));
    await eventually(async () => reports.length === 1, 50, 20);
    expect(reports[0]).to.match(/cannot write .*api\.log \(ENOSPC\)/);
    for (let n = 0; n < 5; n++) log.write(Buffer.from(`dropped ${n}\n`));
    expect(log.droppedLines).to.equal(7);

    // Still full when the retry comes: the notice fails too, and dropping goes on.
    clock.now += 1_000;
    log.write(Buffer.from('eight\n'));
    await eventually(async () => log.droppedLines === 8, 50, 20);
    expect(reports).to.have.length(1);

    // Space again.
    unlinkSync(file);
    symlinkSync(real, file);
    log.write(Buffer.from('too early: still dropped\n'));
    clock.now += 1_000;
    log.write(Buffer.from('back\n'));
    await eventually(async () => reports.length === 2, 50, 20);
    expect(reports[1]).to.match(/written again; 9 line\(s\) were dropped/);
    log.write(Buffer.from('after\n'));
    await log.close();
    expect(readFileSync(real, 'utf8')).to.match(/^\[launcher\] 9 line\(s\) of output were dropped while .*api\.log could not be written \(ENOSPC\)\nback\nafter\n$/);
    expect(log.droppedLines).to.equal(0);
  });
});

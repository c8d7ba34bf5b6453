/**
 * Where the running launcher's FerretDB listens, recorded in the data folder (`run/ferretdb.json`) for
 * the tools that reach the stack's database from outside (`npm run admin`): the launcher may have
 * chosen the port (`FERRETDB_PORT=0`, or another launcher's data folder), and a tool that guessed the
 * configured port would write to whatever else listens there. Written when FerretDB is ready, removed
 * when the stack stops; a record whose launcher is gone is not trusted.
 */
import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

export interface DatabaseRecord {
  /** The launcher's process id. */
  pid: number;
  url: string;
}

const recordFile = (dataDir: string): string => path.join(dataDir, 'run', 'ferretdb.json');

export function writeDatabaseRecord(dataDir: string, url: string): void {
  mkdirSync(path.dirname(recordFile(dataDir)), { recursive: true });
  writeFileSync(recordFile(dataDir), `${JSON.stringify({ pid: process.pid, url } satisfies DatabaseRecord)}\n`);
}

export function removeDatabaseRecord(dataDir: string): void {
  rmSync(recordFile(dataDir), { force: true });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The running launcher's database, or why there is none to use. */
export function readDatabaseRecord(dataDir: string): { ok: true; url: string } | { ok: false; reason: string } {
  const file = recordFile(dataDir);
  let record: Partial<DatabaseRecord>;
  try {
    record = JSON.parse(readFileSync(file, 'utf8')) as Partial<DatabaseRecord>;
  } catch {
    return { ok: false, reason: `no running stack records its database in ${file}` };
  }
  if (typeof record.url !== 'string' || typeof record.pid !== 'number') return { ok: false, reason: `${file} is not a database record` };
  if (!alive(record.pid)) return { ok: false, reason: `the launcher that wrote ${file} (pid ${record.pid}) is gone` };
  return { ok: true, url: record.url };
}

/**
 * The browsers' processes in a CPU control group of their own, weighed below the service's processes,
 * so that when the CPU is short the API, the worker and the database are served before any render.
 * Chromium started as root sets its renderers' priorities itself and resets a nice value given to
 * them when a page changes state (demote.ts can only lower a renderer that stays busy, after it has
 * been busy for seconds); a control group is the kernel's, and no process in it can leave it.
 *
 * The group is `fetchplane-browsers`, shared by every process of the service on the machine:
 *   - cgroup v1 (a hierarchy with the `cpu` controller): a child of this process's own group, with
 *     `cpu.shares` = weight% of 1024, the share of one ordinary process;
 *   - cgroup v2: a sibling of this process's group (its child could not hold processes), with
 *     `cpu.weight` = weight% of 100, the default weight of the service's group.
 * A browser's processes are moved in right after it starts; the helpers it forks later inherit the
 * group. Where no group can be made (a read-only cgroup file system, as in most containers; no cpu
 * controller), browsers stay where they are and this is said once in the log.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../base/log';

export const CPU_GROUP_NAME = 'fetchplane-browsers';

/** Where a group can be made: the group's directory and the file its weight is written to. */
interface GroupPlace {
  dir: string;
  weightFile: 'cpu.shares' | 'cpu.weight';
  weightOf(percent: number): number;
}

/** The mount points of cgroup file systems, from /proc/self/mounts: v1 with their controllers. */
function cgroupMounts(): Array<{ dir: string; v2: boolean; controllers: string[] }> {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'cgroup' || fields[2] === 'cgroup2')
    .map((fields) => ({ dir: fields[1] ?? '', v2: fields[2] === 'cgroup2', controllers: (fields[3] ?? '').split(',') }));
}

/**
 * `own` under the mount; where that is not there (a file system mounted at this process's own group,
 * as a container sees it), the mount itself.
 */
const under = (mount: string, own: string): string => (existsSync(path.join(mount, own)) ? path.join(mount, own) : mount);

/** Where the browsers' group goes on this machine, or why there is none. */
export function cpuGroupPlace(): GroupPlace | string {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return 'no /proc/self/cgroup';
  }
  const mounts = cgroupMounts();
  // v1: the line naming the cpu controller, e.g. `4:cpu,cpuacct:/system.slice/x`.
  for (const line of lines) {
    const [, controllers = '', own = '/'] = line.split(':');
    if (!controllers.split(',').includes('cpu')) continue;
    const mount = mounts.find((candidate) => !candidate.v2 && candidate.controllers.includes('cpu'));
    if (!mount) return 'the cpu controller is not mounted';
    return { dir: path.join(under(mount.dir, own), CPU_GROUP_NAME), weightFile: 'cpu.shares', weightOf: (percent) => Math.max(2, Math.round((1024 * percent) / 100)) };
  }
  const unified = lines.find((line) => line.startsWith('0::'));
  const mount = mounts.find((candidate) => candidate.v2);
  if (!unified || !mount) return 'no cgroup hierarchy with the cpu controller';
  const own = unified.slice(3) || '/';
  const parent = own === '/' ? '/' : path.posix.dirname(own);
  return { dir: path.join(under(mount.dir, parent), CPU_GROUP_NAME), weightFile: 'cpu.weight', weightOf: (percent) => Math.max(1, Math.round(percent)) };
}

export class BrowserCpuGroup {
  private place: GroupPlace | undefined;
  private failed = false;

  constructor(
    private readonly options: {
      /** The browsers' weight against one of the service's processes (v1) or the service's group (v2), in percent. */
      weightPercent: number;
      log?: Logger;
    },
  ) {}

  /** The group's directory once made. */
  get dir(): string | undefined {
    return this.place?.dir;
  }

  /** Moves `pids` (a browser's processes) into the group, making it first; false where there is none. */
  join(pids: readonly number[]): boolean {
    const place = this.ready();
    if (!place) return false;
    for (const pid of pids) {
      try {
        writeFileSync(path.join(place.dir, 'cgroup.procs'), String(pid));
      } catch {
        // gone meanwhile
      }
    }
    return true;
  }

  private ready(): GroupPlace | undefined {
    if (this.place || this.failed) return this.place;
    const place = cpuGroupPlace();
    try {
      if (typeof place === 'string') throw new Error(place);
      if (!existsSync(place.dir)) mkdirSync(place.dir);
      writeFileSync(path.join(place.dir, place.weightFile), String(place.weightOf(this.options.weightPercent)));
      this.place = place;
      this.options.log?.info('browsers run in a CPU group of their own', { group: place.dir, [place.weightFile]: place.weightOf(this.options.weightPercent) });
    } catch (error) {
      this.failed = true;
      this.options.log?.info('browsers run in the service\'s CPU group: no group of their own could be made', { error: (error as Error).message });
    }
    return this.place;
  }
}

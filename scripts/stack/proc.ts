/** Process facts from /proc (Linux): children, CPU time, listening ports, for benchmarks and tests of the stack. */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** The pids of a process's direct children; empty when it is gone. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A process and all its descendants (children first found, then theirs); empty when it is gone. */
export function processTree(pid: number): number[] {
  const found = existsSync(`/proc/${pid}`) ? [pid] : [];
  for (let index = 0; index < found.length && index < 10_000; index++) found.push(...childPids(found[index] as number));
  return found;
}

/**
 * Memory of a process in bytes, from /proc/<pid>/smaps_rollup: the proportional set size (pages shared
 * with other processes counted in part, so that summed over processes each shared page counts once)
 * and its anonymous part (heaps, stacks: what the process itself allocated, whoever else runs the same
 * binaries). Zeros when the process is gone.
 */
export function memoryOf(pid: number): { pss: number; anon: number } {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    return { pss: field('Pss'), anon: field('Pss_Anon') };
  } catch {
    return { pss: 0, anon: 0 };
  }
}

/** What a process is: Chromium's main process (`browser`) or one of its helpers (its `--type`: `renderer`, `gpu-process`, `zygote`...), else its program's name (`node`). */
export function processKind(pid: number): { name: string; chromium: boolean } | undefined {
  try {
    // Chromium's helpers rewrite their title: their arguments may come back as one string.
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    const type = /--type=([a-z-]+)/.exec(command)?.[1];
    if (type) return { name: type, chromium: true };
    const program = command.split(' ')[0] ?? '?';
    return /chrom/i.test(program) ? { name: 'browser', chromium: true } : { name: path.basename(program), chromium: false };
  } catch {
    return undefined;
  }
}

/** Whether a process exists and is not a zombie waiting to be reaped. */
export function alive(pid: number): boolean {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return raw.slice(raw.lastIndexOf(')') + 2, raw.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Listening TCP sockets of this machine (IPv4 and IPv6): socket inode to port. */
function listeningSockets(): Map<string, number> {
  const sockets = new Map<string, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== '0A' || !fields[1] || !fields[9]) continue; // 0A: LISTEN
      sockets.set(fields[9], parseInt(fields[1].split(':').at(-1) ?? '0', 16));
    }
  }
  return sockets;
}

/** The TCP ports these processes listen on. */
export function listeningPorts(pids: number[]): number[] {
  const sockets = listeningSockets();
  const ports = new Set<number>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        const port = inode && sockets.get(inode);
        if (port) ports.add(port);
      } catch {
        // closed meanwhile
      }
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** Which of these TCP ports anything on this machine listens on. */
export function portsListenedOn(ports: number[]): number[] {
  const listening = new Set(listeningSockets().values());
  return ports.filter((port) => listening.has(port));
}

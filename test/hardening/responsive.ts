/**
 * Whether the API keeps answering while some hostile work is in flight: `/healthz` is asked every
 * `everyMs` until the work settles, each answer awaited at most `patienceMs` (generous: a healthy API
 * answers in milliseconds, a frozen event loop answers in seconds or never).
 */
export interface Probe {
  status: number | 'timeout' | 'error';
}

export async function probeWhile<T>(api: string, work: Promise<T>, options: { everyMs?: number; patienceMs?: number } = {}): Promise<{ result: T; probes: Probe[] }> {
  const everyMs = options.everyMs ?? 200;
  const patienceMs = options.patienceMs ?? 5_000;
  let settled = false;
  const done = work.finally(() => {
    settled = true;
  });
  const asked: Array<Promise<Probe>> = [];
  const ask = (): Promise<Probe> =>
    fetch(`${api}/healthz`, { signal: AbortSignal.timeout(patienceMs) }).then(
      async (response) => {
        await response.arrayBuffer();
        return { status: response.status };
      },
      (error: unknown) => ({ status: error instanceof DOMException && error.name === 'TimeoutError' ? 'timeout' : 'error' }),
    );
  while (!settled) {
    asked.push(ask());
    await Promise.race([done.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, everyMs))]);
  }
  const [result, probes] = await Promise.all([done, Promise.all(asked)]);
  return { result, probes };
}

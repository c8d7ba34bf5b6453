/**
 * Ports for servers that cannot be told to bind port 0 and report it (FerretDB, Temporal). A port the
 * kernel hands out for port 0 comes from its ephemeral range, the same range outgoing connections take
 * their local ports from: between closing the probe and the server binding it, any connection of any
 * process may take it. Ports outside that range are only ever taken by an explicit bind, so a port
 * found free there stays free unless another launcher picks the same one; the caller then retries
 * with another (addressInUse tells that case apart).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The kernel's ephemeral port range (Linux; the usual default elsewhere). */
export function ephemeralRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low: low as number, high: high as number };
  } catch {
    // not Linux
  }
  return { low: 32768, high: 60999 };
}

/** The span outside the ephemeral range we pick from: the larger of below and above it, past the well-known ports. */
function pickSpan(): { from: number; to: number } {
  const { low, high } = ephemeralRange();
  const below = { from: 10_000, to: low - 1 };
  const above = { from: high + 1, to: 65_535 };
  return below.to - below.from >= above.to - above.from ? below : above;
}

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port outside the ephemeral range that nothing listened on a moment ago. */
export async function pickPort(host = '127.0.0.1'): Promise<number> {
  const { from, to } = pickSpan();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (await bindable(port, host)) return port;
  }
  throw new Error(`no free port found between ${from} and ${to}`);
}

/** Whether a server's output says it could not bind its port. */
export function addressInUse(output: string): boolean {
  return /EADDRINUSE|address already in use/i.test(output);
}

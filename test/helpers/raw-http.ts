/** HTTP spoken by hand, for requests fetch() will not send (no Host, CONNECT, broken chunks). */
import net from 'node:net';

/** Sends raw bytes to the API and reads until the server closes the connection. */
export function rawExchange(url: string, request: string): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let data = '';
    socket.setTimeout(20_000, () => socket.destroy(new Error('no answer in 20 s')));
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve(data));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
}

export function parseRaw(raw: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n') || '{}') as Record<string, unknown> };
}

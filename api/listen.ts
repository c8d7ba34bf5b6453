/**
 * Binding the API's port. PORT=0 lets the kernel pick a port that nothing can take before the API
 * holds it (the test stack runs the API so, and learns the port from the ready message). The port is
 * bound before anything is built from the configuration, so that the URLs derived from PORT (PUBLIC_URL,
 * DOCS_URL when unset) name the port bound; the bound socket is then handed to the API's server.
 * In a cluster worker (API_PROCESSES > 1) the primary binds for all of them: PORT=0 gives them one
 * shared port, reported as it is, but the derived URLs cannot know it: set PUBLIC_URL there.
 */
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { processConfigOnPort, type Config } from '../base/config';

export interface ApiPort {
  /** The configuration with PORT as bound. */
  config: Config;
  /** Makes `server` listen on the port; resolves with the port. */
  listen(server: Server): Promise<number>;
}

function listenOn(server: Server, target: number | net.Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    };
    if (typeof target === 'number') server.listen(target, host, listening);
    else server.listen(target, listening);
  });
}

export async function bindApiPort(config: Config): Promise<ApiPort> {
  if (config.port !== 0 || cluster.isWorker) return { config, listen: (server) => listenOn(server, config.port, config.host) };
  const reserved = net.createServer();
  await new Promise<void>((resolve, reject) => {
    reserved.once('error', reject);
    reserved.listen(0, config.host, resolve);
  });
  const port = (reserved.address() as AddressInfo).port;
  return { config: processConfigOnPort(port), listen: (server) => listenOn(server, reserved, config.host) };
}

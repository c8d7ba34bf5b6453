import { expect } from 'chai';
import net from 'node:net';
import { addressInUse, ephemeralRange, pickPort } from '../../../scripts/stack/ports';

describe('ports for servers that cannot report theirs', () => {
  it('picks free ports outside the kernel\'s ephemeral range, which outgoing connections never take', async () => {
    const { low, high } = ephemeralRange();
    expect(low).to.be.lessThan(high);
    const ports = await Promise.all(Array.from({ length: 20 }, () => pickPort()));
    for (const port of ports) {
      expect(port < low || port > high, `${port} outside ${low}-${high}`).to.equal(true);
      expect(port).to.be.greaterThanOrEqual(1024);
    }
    // The port is free: a server binds it.
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it('tells a port taken before the server bound it from other start failures', () => {
    expect(addressInUse('error: listen tcp 127.0.0.1:27017: bind: address already in use')).to.equal(true);
    expect(addressInUse('Error: listen EADDRINUSE: address already in use 127.0.0.1:8080')).to.equal(true);
    expect(addressInUse('open /data/ferretdb: permission denied')).to.equal(false);
  });
});

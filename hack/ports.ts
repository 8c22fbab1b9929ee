/** Ports for the processes the control plane, the demo and the tests start. */
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick; the caller binds it next). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

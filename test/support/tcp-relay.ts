import net from 'node:net';

export interface TcpRelay {
  /** `127.0.0.1:<port>`: give it to a client instead of the target's address. */
  address: string;
  /** The target goes away, as a server that stops does: every connection through the relay closes and new ones are refused. */
  cut(): void;
  /** The target is back. */
  restore(): void;
  close(): Promise<void>;
}

/** A TCP relay to `target` (`host:port`) that a test can cut, to take a server away from one client only. */
export async function startTcpRelay(target: string): Promise<TcpRelay> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const open = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(port, host);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('error', end).on('close', end);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut() {
      cut = true;
      for (const s of open) s.destroy();
    },
    restore() {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

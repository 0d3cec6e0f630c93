import net from 'node:net';

const loopbackNames = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
const isLoopback = (host: string) => loopbackNames.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * Refuses every TCP connection this process would open to anything but the loopback: the fuzzer
 * registers webhook endpoints at whatever URLs it makes up (public addresses included), and the
 * worker in this process would otherwise deliver events to them. A refused connection fails like
 * an unreachable receiver, before any name is looked up. Unix sockets pass. Returns the undo.
 */
export function allowLoopbackConnectionsOnly(): () => void {
  const prototype = net.Socket.prototype as unknown as {
    connect: (this: net.Socket, ...args: unknown[]) => net.Socket;
  };
  const original = prototype.connect;
  prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // Node calls connect(options, cb), connect(port, host, cb), connect(path, cb) or, internally,
    // connect([options, cb]).
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    let host: string | undefined;
    if (typeof first === 'object' && first !== null) {
      const options = first as { host?: string | null; path?: string | null };
      // TLS and HTTP agents pass `path: null` beside the host; only a string path is a socket.
      host = typeof options.path === 'string' ? undefined : (options.host ?? 'localhost');
    } else if (typeof first === 'number' || /^\d+$/.test(String(first))) {
      host = typeof args[1] === 'string' ? args[1] : 'localhost';
    }
    if (host !== undefined && !isLoopback(host)) {
      const refused = Object.assign(
        new Error(`connect ECONNREFUSED ${host} (the fuzz run connects to the loopback only)`),
        { code: 'ECONNREFUSED' },
      );
      process.nextTick(() => this.destroy(refused));
      return this;
    }
    return original.apply(this, args);
  };
  return () => {
    prototype.connect = original;
  };
}

// The runtime half of @trellis/plugin-kit (types in index.d.ts). The engine knows an error it
// must not retry by its `nonRetryable: true`, so any error object carrying it works as well.

import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export class NonRetryableError extends Error {
  /**
   * @param {string} message
   * @param {ErrorOptions} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = 'NonRetryableError';
    /** @type {true} */
    this.nonRetryable = true;
  }
}

/**
 * @param {string} message
 * @param {ErrorOptions} [options]
 */
export function nonRetryable(message, options) {
  return new NonRetryableError(message, options);
}

/**
 * The host's network fence (`context.host.network`) as one check: `allowedAddresses(host, port)`
 * resolves `host` once and returns the addresses the fence lets a plugin connect to, refusing
 * (an error marked `fenced`, with the reason) when there is none. Connect only to the addresses
 * it returned: a second lookup could answer differently (DNS rebinding).
 * @param {import('./index.js').PluginNetworkFence | undefined} fence
 */
export function networkFence(fence) {
  if (!fence) throw nonRetryable('this Trellis gives no network fence (context.host.network)');
  const ranges = {
    deny: fence.denyCidrs.map((cidr) => ipaddr.parseCIDR(cidr)),
    allow: fence.allowCidrs.map((cidr) => ipaddr.parseCIDR(cidr)),
    defaults: fence.defaultDenyCidrs.map((cidr) => ipaddr.parseCIDR(cidr)),
  };
  /** @type {Promise<{ address: ipaddr.IPv4 | ipaddr.IPv6, port: number }[]> | undefined} */
  let endpoints;
  /**
   * Why `ip`:`port` is refused, or undefined when it is allowed.
   * @param {string} ip
   * @param {number} port
   */
  const refusal = async (ip, port) => {
    const address = ipaddr.process(ip);
    if (within(address, ranges.deny)) return `${ip} is in Plugins.Network.DenyCidrs`;
    endpoints ??= resolveEndpoints(fence.trellisEndpoints);
    if ((await endpoints).some((own) => own.port === port && sameAddress(own.address, address))) {
      return `${ip}:${port} is one of Trellis's own services`;
    }
    if (within(address, ranges.allow)) return undefined;
    if (within(address, ranges.defaults)) {
      return `${ip} is a ${address.range()} address, reachable only if Plugins.Network.AllowCidrs allows it`;
    }
    return undefined;
  };
  return {
    /**
     * @param {string} host a name or an address (IPv6 in brackets or not)
     * @param {number} port
     * @returns {Promise<{ address: string, family: number }[]>}
     */
    async allowedAddresses(host, port) {
      const bare = host.replace(/^\[|\]$/g, '');
      const resolved = isIP(bare)
        ? [{ address: bare, family: isIP(bare) }]
        : await lookup(bare, { all: true, verbatim: true });
      /** @type {{ address: string, family: number }[]} */
      const allowed = [];
      /** @type {string | undefined} */
      let reason;
      for (const entry of resolved) {
        const why = await refusal(entry.address, port);
        if (why === undefined) allowed.push(entry);
        else reason ??= why;
      }
      if (allowed.length === 0) {
        const named = isIP(bare) ? '' : `${bare} resolves to `;
        throw Object.assign(new Error(`${named}${reason ?? 'no address'}`), { fenced: true });
      }
      return allowed;
    },
    /**
     * Whether local sockets (a Unix socket path) may be used: they reach this machine as loopback
     * does, so only when `Plugins.Network.AllowCidrs` allows loopback.
     */
    allowsLocalSockets() {
      const loopback = ipaddr.parse('127.0.0.1');
      return within(loopback, ranges.allow) && !within(loopback, ranges.deny);
    },
  };
}

/**
 * @param {readonly { host: string, port: number }[]} endpoints
 */
async function resolveEndpoints(endpoints) {
  const resolved = await Promise.all(
    endpoints.map(async ({ host, port }) => {
      const addresses = isIP(host)
        ? [host]
        : (await lookup(host, { all: true }).catch(() => [])).map((entry) => entry.address);
      return addresses.map((address) => ({ address: ipaddr.process(address), port }));
    }),
  );
  return resolved.flat();
}

/**
 * @param {ipaddr.IPv4 | ipaddr.IPv6} address
 * @param {[ipaddr.IPv4 | ipaddr.IPv6, number][]} ranges
 */
function within(address, ranges) {
  return ranges.some(
    ([range, bits]) => range.kind() === address.kind() && address.match(range, bits),
  );
}

/**
 * @param {ipaddr.IPv4 | ipaddr.IPv6} a
 * @param {ipaddr.IPv4 | ipaddr.IPv6} b
 */
function sameAddress(a, b) {
  return a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();
}

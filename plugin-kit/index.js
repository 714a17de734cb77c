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
    // An IPv6 form carrying an IPv4 address may reach that address: each must pass on its own.
    const checked = [address, ...carriedIPv4(address)];
    const named = (/** @type {ipaddr.IPv4 | ipaddr.IPv6} */ each) =>
      each === address ? ip : `${ip} carries ${each.toString()}, which`;
    const denied = checked.find((each) => within(each, ranges.deny));
    if (denied) return `${named(denied)} is in Plugins.Network.DenyCidrs`;
    endpoints ??= resolveEndpoints(fence.trellisEndpoints);
    const own = await endpoints;
    if (checked.some((each) => own.some((o) => o.port === port && within(each, [o.range])))) {
      return `${ip}:${port} is one of Trellis's own services`;
    }
    // The carried address first: its range says more than the IPv6 form's.
    const closed = [...checked]
      .reverse()
      .find((each) => !within(each, ranges.allow) && within(each, ranges.defaults));
    if (closed) {
      const what =
        closed === address && checked.length > 1
          ? `an IPv6 form carrying ${checked.slice(1).join(' and ')}`
          : `a ${closed.range()} address`;
      return `${named(closed)} is ${what}, reachable only if Plugins.Network.AllowCidrs allows it`;
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
 * Each endpoint as the address range it listens on: a range as given, an address alone, a name
 * as each address it resolves to.
 * @param {readonly { host: string, port: number }[]} endpoints
 * @returns {Promise<{ range: [ipaddr.IPv4 | ipaddr.IPv6, number], port: number }[]>}
 */
async function resolveEndpoints(endpoints) {
  const resolved = await Promise.all(
    endpoints.map(async ({ host, port }) => {
      if (ipaddr.isValidCIDR(host)) return [{ range: ipaddr.parseCIDR(host), port }];
      const addresses = isIP(host)
        ? [host]
        : (await lookup(host, { all: true }).catch(() => [])).map((entry) => entry.address);
      return addresses.map((address) => {
        const parsed = ipaddr.process(address);
        return {
          range: /** @type {[ipaddr.IPv4 | ipaddr.IPv6, number]} */ ([
            parsed,
            parsed.kind() === 'ipv4' ? 32 : 128,
          ]),
          port,
        };
      });
    }),
  );
  return resolved.flat();
}

/**
 * IPv6 forms that carry an IPv4 address (RFC 4291, 6052, 8215, 3056, 4380), with the bytes that
 * hold it; IPv4-mapped addresses are already IPv4 once `ipaddr.process` has read them.
 * @type {{ range: [ipaddr.IPv6, number], offsets: number[][], xor?: number }[]}
 */
const ipv4Carriers = [
  // IPv4-compatible, but not :: and ::1, which are their own addresses.
  { range: [ipaddr.IPv6.parse('::'), 96], offsets: [[12, 13, 14, 15]] },
  // NAT64, well-known prefix.
  { range: [ipaddr.IPv6.parse('64:ff9b::'), 96], offsets: [[12, 13, 14, 15]] },
  // NAT64, local-use prefixes: the operator picks /48, /56, /64 or /96, so each place counts.
  {
    range: [ipaddr.IPv6.parse('64:ff9b:1::'), 48],
    offsets: [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ],
  },
  // 6to4.
  { range: [ipaddr.IPv6.parse('2002::'), 16], offsets: [[2, 3, 4, 5]] },
  // Teredo: the server, and the client's address inverted.
  { range: [ipaddr.IPv6.parse('2001::'), 32], offsets: [[4, 5, 6, 7]] },
  { range: [ipaddr.IPv6.parse('2001::'), 32], offsets: [[12, 13, 14, 15]], xor: 0xff },
];

/**
 * The IPv4 addresses an IPv6 address carries (none for most).
 * @param {ipaddr.IPv4 | ipaddr.IPv6} address
 * @returns {ipaddr.IPv4[]}
 */
function carriedIPv4(address) {
  if (address.kind() !== 'ipv6') return [];
  const ipv6 = /** @type {ipaddr.IPv6} */ (address);
  const bytes = ipv6.toByteArray();
  if (ipv6.match(ipaddr.IPv6.parse('::'), 127)) return [];
  return ipv4Carriers
    .filter(({ range }) => ipv6.match(range))
    .flatMap(({ offsets, xor = 0 }) =>
      offsets.map((places) => new ipaddr.IPv4(places.map((place) => (bytes[place] ?? 0) ^ xor))),
    );
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

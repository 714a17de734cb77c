import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import type { TrellisConfig } from '#platform/config/types.js';
import type { PluginHostSettings, PluginNetworkFence } from './contract.js';

/**
 * What plugins may reach, as host settings: the network fence (`Plugins.Network.*`) and Trellis's
 * own database (`Plugins.Database.AllowTrellisDatabase`). Plugins enforce them; a task cannot
 * change them.
 */

/**
 * Refused unless `Plugins.Network.AllowCidrs` opens them: addresses that reach this machine, its
 * link or the cloud's metadata services rather than a service somewhere on the network.
 */
export const defaultDeniedCidrs: readonly string[] = Object.freeze([
  '0.0.0.0/8', // "this network": 0.0.0.0 connects to this machine
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, with 169.254.169.254 (AWS, GCP, Azure, Oracle metadata)
  '100.100.100.200/32', // Alibaba Cloud metadata
  '168.63.129.16/32', // Azure host services (WireServer)
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255 broadcast
  '::/128', // unspecified
  '::1/128', // loopback
  // IPv6 forms of IPv4 addresses (the fence also checks the IPv4 address each carries):
  '::/96', // IPv4-compatible
  '64:ff9b::/96', // NAT64
  '64:ff9b:1::/48', // NAT64, local use
  '2002::/16', // 6to4
  '2001::/32', // Teredo
  'fe80::/10', // link-local
  'fd00:ec2::254/128', // AWS metadata over IPv6
  'ff00::/8', // multicast
]);

/** Facts only known once Trellis runs: where it listens. */
export interface RuntimeReach {
  /** Trellis's own listening sockets in this process (API, embedded Temporal). */
  endpoints?: readonly { host: string; port: number }[];
  /**
   * Ports its child processes listen on (`descendantListeningPorts`): refused on every address
   * of this machine, whichever the socket is bound to.
   */
  ports?: readonly number[];
}

/** The reach part of the host settings for a configuration (and, when known, the running process). */
export function reachSettings(
  config: Pick<TrellisConfig, 'Plugins' | 'Server' | 'Temporal' | 'Database'>,
  runtime: RuntimeReach = {},
): Pick<PluginHostSettings, 'network' | 'trellisDatabase'> {
  const endpoints = [
    ...(runtime.endpoints ?? []),
    // Another process's API (a worker-only process) listens on the configured port.
    ...(config.Server.Port !== 0 ? [{ host: config.Server.Host, port: config.Server.Port }] : []),
    ...(config.Temporal.Address ? [hostPort(config.Temporal.Address)] : []),
    ...(runtime.ports ?? []).map((port) => ({ host: '0.0.0.0', port })),
  ].filter((endpoint) => endpoint !== undefined);
  const network: PluginNetworkFence = {
    denyCidrs: config.Plugins.Network.DenyCidrs.map(asCidr),
    trellisEndpoints: uniqueEndpoints(endpoints.flatMap(reachingAddresses)),
    allowCidrs: config.Plugins.Network.AllowCidrs.map(asCidr),
    defaultDenyCidrs: defaultDeniedCidrs,
  };
  return deepFreeze({
    network,
    trellisDatabase: config.Plugins.Database.AllowTrellisDatabase
      ? null
      : // The embedded database has no address (see `inProcessConnection`): nothing to refuse.
        config.Database.Url
        ? externalDatabase(config.Database.Url)
        : null,
  });
}

/** A single address as the range holding only it. */
function asCidr(value: string): string {
  if (value.includes('/')) return value;
  return `${value}/${ipaddr.parse(value).kind() === 'ipv4' ? 32 : 128}`;
}

function hostPort(address: string): { host: string; port: number } | undefined {
  const match = /^\[?([^\]]*)\]?:(\d+)$/.exec(address);
  return match ? { host: match[1]!, port: Number(match[2]) } : undefined;
}

function externalDatabase(url: string) {
  try {
    const parsed = new URL(url);
    return {
      host: decodeURIComponent(parsed.hostname.replace(/^\[|\]$/g, '')) || 'localhost',
      port: Number(parsed.port || 5432),
      database: decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username),
    };
  } catch {
    return null;
  }
}

/**
 * Where an endpoint can be reached from this machine. One on a wildcard or loopback address is
 * reached through every address of this machine: a wildcard socket through all of them, and a
 * loopback one through `0.0.0.0`, `::` and the IPv4 forms of the fence's own checks as well;
 * refusing them all costs nothing, as no other service of this machine shares its port.
 */
function reachingAddresses(endpoint: { host: string; port: number }) {
  const local =
    endpoint.host === 'localhost' ||
    (ipaddr.isValid(endpoint.host) &&
      ['unspecified', 'loopback'].includes(ipaddr.process(endpoint.host).range()));
  if (!local) return [endpoint];
  return machineRanges().map((host) => ({ host, port: endpoint.port }));
}

/** Every address range that reaches this machine itself: unspecified, loopback, its interfaces. */
function machineRanges(): string[] {
  const interfaces = Object.values(networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .map((address) => asCidr(address.address.replace(/%.*$/, '')));
  return ['0.0.0.0/8', '127.0.0.0/8', '::/128', '::1/128', ...interfaces];
}

function uniqueEndpoints(endpoints: { host: string; port: number }[]) {
  const seen = new Set<string>();
  return endpoints.filter((endpoint) => {
    const key = `${endpoint.host}|${endpoint.port}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { reachSettings } from './reach.js';

describe('reachSettings', () => {
  it("lists Trellis's own sockets, on every address of this machine for a local host", () => {
    const config = buildConfig({
      Server: { Host: '0.0.0.0', Port: 7000 },
      Temporal: { Address: 'temporal.internal:7233' },
      Plugins: { Network: { AllowCidrs: ['127.0.0.0/8', '10.1.2.3'], DenyCidrs: ['fd00::1'] } },
    });
    const { network } = reachSettings(config, {
      endpoints: [{ host: 'localhost', port: 8233 }],
      ports: [9000],
    });
    expect(network.allowCidrs).toEqual(['127.0.0.0/8', '10.1.2.3/32']);
    expect(network.denyCidrs).toEqual(['fd00::1/128']);
    expect(network.defaultDenyCidrs).toEqual(expect.arrayContaining(['169.254.0.0/16']));
    const interfaces = Object.values(networkInterfaces())
      .flatMap((addresses) => addresses ?? [])
      .map(
        ({ address, family }) => `${address.replace(/%.*$/, '')}/${family === 'IPv4' ? 32 : 128}`,
      );
    const machine = ['0.0.0.0/8', '127.0.0.0/8', '::/128', '::1/128', ...interfaces];
    expect(network.trellisEndpoints).toEqual(
      expect.arrayContaining([
        ...[8233, 7000, 9000].flatMap((port) => machine.map((host) => ({ host, port }))),
        { host: 'temporal.internal', port: 7233 },
      ]),
    );
    expect(Object.isFrozen(network.trellisEndpoints[0])).toBe(true);
  });

  it("names Trellis's own database unless Plugins.Database.AllowTrellisDatabase", () => {
    const external = buildConfig({ Database: { Url: 'postgres://u:p@db.internal:6543/trellis' } });
    expect(reachSettings(external).trellisDatabase).toEqual({
      host: 'db.internal',
      port: 6543,
      database: 'trellis',
    });
    // The embedded database has no address to name: nothing outside the process reaches it.
    expect(reachSettings(buildConfig({})).trellisDatabase).toBe(null);
    const allowed = buildConfig({
      Database: { Url: 'postgres://u:p@db.internal:6543/trellis' },
      Plugins: { Database: { AllowTrellisDatabase: true } },
    });
    expect(reachSettings(allowed).trellisDatabase).toBe(null);
  });
});

import { describe, expect, it } from 'vitest';
import { defaultDeniedCidrs } from '../core/src/plugin-host/reach.js';
import { NonRetryableError, networkFence, nonRetryable, type PluginNetworkFence } from './index.js';

describe('NonRetryableError', () => {
  it('carries the nonRetryable flag the engine reads, with its message and cause', () => {
    const cause = new Error('underneath');
    const error = nonRetryable('input is not valid Base64', { cause });
    expect(error).toBeInstanceOf(NonRetryableError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'NonRetryableError',
      message: 'input is not valid Base64',
      nonRetryable: true,
      cause,
    });
  });
});

describe('networkFence: IPv6 forms of IPv4 addresses', () => {
  const fence = (overrides: Partial<PluginNetworkFence> = {}) =>
    networkFence({
      denyCidrs: [],
      trellisEndpoints: [],
      allowCidrs: [],
      defaultDenyCidrs: defaultDeniedCidrs,
      ...overrides,
    });
  // Each carries 127.0.0.1.
  const loopbackForms = {
    'IPv4-mapped': '::ffff:127.0.0.1',
    'IPv4-compatible': '::7f00:1',
    NAT64: '64:ff9b::127.0.0.1',
    'NAT64 local use (/48)': '64:ff9b:1:7f00:0:100::',
    '6to4': '2002:7f00:1::1',
    'Teredo client': '2001:0:4136:e378:8000:63bf:80ff:fffe',
  };
  const allIPv6 = ['::/0'];

  for (const [form, address] of Object.entries(loopbackForms)) {
    it(`refuses the ${form} form of loopback by default, and where all of IPv6 is allowed`, async () => {
      for (const allowCidrs of [[], allIPv6]) {
        await expect(fence({ allowCidrs }).allowedAddresses(`[${address}]`, 80)).rejects.toThrow(
          /^\S+ (is|carries) .*, reachable only if Plugins\.Network\.AllowCidrs allows it$/,
        );
      }
    });
  }

  it('applies DenyCidrs and own endpoints to the carried address', async () => {
    await expect(
      fence({ allowCidrs: allIPv6, denyCidrs: ['10.0.0.0/8'] }).allowedAddresses(
        '64:ff9b::10.1.2.3',
        80,
      ),
    ).rejects.toThrow('64:ff9b::10.1.2.3 carries 10.1.2.3, which is in Plugins.Network.DenyCidrs');
    await expect(
      fence({
        allowCidrs: [...allIPv6, '127.0.0.0/8'],
        trellisEndpoints: [{ host: '127.0.0.1', port: 7233 }],
      }).allowedAddresses('::7f00:1', 7233),
    ).rejects.toThrow("::7f00:1:7233 is one of Trellis's own services");
  });

  it('refuses the forms themselves unless allowed, and then lets a public address through', async () => {
    await expect(fence().allowedAddresses('64:ff9b::8.8.8.8', 443)).rejects.toThrow(
      '64:ff9b::8.8.8.8 is an IPv6 form carrying 8.8.8.8, reachable only if Plugins.Network.AllowCidrs allows it',
    );
    expect(
      await fence({ allowCidrs: ['64:ff9b::/96'] }).allowedAddresses('64:ff9b::8.8.8.8', 443),
    ).toEqual([{ address: '64:ff9b::8.8.8.8', family: 6 }]);
    expect(await fence().allowedAddresses('2a00:1450::1', 443)).toEqual([
      { address: '2a00:1450::1', family: 6 },
    ]);
  });
});

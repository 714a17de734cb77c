import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig, ConfigError, loadConfig, redactConfig } from './load.js';

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'trellis-config-'));
}

function configError(build: () => unknown): ConfigError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('buildConfig', () => {
  it('fills every default', () => {
    const config = buildConfig({}, { cwd: '/srv/trellis' });
    expect(config).toEqual({
      Server: {
        Port: 6262,
        Host: '127.0.0.1',
        BodyLimitBytes: 1_048_576,
        MaxBodyDepth: 64,
        Cors: { AllowedOrigins: [] },
        Events: {
          HeartbeatMilliseconds: 15_000,
          PollIntervalMilliseconds: 5_000,
          MaxStreamsPerUser: 100,
          MaxStreams: 1_000,
        },
        TrustedProxies: [],
      },
      DataDirectory: '/srv/trellis/.trellis',
      HealthCheck: { Enabled: false },
      Mcp: { Enabled: false },
      Database: { PoolSize: 10 },
      Temporal: {
        Namespace: 'default',
        TaskQueue: 'trellis',
        Port: 7233,
        UiPort: 8233,
        Tls: {},
      },
      Security: {
        Basic: { Enabled: true, Users: [] },
        Bearer: { Enabled: false, RolesClaim: 'roles', ClockToleranceSeconds: 0 },
        Oidc: {
          Enabled: false,
          Scopes: 'openid profile email groups',
          DisplayName: 'single sign-on',
          GroupsClaim: 'groups',
        },
        PreviousEncryptionKeys: [],
        RateLimits: {
          Enabled: true,
          FailedLoginsPerUser: 10,
          FailedLoginsPerAddress: 100,
          WindowSeconds: 300,
          RequestsPerUserPerMinute: 60_000,
        },
      },
      Projects: {
        Limits: { RunningExecutions: 0, StartsPerMinute: 0, RequestsPerMinute: 0 },
        Namespaces: {},
      },
      Plugins: {
        InstallBuiltIns: true,
        AllowProcessExecution: false,
        StorageRoot: '/srv/trellis/.trellis/storage',
        CacheDirectory: '/srv/trellis/.trellis/plugin-cache',
        MaxOutputBytes: 2 * 1024 * 1024,
        Network: { AllowCidrs: [], DenyCidrs: [] },
        Database: { AllowTrellisDatabase: false, MaxStatementTimeoutMilliseconds: 300_000 },
        MaxPackageBytes: 16 * 1024 * 1024,
        MaxUnpackedPackageBytes: 64 * 1024 * 1024,
        Sandbox: { MemoryMb: 256, TimeoutMilliseconds: 300_000, MaxProcesses: 8 },
      },
      Definitions: {
        MaxBytes: 1_048_576,
        MaxDepth: 64,
        MaxTasks: 5_000,
        MaxDependencies: 20_000,
        MaxNameLength: 200,
        MaxStringLength: 65_536,
        MaxSubworkflowDepth: 10,
      },
      ExecutionLogs: { MaxEntryBytes: 65_536, MaxPageBytes: 4 * 1024 * 1024 },
      Audit: { RetentionDays: 365 },
      Logging: { Level: 'info', Format: 'auto' },
      Startup: { WaitSeconds: 60 },
      Metrics: { Enabled: false, Host: '127.0.0.1', WorkerPort: 9464 },
      Telemetry: { ServiceName: 'trellis', SampleRatio: 1 },
      Notifications: {
        Webhooks: [],
        LinkTtlMinutes: 1440,
        MaxAttempts: 10,
        TimeoutMilliseconds: 10_000,
      },
    });
  });

  it('keeps given values and resolves paths against cwd', () => {
    const config = buildConfig(
      {
        Server: { Port: 7000 },
        DataDirectory: 'data',
        Plugins: { StorageRoot: 'files' },
        Database: { Url: 'postgres://u:p@db:5432/trellis' },
      },
      { cwd: '/work' },
    );
    expect(config.Server).toEqual({
      Port: 7000,
      Host: '127.0.0.1',
      BodyLimitBytes: 1_048_576,
      MaxBodyDepth: 64,
      Cors: { AllowedOrigins: [] },
      Events: {
        HeartbeatMilliseconds: 15_000,
        PollIntervalMilliseconds: 5_000,
        MaxStreamsPerUser: 100,
        MaxStreams: 1_000,
      },
      TrustedProxies: [],
    });
    expect(config.DataDirectory).toBe('/work/data');
    expect(config.Plugins.StorageRoot).toBe('/work/files');
    expect(config.Database.Url).toBe('postgres://u:p@db:5432/trellis');
  });

  it('derives the storage root and the plugin cache from an absolute data directory', () => {
    const { Plugins } = buildConfig({ DataDirectory: '/var/lib/trellis' });
    expect(Plugins.StorageRoot).toBe('/var/lib/trellis/storage');
    expect(Plugins.CacheDirectory).toBe('/var/lib/trellis/plugin-cache');
    expect(
      buildConfig({ DataDirectory: '/var/lib/trellis', Plugins: { CacheDirectory: '/cache' } })
        .Plugins.CacheDirectory,
    ).toBe('/cache');
  });

  it('returns a deeply frozen object and does not touch its input', () => {
    const input = {
      Security: { Basic: { Users: [{ Name: 'a', Password: 'p', Roles: ['admin' as const] }] } },
    };
    const config = buildConfig(input);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.Security.Basic.Users[0]!.Roles)).toBe(true);
    expect(() => {
      (config.Server as { Port: number }).Port = 1;
    }).toThrow(TypeError);
    expect(input).toEqual({
      Security: { Basic: { Users: [{ Name: 'a', Password: 'p', Roles: ['admin'] }] } },
    });
  });

  it('accepts its own output again unchanged (for runtime adjustments)', () => {
    const config = buildConfig(
      { DataDirectory: 'data', Security: { Bearer: { Enabled: true, Secret: 's' } } },
      { cwd: '/a' },
    );
    expect(buildConfig(structuredClone(config), { cwd: '/elsewhere' })).toEqual(config);
  });

  it('names the key of a wrongly typed value', () => {
    const error = configError(() => buildConfig({ Server: { Port: 'x' as unknown as number } }));
    expect(error.message).toBe('Server.Port: must be integer');
  });

  it('takes an http(s) Temporal.UiUrl and refuses anything else', () => {
    const url = 'https://temporal.example.com/ui';
    expect(buildConfig({ Temporal: { UiUrl: url } }).Temporal.UiUrl).toBe(url);
    expect(buildConfig({}).Temporal.UiUrl).toBeUndefined();
    for (const bad of ['temporal.example.com', 'javascript:alert(1)', 'http://a b']) {
      expect(configError(() => buildConfig({ Temporal: { UiUrl: bad } })).message).toMatch(
        /^Temporal\.UiUrl: must be an http\(s\) URL/,
      );
    }
  });

  it('takes notification webhooks and names a bad one', () => {
    const webhook = {
      Url: 'https://hooks.example.com/trellis',
      Events: ['ApprovalRequested' as const],
      Secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    };
    expect(buildConfig({ Notifications: { Webhooks: [webhook] } }).Notifications.Webhooks).toEqual([
      webhook,
    ]);
    expect(
      configError(() =>
        buildConfig({ Notifications: { Webhooks: [{ ...webhook, Secret: 'plain' }] } }),
      ).message,
    ).toMatch(/^Notifications\.Webhooks\[0\]\.Secret: must be a Standard Webhooks secret/);
    expect(
      configError(() =>
        buildConfig({
          Notifications: {
            Webhooks: [{ ...webhook, Events: ['Whenever' as 'ApprovalRequested'] }],
          },
        }),
      ).message,
    ).toMatch(/^Notifications\.Webhooks\[0\]\.Events\[0\]/);
  });

  it('rejects ports out of range', () => {
    expect(configError(() => buildConfig({ Temporal: { UiPort: 70000 } })).message).toBe(
      'Temporal.UiPort: must be <= 65535',
    );
  });

  it('rejects unknown keys with their path', () => {
    const error = configError(() => buildConfig({ Server: { Prot: 1 } } as never));
    expect(error.message).toBe('Server.Prot: unknown key');
  });

  it('reports every problem at once', () => {
    const error = configError(() =>
      buildConfig({ Server: { Port: -1 }, Logging: { Level: 'loud' as never } }),
    );
    expect(error.problems).toEqual([
      'Server.Port: must be >= 0',
      'Logging.Level: must be one of trace, debug, info, warn, error, silent',
    ]);
  });

  it('checks users: roles, required fields, duplicates, malformed hashes', () => {
    const error = configError(() =>
      buildConfig({
        Security: {
          Basic: {
            Users: [
              { Name: 'ann', Password: 'x', Roles: ['root' as never] },
              { Name: 'bob', Roles: ['admin'] },
            ],
          },
        },
      }),
    );
    expect(error.problems).toEqual([
      'Security.Basic.Users[0].Roles[0]: must be one of admin, config, plugins, workflow',
      'Security.Basic.Users[1].Password: is required',
    ]);

    const semantic = configError(() =>
      buildConfig({
        Security: {
          Basic: {
            Users: [
              { Name: 'ann', Password: 'x', Roles: ['admin'] },
              { Name: 'ann', Password: 'scrypt$broken', Roles: ['config'] },
            ],
          },
        },
      }),
    );
    expect(semantic.problems).toEqual([
      'Security.Basic.Users[1].Name: duplicate user "ann"',
      'Security.Basic.Users[1].Password: malformed scrypt hash (use npm run hash-password)',
    ]);
  });

  it('requires a key source when Bearer is enabled', () => {
    expect(
      configError(() => buildConfig({ Security: { Bearer: { Enabled: true } } })).message,
    ).toBe('Security.Bearer: Enabled requires Secret or JwksUri');
    expect(
      buildConfig({ Security: { Bearer: { Enabled: true, Secret: 's' } } }).Security.Bearer,
    ).toMatchObject({ Enabled: true, Secret: 's', RolesClaim: 'roles' });
  });

  it("keeps Basic users' names apart from Bearer tokens' names", () => {
    const basic = (Name: string) => ({
      Enabled: true,
      Users: [{ Name, Password: 'p', Roles: ['admin' as const] }],
    });
    const bearer = { Enabled: true, Secret: 's', Issuer: 'https://id.test' };
    expect(
      configError(() =>
        buildConfig({ Security: { Basic: basic('https://id.test#ann'), Bearer: bearer } }),
      ).message,
    ).toBe(
      'Security.Basic.Users[0].Name: "https://id.test#ann" has the form of a Bearer token\'s name (https://id.test#<subject>); rename the user',
    );
    expect(
      configError(() =>
        buildConfig({
          Security: { Basic: basic('sso:ann'), Bearer: { ...bearer, UsernamePrefix: 'sso:' } },
        }),
      ).message,
    ).toContain('"sso:ann" has the form of a Bearer token\'s name (sso:<subject>)');
    expect(
      configError(() =>
        buildConfig({
          Security: { Bearer: { Enabled: true, Secret: 's', UsernamePrefix: 'sso:' } },
        }),
      ).message,
    ).toMatch(/^Security\.Bearer\.UsernamePrefix: requires Issuer/);
    for (const prefix of ['key:', 'ke', 'key:sso/']) {
      expect(
        configError(() =>
          buildConfig({ Security: { Bearer: { ...bearer, UsernamePrefix: prefix } } }),
        ).message,
      ).toContain('form API keys act under (key:<project>/<key>)');
    }
    expect(
      buildConfig({ Security: { Basic: basic('ann'), Bearer: bearer } }).Security.Bearer,
    ).toMatchObject({ ClockToleranceSeconds: 0 });
  });

  it("requires single sign-on's issuer and client, and keeps Basic names apart from its names", () => {
    expect(configError(() => buildConfig({ Security: { Oidc: { Enabled: true } } })).message).toBe(
      'Security.Oidc: Enabled requires Issuer and ClientId',
    );
    const oidc = { Enabled: true, Issuer: 'https://sso.test', ClientId: 'console' };
    const withUser = (Name: string) =>
      buildConfig({
        Security: { Basic: { Users: [{ Name, Password: 'p', Roles: ['admin'] }] }, Oidc: oidc },
      });
    expect(configError(() => withUser('https://sso.test#ann')).message).toContain(
      "has the form of a Bearer token's name (https://sso.test#<subject>)",
    );
    expect(configError(() => withUser('group:ops')).message).toBe(
      'Security.Basic.Users[0].Name: "group:ops" has the form of a group\'s member name (group:<group>); rename the user',
    );
    expect(withUser('ann').Security.Oidc).toMatchObject({ GroupsClaim: 'groups' });
  });

  it('rejects a database URL that is not PostgreSQL', () => {
    expect(configError(() => buildConfig({ Database: { Url: 'mysql://x' } })).message).toBe(
      'Database.Url: must be a postgres:// URL',
    );
  });

  it('checks the network fence lists hold address ranges', () => {
    expect(
      buildConfig({ Plugins: { Network: { AllowCidrs: ['127.0.0.0/8', '::1'], DenyCidrs: [] } } })
        .Plugins.Network.AllowCidrs,
    ).toEqual(['127.0.0.0/8', '::1']);
    expect(
      configError(() =>
        buildConfig({
          Plugins: { Network: { AllowCidrs: ['10.0.0.0/33'], DenyCidrs: ['intranet'] } },
        }),
      ).problems,
    ).toEqual([
      'Plugins.Network.AllowCidrs[0]: "10.0.0.0/33" is not an address range like 10.0.0.0/8 or fd00::/8',
      'Plugins.Network.DenyCidrs[0]: "intranet" is not an address range like 10.0.0.0/8 or fd00::/8',
    ]);
  });

  it('checks the Temporal address is host:port', () => {
    for (const Address of ['temporal.example.com:7233', '10.0.0.5:7233', '[::1]:7233']) {
      expect(buildConfig({ Temporal: { Address } }).Temporal.Address).toBe(Address);
    }
    expect(configError(() => buildConfig({ Temporal: { Address: 'http://x:7233' } })).message).toBe(
      'Temporal.Address: must be host:port',
    );
  });

  it('reads keys case-insensitively', () => {
    const config = buildConfig({ server: { port: 7001 } } as never);
    expect(config.Server.Port).toBe(7001);
  });

  it('rejects a key given twice in different spellings', () => {
    const error = configError(() => buildConfig({ Server: { port: 1, Port: 2 } } as never));
    expect(error.message).toBe(
      "Server.Port: given twice, as 'port' and 'Port' (keys are case-insensitive)",
    );
  });
});

describe('loadConfig', () => {
  it('uses defaults when there is no file and no env', () => {
    const cwd = tempDir();
    const config = loadConfig({ env: {}, cwd });
    expect(config.Server.Port).toBe(6262);
    expect(config.DataDirectory).toBe(path.join(cwd, '.trellis'));
  });

  it('reads trellis.config.json from cwd', () => {
    const cwd = tempDir();
    writeFileSync(
      path.join(cwd, 'trellis.config.json'),
      JSON.stringify({ Server: { Port: 7100 }, HealthCheck: { Enabled: true } }),
    );
    const config = loadConfig({ env: {}, cwd });
    expect(config.Server.Port).toBe(7100);
    expect(config.HealthCheck.Enabled).toBe(true);
  });

  it('reads the file named by TRELLIS_CONFIG, relative to cwd', () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'other.json'), JSON.stringify({ Logging: { Level: 'debug' } }));
    expect(loadConfig({ env: { TRELLIS_CONFIG: 'other.json' }, cwd }).Logging.Level).toBe('debug');
  });

  it('fails when TRELLIS_CONFIG names a missing file', () => {
    const cwd = tempDir();
    expect(
      configError(() => loadConfig({ env: { TRELLIS_CONFIG: 'nope.json' }, cwd })).message,
    ).toBe(`TRELLIS_CONFIG: file not found: ${path.join(cwd, 'nope.json')}`);
  });

  it('fails on a file that is not JSON', () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'trellis.config.json'), '{ "Server": ');
    expect(configError(() => loadConfig({ env: {}, cwd })).message).toMatch(/not valid JSON/);
  });

  it('applies env overrides over the file, coercing to the schema type', () => {
    const cwd = tempDir();
    writeFileSync(
      path.join(cwd, 'trellis.config.json'),
      JSON.stringify({
        Server: { Port: 7100, BodyLimitBytes: 2048 },
        Database: { Url: 'postgres://a/b' },
      }),
    );
    const users = [{ Name: 'ops', Password: 'pw', Roles: ['workflow'] }];
    const config = loadConfig({
      cwd,
      env: {
        TRELLIS__Server__Port: '7200',
        trellis__healthcheck__enabled: 'true',
        TRELLIS__SECURITY__BASIC__USERS: JSON.stringify(users),
        TRELLIS__Plugins__Registry: '/srv/registry',
        TRELLIS__Database__Url: '',
        UNRELATED: 'x',
      },
    });
    expect(config.Server).toEqual({
      Port: 7200,
      Host: '127.0.0.1',
      BodyLimitBytes: 2048,
      MaxBodyDepth: 64,
      Cors: { AllowedOrigins: [] },
      Events: {
        HeartbeatMilliseconds: 15_000,
        PollIntervalMilliseconds: 5_000,
        MaxStreamsPerUser: 100,
        MaxStreams: 1_000,
      },
      TrustedProxies: [],
    });
    expect(config.HealthCheck.Enabled).toBe(true);
    expect(config.Security.Basic.Users).toEqual(users);
    expect(config.Plugins.Registry).toBe('/srv/registry');
    // An empty value unsets the key: embedded database again.
    expect(config.Database.Url).toBeUndefined();
  });

  it('merges a file spelled in another case with env overrides', () => {
    const cwd = tempDir();
    writeFileSync(
      path.join(cwd, 'trellis.config.json'),
      JSON.stringify({ server: { port: 7100, host: '0.0.0.0' } }),
    );
    const config = loadConfig({ cwd, env: { TRELLIS__Server__Port: '7300' } });
    expect(config.Server).toMatchObject({ Port: 7300, Host: '0.0.0.0' });
  });

  it('names the variable of an env value that does not fit', () => {
    const error = configError(() =>
      loadConfig({
        cwd: tempDir(),
        env: {
          TRELLIS__Server__Port: 'abc',
          TRELLIS__HealthCheck__Enabled: 'maybe',
          TRELLIS__Security__Basic__Users: '[oops',
          TRELLIS__Server__Nope: '1',
        },
      }),
    );
    expect(error.problems).toEqual([
      'HealthCheck.Enabled: must be boolean (true or false) (from TRELLIS__HealthCheck__Enabled)',
      expect.stringMatching(
        /^Security\.Basic\.Users: must be JSON \(.+\) \(from TRELLIS__Security__Basic__Users\)$/,
      ),
      'TRELLIS__Server__Nope: unknown configuration key Server.Nope',
      'Server.Port: must be integer (from TRELLIS__Server__Port)',
    ]);
  });

  it('validates values that came from env like any other', () => {
    expect(
      configError(() => loadConfig({ cwd: tempDir(), env: { TRELLIS__Server__Port: '99999' } }))
        .message,
    ).toBe('Server.Port: must be <= 65535');
  });
});

describe('redactConfig', () => {
  it('masks passwords, secrets, keys and the database password, leaving the rest', () => {
    const config = buildConfig({
      Database: { Url: 'postgres://trellis:hunter2@db:5432/trellis' },
      Security: {
        Basic: { Users: [{ Name: 'admin', Password: 'plain', Roles: ['admin'] }] },
        Bearer: { Enabled: true, Secret: 'jwt-secret' },
        EncryptionKey: 'key',
        PreviousEncryptionKeys: ['older-key'],
      },
    });
    const redacted = redactConfig(config);
    const text = JSON.stringify(redacted);
    for (const secret of ['plain', 'jwt-secret', 'hunter2', '"key"', 'older-key'])
      expect(text).not.toContain(secret);
    expect(redacted.Database.Url).toBe('postgres://trellis:***@db:5432/trellis');
    expect(redacted.Security.Basic.Users[0]!.Name).toBe('admin');
    expect(config.Security.Basic.Users[0]!.Password).toBe('plain');
  });
});

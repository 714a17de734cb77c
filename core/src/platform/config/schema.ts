import Type, { type Static } from 'typebox';
import { definitionLimitDefaults, maxSupportedDepth } from '#definition/limits.js';

/**
 * The configuration as one JSON Schema, built with TypeBox: Ajv validates with it
 * and fills in its defaults, and `types.ts` derives `TrellisConfig` from it. A key with a default
 * is listed as required, which is what it is once the defaults are in; input may omit it.
 * Defaults that depend on other values (`Plugins.StorageRoot`, `Plugins.CacheDirectory`) are
 * derived in `load.ts`.
 */

/** Every role a user or token may hold (docs/ARCHITECTURE.md#auth). */
export const roles = ['admin', 'config', 'plugins', 'workflow'] as const;

/** What a notification may tell (`Notifications.Webhooks[].Events`). */
export const notificationEvents = [
  'ApprovalRequested',
  'ExecutionFailed',
  'ExecutionCompleted',
] as const;

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'silent'] as const;

export const logFormats = ['auto', 'json', 'pretty'] as const;

const port = (value: number) => Type.Integer({ minimum: 0, maximum: 65535, default: value });
const nonEmptyString = (defaultValue?: string) =>
  Type.String({ minLength: 1, ...(defaultValue === undefined ? {} : { default: defaultValue }) });
/** A string of a shape a pattern says; `description` names the shape in messages. */
const shaped = (pattern: string, description: string) => Type.String({ pattern, description });
/** A group of keys; absent means every key takes its default. */
const section = <Properties extends Type.TProperties>(properties: Properties) =>
  Type.Object(properties, { additionalProperties: false, default: {} });

export const basicUserSchema = Type.Object(
  {
    Name: nonEmptyString(),
    /** `scrypt$...` hash or plain text (accepted with a warning). */
    Password: nonEmptyString(),
    Roles: Type.Array(Type.Enum(roles, { type: 'string' }), { minItems: 1, uniqueItems: true }),
  },
  { additionalProperties: false },
);

/** The bounds of execution logs as stored and as read (`ExecutionLogs.*`). */
export const executionLogDefaults = {
  MaxEntryBytes: 65_536,
  MaxPageBytes: 4 * 1024 * 1024,
} as const;

export const configSchema = Type.Object(
  {
    Server: section({
      Port: port(6262),
      // Loopback unless configured: an unconfigured laptop install is not exposed to the network.
      Host: nonEmptyString('127.0.0.1'),
      BodyLimitBytes: Type.Integer({ minimum: 1, default: 1_048_576 }),
      /**
       * Proxies (addresses or CIDR ranges) whose `X-Forwarded-For` names the client, for the
       * client address the rate limits count by. Empty: the connection's peer is the client.
       */
      TrustedProxies: Type.Array(nonEmptyString(), { default: [] }),
      /** Objects and arrays around any value of a JSON body; deeper bodies get 400. */
      MaxBodyDepth: Type.Integer({ minimum: 8, maximum: maxSupportedDepth, default: 64 }),
      /** Browser origins (`https://app.example.com`) allowed to call the API; none by default. */
      Cors: section({
        AllowedOrigins: Type.Array(
          shaped('^https?://[^/\\s]+$', 'an origin such as https://app.example.com'),
          { default: [], uniqueItems: true },
        ),
      }),
      /** Execution event streams (`GET .../events`). */
      Events: section({
        /** An idle stream gets a comment line this often, so proxies and clients see it alive. */
        HeartbeatMilliseconds: Type.Integer({ minimum: 100, default: 15_000 }),
        /**
         * A stream re-reads this often even without a notification (one may be lost with its
         * connection); notifications make it read at once.
         */
        PollIntervalMilliseconds: Type.Integer({ minimum: 50, default: 5_000 }),
        /** Streams one user may hold open in one API process; past it, 429. */
        MaxStreamsPerUser: Type.Integer({ minimum: 1, default: 100 }),
        /** Streams one API process holds open for everyone together; past it, 429. */
        MaxStreams: Type.Integer({ minimum: 1, default: 1_000 }),
      }),
    }),
    /** Absolute once loaded. Holds PGlite data, the Temporal dev-server file, the plugin cache. */
    DataDirectory: nonEmptyString('.trellis'),
    HealthCheck: section({ Enabled: Type.Boolean({ default: false }) }),
    /** The MCP endpoint `/mcp` (README, "Agents (MCP)"): the agents' tools over streamable HTTP. */
    Mcp: section({ Enabled: Type.Boolean({ default: false }) }),
    /** `Url` absent → embedded PGlite under `DataDirectory`. */
    Database: section({
      Url: Type.Optional(shaped('^postgres(ql)?://', 'a postgres:// URL')),
      PoolSize: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
    }),
    /** `Address` absent → embedded `temporal server start-dev`. */
    Temporal: section({
      Address: Type.Optional(
        shaped('^(\\[[0-9a-fA-F:.]+\\]|[^\\s:/\\[\\]]+):\\d{1,5}$', 'host:port'),
      ),
      Namespace: nonEmptyString('default'),
      TaskQueue: nonEmptyString('trellis'),
      Port: port(7233),
      UiPort: port(8233),
      /**
       * The Temporal Web UI's root URL, for the console's link from a run to its Temporal
       * workflow. Unset: the embedded dev server's UI when Trellis runs one, else no link.
       */
      UiUrl: Type.Optional(
        shaped(
          '^https?://[^\\s/]+(/[^\\s]*)?$',
          'an http(s) URL such as https://temporal.example.com',
        ),
      ),
      /**
       * TLS to the cluster (Temporal Cloud, most self-hosted ones). `Enabled` absent: on when
       * `ApiKey` is set. Files are PEM; relative paths are from the working directory.
       */
      Tls: section({
        Enabled: Type.Optional(Type.Boolean()),
        /** The name the server's certificate must carry, when it is not the address's host. */
        ServerName: Type.Optional(nonEmptyString()),
        /** CA certificate(s) the server's certificate must chain to; absent: the system's. */
        ServerRootCaFile: Type.Optional(nonEmptyString()),
        /** The client's certificate and key, for mutual TLS (both or neither). */
        ClientCertFile: Type.Optional(nonEmptyString()),
        ClientKeyFile: Type.Optional(nonEmptyString()),
      }),
      /** A Temporal Cloud API key, sent as a bearer token on every call. */
      ApiKey: Type.Optional(nonEmptyString()),
    }),
    Security: section({
      Basic: section({
        Enabled: Type.Boolean({ default: true }),
        Users: Type.Array(basicUserSchema, { default: [] }),
      }),
      Bearer: section({
        Enabled: Type.Boolean({ default: false }),
        Issuer: Type.Optional(nonEmptyString()),
        Audience: Type.Optional(nonEmptyString()),
        /** HS256 shared secret. */
        Secret: Type.Optional(nonEmptyString()),
        /** RS256/ES256 keys. */
        JwksUri: Type.Optional(shaped('^https?://', 'an http(s) URL')),
        RolesClaim: nonEmptyString('roles'),
        /** How far a token's `exp` and `nbf` may be off (the issuer's clock against ours). */
        ClockToleranceSeconds: Type.Integer({ minimum: 0, maximum: 300, default: 0 }),
        /**
         * What precedes a token's `sub` in its bearer's name (approvers, `decidedBy`, `/me`);
         * unset: the token's issuer and `#`, so no subject is ever taken for a Basic user.
         */
        UsernamePrefix: Type.Optional(nonEmptyString()),
      }),
      /**
       * Single sign-on for the console: OpenID Connect's authorization code flow with PKCE, the
       * console a public client of `Issuer`. Its ID tokens are then Bearer tokens for the API.
       */
      Oidc: section({
        Enabled: Type.Boolean({ default: false }),
        /** The provider's issuer URL: its discovery document is `<Issuer>/.well-known/openid-configuration`. */
        Issuer: Type.Optional(shaped('^https?://', 'an http(s) URL')),
        /** The console's client id at the provider: ID tokens must be issued to it. */
        ClientId: Type.Optional(nonEmptyString()),
        Scopes: nonEmptyString('openid profile email groups'),
        /** What the console's button says: "Sign in with <DisplayName>". */
        DisplayName: nonEmptyString('single sign-on'),
        /** The claim (a dotted path) listing a token's groups: members `group:<name>` of projects. */
        GroupsClaim: nonEmptyString('groups'),
        /** A claim (a dotted path) with roles in `default`; absent: roles come from memberships. */
        RolesClaim: Type.Optional(nonEmptyString()),
      }),
      /** Key (any string; scrypt derives the AES keys) encrypting secret plugin settings at rest. */
      EncryptionKey: Type.Optional(nonEmptyString()),
      /** Keys used before a rotation: they still decrypt; `EncryptionKey` re-encrypts on write. */
      PreviousEncryptionKeys: Type.Array(nonEmptyString(), { default: [] }),
      /** Abuse limits (OWASP API2, API4): on by default, generous. */
      RateLimits: section({
        Enabled: Type.Boolean({ default: true }),
        /** Failed logins for one user name within the window that lock the name for the window. */
        FailedLoginsPerUser: Type.Integer({ minimum: 1, default: 10 }),
        /** Failed logins from one client address, across names, that lock the address. */
        FailedLoginsPerAddress: Type.Integer({ minimum: 1, default: 100 }),
        /** The window failures are counted in, and how long a lock lasts. */
        WindowSeconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
        /** Requests one authenticated user may make per minute, per API process. */
        RequestsPerUserPerMinute: Type.Integer({ minimum: 1, default: 60_000 }),
      }),
    }),
    /** Projects: who may create them and manage every one of them. */
    Projects: section({
      /**
       * The users (names as `/me` shows them) who hold every role in every project and alone
       * create, rename and delete projects. Absent: every configured user holding `admin`.
       */
      InstanceAdmins: Type.Optional(Type.Array(nonEmptyString(), { uniqueItems: true })),
      /** Each project's fair share where it sets none of its own (`limits`); 0 is unlimited. */
      Limits: section({
        /** Executions Running or Paused at once; past it a new one waits Pending. */
        RunningExecutions: Type.Integer({ minimum: 0, default: 0 }),
        /** Executions started a minute, by any path; past it 429 (a trigger's run Failed). */
        StartsPerMinute: Type.Integer({ minimum: 0, default: 0 }),
        /** API requests a minute, counted across API processes; past it 429. */
        RequestsPerMinute: Type.Integer({ minimum: 0, default: 0 }),
      }),
      /**
       * Temporal namespaces of projects, by project name (`{"partner-a": "partner-a"}`); every
       * other project runs in `Temporal.Namespace`. An execution keeps the namespace it was
       * created in. Workers serve `Temporal.Namespace` and every namespace named here.
       */
      Namespaces: Type.Record(Type.String(), nonEmptyString(), { default: {} }),
    }),
    Plugins: section({
      /** Install the built-in packages on a fresh database. */
      InstallBuiltIns: Type.Boolean({ default: true }),
      /** A directory or HTTP(S) URL holding `index.json` and tarballs. */
      Registry: Type.Optional(nonEmptyString()),
      /** `Exec/Process` runs only when true. */
      AllowProcessExecution: Type.Boolean({ default: false }),
      /** Root folder for `Storage/Local`; `<DataDirectory>/storage` when absent (see load.ts). */
      StorageRoot: Type.Optional(nonEmptyString()),
      /**
       * Where installed plugin packages are unpacked; `<DataDirectory>/plugin-cache` when absent
       * (see load.ts). The install folder and its node_modules may then be read-only.
       */
      CacheDirectory: Type.Optional(nonEmptyString()),
      /** Largest JSON output a task may return. */
      MaxOutputBytes: Type.Integer({ minimum: 1, default: 2 * 1024 * 1024 }),
      /**
       * Where network plugins may connect: loopback, link-local, cloud metadata and Trellis's own
       * ports are refused unless `AllowCidrs` opens a range; `DenyCidrs` closes more.
       */
      Network: section({
        AllowCidrs: Type.Array(nonEmptyString(), { default: [] }),
        DenyCidrs: Type.Array(nonEmptyString(), { default: [] }),
      }),
      Database: section({
        /** `Database/PostgreSql` may connect to Trellis's own database only when true. */
        AllowTrellisDatabase: Type.Boolean({ default: false }),
        /**
         * Longest a `Database/PostgreSql` statement may run, whatever its task's
         * `statementTimeoutMilliseconds` says (a task asking more, or none, gets this).
         */
        MaxStatementTimeoutMilliseconds: Type.Integer({ minimum: 1, default: 300_000 }),
      }),
      /** Largest package tarball (gzip'd) that can be installed or unpacked. */
      MaxPackageBytes: Type.Integer({ minimum: 1, default: 16 * 1024 * 1024 }),
      /** Largest a package may be once gunzipped (its tar stream). */
      MaxUnpackedPackageBytes: Type.Integer({ minimum: 1, default: 64 * 1024 * 1024 }),
      /**
       * The sandbox processes third-party plugins and the built-ins that evaluate user input run
       * in (README, "What a plugin can reach").
       */
      Sandbox: section({
        /** JavaScript heap of one sandbox process; on Linux its resident memory too (plus 64 MB). */
        MemoryMb: Type.Integer({ minimum: 16, default: 256 }),
        /** Time limit of a sandboxed attempt whose task sets no `timeoutMilliseconds`. */
        TimeoutMilliseconds: Type.Integer({ minimum: 1, default: 300_000 }),
        /** Sandbox processes a worker runs at once; attempts beyond wait for one. */
        MaxProcesses: Type.Integer({ minimum: 1, maximum: 1000, default: 8 }),
        /**
         * Sandbox processes the attempts of one run may hold at once, so that a run's slow tasks
         * leave room for other runs; half of `MaxProcesses` (at least 1) when absent.
         */
        MaxProcessesPerRun: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      }),
    }),
    Definitions: section({
      MaxBytes: Type.Integer({ minimum: 1, default: definitionLimitDefaults.MaxBytes }),
      MaxDepth: Type.Integer({
        minimum: 8,
        maximum: maxSupportedDepth,
        default: definitionLimitDefaults.MaxDepth,
      }),
      MaxTasks: Type.Integer({ minimum: 1, default: definitionLimitDefaults.MaxTasks }),
      MaxDependencies: Type.Integer({
        minimum: 0,
        default: definitionLimitDefaults.MaxDependencies,
      }),
      MaxNameLength: Type.Integer({ minimum: 1, default: definitionLimitDefaults.MaxNameLength }),
      MaxStringLength: Type.Integer({
        minimum: 256,
        default: definitionLimitDefaults.MaxStringLength,
      }),
      MaxSubworkflowDepth: Type.Integer({
        minimum: 1,
        maximum: 100,
        default: definitionLimitDefaults.MaxSubworkflowDepth,
      }),
    }),
    /** The log entries of executions and their tasks (README, "Following a run live"). */
    ExecutionLogs: section({
      /**
       * UTF-8 bytes of an entry's message, and of its exception, as stored: longer text is cut,
       * with a marker saying how much was cut.
       */
      MaxEntryBytes: Type.Integer({ minimum: 1024, default: executionLogDefaults.MaxEntryBytes }),
      /**
       * A page of log entries (`GET .../logs`) ends early once its messages and exceptions hold
       * this many bytes; it always holds at least one entry.
       */
      MaxPageBytes: Type.Integer({
        minimum: 65_536,
        default: executionLogDefaults.MaxPageBytes,
      }),
    }),
    /** The audit trail (README, "Audit trail"): who changed or decided what. */
    Audit: section({
      /**
       * Entries older than this many days (fractions allowed) are purged by the API processes,
       * every six hours or every retention period when it is shorter.
       */
      RetentionDays: Type.Number({ exclusiveMinimum: 0, default: 365 }),
    }),
    Logging: section({
      Level: Type.Enum(logLevels, { type: 'string', default: 'info' }),
      /** `auto`: readable lines when stdout is a terminal, JSON lines otherwise. */
      Format: Type.Enum(logFormats, { type: 'string', default: 'auto' }),
    }),
    Startup: section({
      /** How long a start waits for PostgreSQL and Temporal to answer before giving up. */
      WaitSeconds: Type.Integer({ minimum: 0, maximum: 3600, default: 60 }),
    }),
    /**
     * Prometheus metrics (README, "Operating Trellis"). Off by default: `/metrics` needs no
     * credentials and tells anyone who can reach the port what the service does (operations,
     * plugin types, volumes), so it is opened on purpose, as `/health` is.
     */
    Metrics: section({
      /** Serve `/metrics` (on the API port; a worker-only process on `WorkerPort`). */
      Enabled: Type.Boolean({ default: false }),
      /** Where a worker-only process (`--role worker`) serves `/metrics`, `/livez` and `/readyz`. */
      Host: nonEmptyString('127.0.0.1'),
      /** 0 picks a free port. 9464 is the port OpenTelemetry's Prometheus exporters default to. */
      WorkerPort: port(9464),
    }),
    /**
     * Notifications (README, "Approvals"): events POSTed to webhooks, signed with Standard
     * Webhooks headers, retried with backoff by the worker, logged per attempt.
     */
    Notifications: section({
      Webhooks: Type.Array(
        Type.Object(
          {
            /** Where the events are POSTed. */
            Url: shaped('^https?://[^\\s]+$', 'an http(s) URL'),
            /** The events sent there. */
            Events: Type.Array(Type.Enum(notificationEvents, { type: 'string' }), {
              minItems: 1,
              uniqueItems: true,
            }),
            /** The Standard Webhooks signing secret (`whsec_` and base64), shared with the receiver. */
            Secret: shaped(
              '^whsec_[A-Za-z0-9+/=]{16,}$',
              'a Standard Webhooks secret (whsec_ and base64)',
            ),
          },
          { additionalProperties: false },
        ),
        { default: [] },
      ),
      /**
       * The API's URL as receivers reach it, for approval links (`https://trellis.example.com`).
       * Absent: `http://<Server.Host>:<Server.Port>`.
       */
      PublicUrl: Type.Optional(shaped('^https?://[^\\s]+$', 'an http(s) URL')),
      /** How long an approval link works. */
      LinkTtlMinutes: Type.Integer({ minimum: 1, default: 1440 }),
      /** Attempts per event and webhook before it is abandoned (with backoff: 1 s, 2 s, 4 s … 1 min). */
      MaxAttempts: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
      /** How long one attempt waits for the receiver's answer. */
      TimeoutMilliseconds: Type.Integer({ minimum: 100, default: 10_000 }),
    }),
    /** OpenTelemetry traces (README, "Operating Trellis"); off unless `OtlpEndpoint` is set. */
    Telemetry: section({
      /**
       * The OTLP/HTTP endpoint of a collector (`http://otel-collector:4318`): spans go to its
       * `/v1/traces` as OTLP JSON. Absent: no tracing at all.
       */
      OtlpEndpoint: Type.Optional(shaped('^https?://[^\\s]+$', 'an http(s) URL')),
      /** The `service.name` of the spans. */
      ServiceName: nonEmptyString('trellis'),
      /**
       * The share of traces started here that are recorded (0 to 1); a request whose caller's
       * `traceparent` says sampled or not is recorded as the caller decided.
       */
      SampleRatio: Type.Number({ minimum: 0, maximum: 1, default: 1 }),
    }),
  },
  { additionalProperties: false },
);

/** The configuration as validated, defaults filled in. */
export type ValidatedConfig = Static<typeof configSchema>;

/**
 * The parsed, validated, frozen configuration (DESIGN.md §3). Built once at boot by
 * `loadConfig()`; tests build it with `buildConfig(partial)`. Nothing else reads `process.env`.
 */
export interface TrellisConfig {
  Server: { Port: number; Host: string; BodyLimitBytes: number };
  /** Absolute path. Holds PGlite data, the Temporal dev-server file, the plugin cache. */
  DataDirectory: string;
  HealthCheck: { Enabled: boolean };
  /** `Url` absent → embedded PGlite under `DataDirectory`. */
  Database: { Url?: string; PoolSize: number };
  /** `Address` absent → embedded `temporal server start-dev`. */
  Temporal: {
    Address?: string;
    Namespace: string;
    TaskQueue: string;
    UiPort: number;
    Port: number;
  };
  Security: {
    Basic: { Enabled: boolean; Users: BasicUser[] };
    Bearer: {
      Enabled: boolean;
      Issuer?: string;
      Audience?: string;
      /** HS256 shared secret. */
      Secret?: string;
      /** RS256/ES256 keys. */
      JwksUri?: string;
      RolesClaim: string;
    };
    /** Key (any string; hashed to 32 bytes) encrypting secret plugin settings at rest. */
    EncryptionKey?: string;
  };
  Plugins: {
    /** Install the built-in packages on a fresh database. */
    InstallBuiltIns: boolean;
    /** A directory or HTTP(S) URL holding `index.json` and tarballs. */
    Registry?: string;
    /** `Exec/Process` runs only when true. */
    AllowProcessExecution: boolean;
    /** Root folder for `Storage/Local`; default `<DataDirectory>/storage`. */
    StorageRoot: string;
    /** Largest JSON output a task may return. */
    MaxOutputBytes: number;
  };
  Logging: { Level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent' };
}

export type Role = 'admin' | 'config' | 'plugins' | 'workflow';

export interface BasicUser {
  Name: string;
  /** `scrypt$...` hash or plain text (accepted with a warning). */
  Password: string;
  Roles: Role[];
}

import type { TrellisClient } from '@trellis/sdk';
import type { Command } from 'commander';
import { connect, defaultUrl, type ConnectionOptions, type OptionSource } from './connection.js';
import { Output, type Io } from './output/output.js';
import { version } from './version.js';

/** The options every command takes (README "Command line"). */
export interface GlobalOptions extends ConnectionOptions {
  json?: boolean;
  /** false with `--no-color`. */
  color?: boolean;
}

/** What a command runs with: its output, and a client for the server (made when first used). */
export class Context {
  readonly output: Output;
  readonly url: string;
  private readonly options: GlobalOptions;
  private client: TrellisClient | undefined;

  constructor(
    private readonly command: Command,
    io: Io,
  ) {
    this.options = command.optsWithGlobals<GlobalOptions>();
    this.output = new Output(io, this.options);
    this.url = this.options.url ?? defaultUrl;
  }

  /** The project named by `--project` (or TRELLIS_PROJECT); undefined: the caller's default. */
  get project(): string | undefined {
    return this.options.project;
  }

  /** The SDK client, with the credentials of the flags or the environment. */
  get trellis(): TrellisClient {
    this.client ??= connect(
      this.options,
      (name) => this.command.getOptionValueSourceWithGlobals(name) as OptionSource,
      `trellis-cli/${version}`,
    );
    return this.client;
  }
}

/**
 * The deploy recipes (`deploy/`) as data, for the tests that check them and the topology test
 * that runs their commands and configuration: the compose file parsed and interpolated as
 * `docker compose` does, the image's runtime environment from the Dockerfile, and Helm.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { readEnvOverrides } from '#platform/config/env.js';

export const projectRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const deployPath = (...segments: string[]) => path.join(projectRoot, 'deploy', ...segments);

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number | boolean | null>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
  volumes?: string[];
  restart?: string;
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** deploy/compose.yaml as YAML reads it, anchors and `<<` merge keys resolved, not interpolated. */
export function readComposeFile(): Record<string, unknown> {
  return parse(readFileSync(deployPath('compose.yaml'), 'utf8'), { merge: true }) as Record<
    string,
    unknown
  >;
}

/**
 * Compose's interpolation (compose-spec "Interpolation"): `$$` is a `$`; `${VAR}` and `$VAR`;
 * `${VAR:-default}` / `${VAR-default}`; `${VAR:?message}` / `${VAR?message}` fail with the
 * message; `${VAR:+other}` / `${VAR+other}`. Unlike compose, a variable that is neither set nor
 * given a default is an error here, so a test cannot pass on an empty string it did not mean.
 */
export function interpolate(text: string, variables: Record<string, string>): string {
  const pattern =
    /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;
  return text.replace(
    pattern,
    (_match, dollar?: string, braced?: string, operator?: string, word?: string, bare?: string) => {
      if (dollar) return '$';
      const name = (braced ?? bare)!;
      const value = variables[name];
      const set = value !== undefined;
      const nonEmpty = set && value !== '';
      switch (operator) {
        case ':-':
          return nonEmpty ? value : word!;
        case '-':
          return set ? value : word!;
        case ':?':
        case '?':
          if (operator === ':?' ? nonEmpty : set) return value!;
          throw new MissingVariable(name, word!);
        case ':+':
          return nonEmpty ? word! : '';
        case '+':
          return set ? word! : '';
        default:
          if (!set) throw new MissingVariable(name, 'not set and no default');
          return value;
      }
    },
  );
}

export class MissingVariable extends Error {
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`required variable ${variable} is missing a value: ${reason}`);
    this.name = 'MissingVariable';
  }
}

/** Every string in `value` interpolated. */
export function interpolateAll<T>(value: T, variables: Record<string, string>): T {
  if (typeof value === 'string') return interpolate(value, variables) as T;
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, variables) as T) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateAll(item, variables)]),
    ) as T;
  }
  return value;
}

/** The compose file as `docker compose config` sees it with these variables (e.g. deploy/.env). */
export function loadCompose(variables: Record<string, string>): ComposeFile {
  return interpolateAll(readComposeFile(), variables) as unknown as ComposeFile;
}

/** A service's environment as its container gets it: strings, as compose passes them. */
export function serviceEnvironment(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([key, value]) => [key, String(value ?? '')]),
  );
}

/** Stages of deploy/Dockerfile: name (`AS ...`), base, and instructions `[keyword, rest]`. */
export interface DockerStage {
  name: string | null;
  from: string;
  instructions: [string, string][];
}

export function readDockerfile(): DockerStage[] {
  const text = readFileSync(deployPath('Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  const stages: DockerStage[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [, keyword = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(trimmed) ?? [];
    const instruction = keyword.toUpperCase();
    if (instruction === 'FROM') {
      const [, from = '', name = null] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? [];
      stages.push({ name, from, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push([instruction, rest]);
    }
  }
  return stages;
}

/** The environment the final stage of deploy/Dockerfile sets (`ENV k=v ...`). */
export function imageEnvironment(stage: DockerStage): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [instruction, rest] of stage.instructions) {
    if (instruction !== 'ENV') continue;
    for (const [, key, value] of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S+)/g)) {
      environment[key!] = value!;
    }
  }
  return environment;
}

/**
 * The Helm to render the chart with, found as scripts/setup/setup-helm.sh finds it (HELM, PATH,
 * .tools/helm), or null. CI installs it; a developer without it has the chart tests skipped.
 */
export function findHelm(): string | null {
  const candidates = [
    process.env.HELM,
    spawnSync('sh', ['-c', 'command -v helm'], { encoding: 'utf8' }).stdout.trim(),
    path.join(projectRoot, '.tools/helm/bin/helm'),
  ];
  return candidates.find((candidate) => candidate && existsSync(candidate)) ?? null;
}

/**
 * Whether this Trellis has a configuration key (`Metrics.WorkerPort`): the recipes name the
 * metrics and probe settings, which a tree without the metrics endpoints does not know yet.
 */
export function configKnows(key: string): boolean {
  const variable = `TRELLIS__${key.split('.').join('__')}`;
  return readEnvOverrides({ [variable]: '1' }).problems.length === 0;
}

/**
 * Lays out the files of the image's runtime stage under `target`, as its COPY instructions
 * bring them in: from the checkout (the build context, less `*.test.ts` as .dockerignore says),
 * and from the other stages, whose folders are this checkout's (`/src/dist` of the build stage
 * is `dist/`, built beforehand). `node_modules` is linked, not installed: the checkout's holds
 * the production dependencies and more. A process run from there finds every file it reads from
 * its install folder only if the Dockerfile copies it.
 */
export async function stageRuntimeImage(target: string): Promise<string> {
  const stages = readDockerfile();
  const runtime = stages.at(-1)!;
  const workdirOf = (stage: DockerStage) =>
    stage.instructions.filter(([instruction]) => instruction === 'WORKDIR').at(-1)?.[1] ?? '/';
  const workdir = workdirOf(runtime);
  for (const [instruction, rest] of runtime.instructions) {
    if (instruction !== 'COPY') continue;
    const words = rest.split(/\s+/);
    const from = words[0]!.startsWith('--from=') ? words.shift()!.slice('--from='.length) : null;
    const destination = words.pop()!;
    for (const source of words) {
      let checkoutPath = source;
      if (from) {
        const stage = stages.find((candidate) => candidate.name === from);
        if (!stage) throw new Error(`COPY --from=${from}: no such stage`);
        checkoutPath = path.relative(workdirOf(stage), source);
      }
      const into = path.resolve(target, path.relative(workdir, path.resolve(workdir, destination)));
      const copyInto = destination.endsWith('/') || destination === './';
      const to = copyInto ? path.join(into, path.basename(checkoutPath)) : into;
      const fromPath = path.join(projectRoot, checkoutPath);
      await mkdir(path.dirname(to), { recursive: true });
      if (path.basename(checkoutPath) === 'node_modules') {
        await symlink(fromPath, to, 'dir');
      } else {
        await cp(fromPath, destination.endsWith('/') && source.endsWith('/') ? into : to, {
          recursive: true,
          filter: (file) => !file.endsWith('.test.ts'),
        });
      }
    }
  }
  return target;
}

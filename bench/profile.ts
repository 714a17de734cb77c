/**
 * Where the Trellis processes spent their CPU during a `--profile` run: self time from the V8
 * profiles `node --cpu-prof` wrote, by function and by code area (project folder or package).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Phase } from './report.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Text report of every profile in `directory`, naming processes by `roles` (pid → name); then,
 * for each of `phases`, where its process spent its CPU during that phase's windows, per request.
 */
export async function summarizeProfiles(
  directory: string,
  roles: Record<number, string> = {},
  top = 20,
  phases: Phase[] = [],
): Promise<string> {
  const sections: string[] = [];
  for (const file of (await readdir(directory)).sort()) {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (others are
    // tsx's module loader and the like).
    const name = /\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(file);
    if (!name || name[2] !== '0') continue;
    const pid = Number(name[1]);
    const profile = JSON.parse(await readFile(path.join(directory, file), 'utf8')) as CpuProfile;
    const role = roles[pid] ?? 'process';
    sections.push(describeProfile(`${role} ${pid} (${file})`, profile, top));
    for (const phase of phases.filter((candidate) => candidate.role === role)) {
      sections.push(describePhase(phase, profile, top));
    }
  }
  return sections.join('\n');
}

/** CPU per request while the process served one phase's load, by area and by function. */
function describePhase(phase: Phase, profile: CpuProfile, top: number): string {
  const requests = phase.windows.reduce((sum, window) => sum + window.requests, 0);
  const inWindows = (at: number) =>
    phase.windows.some((window) => at >= window.startUs && at <= window.endUs);
  return describeProfile(
    `${phase.role} during ${phase.name} (${phase.windows.length} rounds, ${requests} requests)`,
    profile,
    top,
    { include: inWindows, perRequest: requests },
  );
}

function describeProfile(
  title: string,
  profile: CpuProfile,
  top: number,
  only: { include: (atUs: number) => boolean; perRequest: number } | undefined = undefined,
): string {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByFunction = new Map<string, number>();
  const selfByArea = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const micros = profile.timeDeltas[index] ?? 0;
    at += micros;
    if (only && !only.include(at)) return;
    const frame = byNode.get(id)?.callFrame;
    if (!frame) return;
    total += micros;
    if (frame.functionName === '(idle)') {
      idle += micros;
      return;
    }
    const where = shortUrl(frame.url);
    const key = `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`;
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + micros);
    const area = areaOf(frame);
    selfByArea.set(area, (selfByArea.get(area) ?? 0) + micros);
  });
  const busy = total - idle;
  // Per request in a phase (µs), else in total (ms).
  const amount = (micros: number) =>
    only
      ? `${(micros / only.perRequest).toFixed(1).padStart(7)} µs/req`
      : `${(micros / 1000).toFixed(0).padStart(7)} ms`;
  const lines = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([key, micros]) =>
          `  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${amount(micros)}  ${key}`,
      );
  return [
    `== ${title}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy${only ? `, ${amount(busy).trim()} busy` : ''}`,
    ' by area (self time, % of busy):',
    ...lines(selfByArea),
    ' by function (self time):',
    ...lines(selfByFunction),
    '',
  ].join('\n');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const project = url.indexOf('/work/');
  return project >= 0
    ? url.replace(/^file:\/\/\/?.*?\/(core|server|workflows-worker|plugins|bin|sdk)\//, '$1/')
    : url;
}

/** A package name, a project folder, `node:` internals, or V8's own buckets like `(garbage collector)`. */
function areaOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (modules?.[1]) return modules[1];
  if (url.startsWith('node:')) return url.split('/')[0]!;
  const folder =
    /\/(core|server|workflows-worker|plugins|bin|sdk|bench|test)\/(src\/)?([^/]+)/.exec(url);
  return folder ? `${folder[1]}/${folder[3]}` : url;
}

/** The roles and phases a `--profile` run wrote beside its profiles (none for older runs). */
async function readPhases(
  folder: string,
): Promise<{ roles: Record<number, string>; phases: Phase[] }> {
  try {
    return JSON.parse(await readFile(path.join(folder, 'phases.json'), 'utf8')) as {
      roles: Record<number, string>;
      phases: Phase[];
    };
  } catch {
    return { roles: {}, phases: [] };
  }
}

// `tsx bench/profile.ts <folder> [top]`: the same report for profiles written earlier.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [folder = 'bench/results/profiles', top = '25'] = process.argv.slice(2);
  const { roles, phases } = await readPhases(folder);
  console.log(await summarizeProfiles(folder, roles, Number(top), phases));
}

/**
 * Where the Trellis processes spent their CPU during a `--profile` run: self time from the V8
 * profiles `node --cpu-prof` wrote, by function and by code area (project folder or package).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

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

/** Text report of every profile in `directory`, naming processes by `roles` (pid → name). */
export async function summarizeProfiles(
  directory: string,
  roles: Record<number, string> = {},
  top = 20,
): Promise<string> {
  const sections: string[] = [];
  for (const file of (await readdir(directory)).sort()) {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (others are
    // tsx's module loader and the like).
    const name = /\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(file);
    if (!name || name[2] !== '0') continue;
    const pid = Number(name[1]);
    const profile = JSON.parse(await readFile(path.join(directory, file), 'utf8')) as CpuProfile;
    sections.push(describeProfile(`${roles[pid] ?? 'process'} ${pid} (${file})`, profile, top));
  }
  return sections.join('\n');
}

function describeProfile(title: string, profile: CpuProfile, top: number): string {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByFunction = new Map<string, number>();
  const selfByArea = new Map<string, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, index) => {
    const micros = profile.timeDeltas[index] ?? 0;
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
  const lines = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([key, micros]) =>
          `  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${key}`,
      );
  return [
    `== ${title}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`,
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

// `tsx bench/profile.ts <folder> [top]`: the same report for profiles written earlier.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [folder = 'bench/results/profiles', top = '25'] = process.argv.slice(2);
  console.log(await summarizeProfiles(folder, {}, Number(top)));
}

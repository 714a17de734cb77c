/**
 * The Helm chart (deploy/helm/trellis) as Kubernetes would receive it: `helm template` output
 * parsed as YAML and checked for what an install depends on (roles, probes, the Secret and the
 * ConfigMap wired in, non-root and read-only, replicas, metrics), and the pods' configuration
 * loaded by Trellis's own loader. Needs Helm (scripts/setup/setup-helm.sh; CI installs it).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { loadConfig } from '#platform/config/load.js';
import { deployPath, findHelm, projectRoot } from './support/recipes.js';

const chart = deployPath('helm', 'trellis');
const lintValues = path.join(chart, 'ci', 'lint-values.yaml');
const helm = findHelm();
if (!helm) {
  if (process.env.CI)
    throw new Error('Helm is missing in CI: .ci/run runs scripts/setup/setup-helm.sh');
  console.warn(
    'test/deploy/helm.test.ts skipped: no Helm (HELM, PATH or .tools/helm); run `bash scripts/setup/setup-helm.sh`',
  );
}

interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } };
}

interface Container {
  name: string;
  image: string;
  args: string[];
  env: EnvVar[];
  ports: { name: string; containerPort: number }[];
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string; subPath?: string }[];
}

interface Probe {
  httpGet: { path: string; port: string };
}

interface PodSpec {
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: { name: string; emptyDir?: object; configMap?: { name: string } }[];
  automountServiceAccountToken: boolean;
}

interface Deployment extends Manifest {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: PodSpec;
    };
  };
}

async function helmRun(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(helm!, args, {
    cwd: projectRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** The chart rendered with the lint values and `extra` arguments (`--set ...`). */
async function render(...extra: string[]): Promise<Manifest[]> {
  const output = await helmRun(['template', 'prod', chart, '-f', lintValues, ...extra]);
  return parseAllDocuments(output)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

/** The error `helm template` stops with for these arguments. */
async function renderError(...extra: string[]): Promise<string> {
  return helmRun(['template', 'prod', chart, '-f', lintValues, ...extra]).then(
    () => 'rendered without error',
    (error: { stderr: string }) => error.stderr,
  );
}

function find<T extends Manifest = Manifest>(manifests: Manifest[], kind: string, name: string): T {
  const found = manifests.find((item) => item.kind === kind && item.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in ${manifests.map((m) => m.kind).join(', ')}`);
  return found as T;
}

const deployment = (manifests: Manifest[], component: 'api' | 'worker') =>
  find<Deployment>(manifests, 'Deployment', `prod-trellis-${component}`);

const containerOf = (manifests: Manifest[], component: 'api' | 'worker') =>
  deployment(manifests, component).spec.template.spec.containers[0]!;

describe.skipIf(!helm)('the Helm chart', () => {
  let manifests: Manifest[];
  let folder: string;

  beforeAll(async () => {
    manifests = await render();
    folder = await mkdtemp(path.join(tmpdir(), 'trellis-helm-'));
  });
  afterAll(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('passes helm lint --strict', async () => {
    const output = await helmRun(['lint', '--strict', chart, '-f', lintValues]);
    expect(output).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('is versioned with Trellis: appVersion is the package version and the default image tag', async () => {
    const chartFile = parse(await readFile(path.join(chart, 'Chart.yaml'), 'utf8')) as {
      appVersion: string;
    };
    const { version } = JSON.parse(
      await readFile(path.join(projectRoot, 'package.json'), 'utf8'),
    ) as { version: string };
    expect(chartFile.appVersion).toBe(version);
    expect(containerOf(manifests, 'api').image).toBe(`trellis:${version}`);
  });

  it('runs an api Deployment and a worker Deployment of one image, the role as the argument', () => {
    const api = containerOf(manifests, 'api');
    const worker = containerOf(manifests, 'worker');
    expect(api.args).toEqual(['--role', 'api']);
    expect(worker.args).toEqual(['--role', 'worker']);
    expect(worker.image).toBe(api.image);
    expect(api.ports).toEqual([{ name: 'http', containerPort: 6262, protocol: 'TCP' }]);
    expect(worker.ports).toEqual([{ name: 'probes', containerPort: 9464, protocol: 'TCP' }]);
  });

  it('probes /livez and /readyz on each process its own port', () => {
    for (const [component, port] of [
      ['api', 'http'],
      ['worker', 'probes'],
    ] as const) {
      const container = containerOf(manifests, component);
      expect(container.startupProbe.httpGet).toEqual({ path: '/livez', port });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port });
    }
  });

  it('serves the api pods, and only them, through a Service', () => {
    const service = find(manifests, 'Service', 'prod-trellis');
    const selector = service.spec!.selector as Record<string, string>;
    const matches = (labels: Record<string, string>) =>
      Object.entries(selector).every(([key, value]) => labels[key] === value);
    expect(matches(deployment(manifests, 'api').spec.template.metadata.labels)).toBe(true);
    expect(matches(deployment(manifests, 'worker').spec.template.metadata.labels)).toBe(false);
    expect(service.spec!.ports).toEqual([
      { name: 'http', port: 6262, targetPort: 'http', protocol: 'TCP' },
    ]);
    for (const component of ['api', 'worker'] as const) {
      const { selector: own, template } = deployment(manifests, component).spec;
      expect(template.metadata.labels).toMatchObject(own.matchLabels);
    }
  });

  it('runs as a non-root user on a read-only root filesystem, writing only to emptyDirs', () => {
    for (const component of ['api', 'worker'] as const) {
      const pod = deployment(manifests, component).spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(pod.automountServiceAccountToken).toBe(false);
      const container = pod.containers[0]!;
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      const dataDirectory = container.env.find((item) => item.name === 'TRELLIS__DataDirectory');
      const writable = container.volumeMounts
        .filter((mount) => pod.volumes.find((volume) => volume.name === mount.name)?.emptyDir)
        .map((mount) => mount.mountPath);
      expect(writable.sort()).toEqual([dataDirectory?.value, '/tmp'].sort());
    }
  });

  it('takes credentials from the Secret it renders, and each pod restarts when it changes', () => {
    const secret = find(manifests, 'Secret', 'prod-trellis');
    for (const component of ['api', 'worker'] as const) {
      const container = containerOf(manifests, component);
      const references = container.env.filter((item) => item.valueFrom);
      expect(references.map((item) => item.name).sort()).toEqual([
        'TRELLIS__Database__Url',
        'TRELLIS__Security__Basic__Users',
        'TRELLIS__Security__Bearer__Secret',
        'TRELLIS__Security__EncryptionKey',
        'TRELLIS__Temporal__ApiKey',
      ]);
      for (const { valueFrom } of references) {
        const { name, key, optional } = valueFrom!.secretKeyRef;
        expect(name).toBe('prod-trellis');
        // A required key the Secret lacks would keep the pod from starting.
        if (!optional) expect(Object.keys(secret.stringData!)).toContain(key);
      }
      const annotations = deployment(manifests, component).spec.template.metadata.annotations;
      expect(Object.keys(annotations).sort()).toEqual(['checksum/config', 'checksum/secret']);
    }
    // No credential in the ConfigMap.
    const configMap = find(manifests, 'ConfigMap', 'prod-trellis');
    expect(configMap.data!['trellis.config.json']).not.toMatch(/lint-only|scrypt/);
  });

  it('gives each pod a configuration that Trellis loads: the ConfigMap file plus the Secret', async () => {
    const configMap = find(manifests, 'ConfigMap', 'prod-trellis');
    const secret = find(manifests, 'Secret', 'prod-trellis');
    for (const component of ['api', 'worker'] as const) {
      const container = containerOf(manifests, component);
      const configPath = container.env.find((item) => item.name === 'TRELLIS_CONFIG')!.value!;
      const mount = container.volumeMounts.find((item) => item.mountPath === configPath)!;
      expect(mount.subPath).toBe('trellis.config.json');
      const volume = deployment(manifests, component).spec.template.spec.volumes.find(
        (item) => item.name === mount.name,
      );
      expect(volume?.configMap?.name).toBe(configMap.metadata.name);

      // The pod's view: the file where TRELLIS_CONFIG says, the Secret's values as variables.
      const file = path.join(folder, `${component}.json`);
      await writeFile(file, configMap.data![mount.subPath!]!);
      const env: Record<string, string> = { TRELLIS_CONFIG: file };
      for (const item of container.env) {
        if (item.name === 'TRELLIS_CONFIG') continue;
        const reference = item.valueFrom?.secretKeyRef;
        const value = reference ? secret.stringData![reference.key] : item.value;
        if (value !== undefined) env[item.name] = value;
      }
      const config = loadConfig({ env, cwd: folder });
      expect(config.Database.Url).toBe(
        'postgres://trellis:lint-only@postgresql.database.svc:5432/trellis',
      );
      expect(config.Temporal).toMatchObject({
        Address: 'temporal-frontend.temporal.svc:7233',
        Namespace: 'default',
        TaskQueue: 'trellis',
      });
      expect(config.Server.Host).toBe('0.0.0.0');
      if (component === 'api') expect(config.Server.Port).toBe(container.ports[0]!.containerPort);
      expect(config.DataDirectory).toBe('/var/lib/trellis');
      expect(config.Security.EncryptionKey).toBe('lint-only-encryption-key');
      expect(config.Security.Basic.Users.map((user) => [user.Name, user.Roles])).toEqual([
        ['ops', ['admin']],
      ]);
    }
  });

  it('scales the workers independently of the api', async () => {
    const scaled = await render('--set', 'worker.replicas=5', '--set', 'api.replicas=1');
    expect(deployment(scaled, 'worker').spec.replicas).toBe(5);
    expect(deployment(scaled, 'api').spec.replicas).toBe(1);
    // A disruption budget only where there is more than one pod to keep.
    expect(
      scaled
        .filter((item) => item.kind === 'PodDisruptionBudget')
        .map((item) => item.metadata.name),
    ).toEqual(['prod-trellis-worker']);
    // Rolling worker upgrades add a new worker before stopping an old one.
    expect(deployment(scaled, 'worker').spec).toMatchObject({
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    });
  });

  it('uses an existing Secret instead of rendering one', async () => {
    const rendered = await render('--set', 'secrets.existingSecret=trellis-credentials');
    expect(rendered.filter((item) => item.kind === 'Secret')).toEqual([]);
    for (const component of ['api', 'worker'] as const) {
      const names = containerOf(rendered, component)
        .env.filter((item) => item.valueFrom)
        .map((item) => item.valueFrom!.secretKeyRef.name);
      expect(new Set(names)).toEqual(new Set(['trellis-credentials']));
      expect(
        deployment(rendered, component).spec.template.metadata.annotations['checksum/secret'],
      ).toBeUndefined();
    }
  });

  it('annotates the pods for Prometheus and adds ServiceMonitors when metrics are on', async () => {
    const rendered = await render(
      '--set',
      'config.Metrics.Enabled=true',
      '--set',
      'metrics.serviceMonitor.enabled=true',
    );
    for (const [component, port] of [
      ['api', '6262'],
      ['worker', '9464'],
    ] as const) {
      expect(deployment(rendered, component).spec.template.metadata.annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': port,
        'prometheus.io/path': '/metrics',
      });
      const monitor = find(rendered, 'ServiceMonitor', `prod-trellis-${component}`);
      expect(monitor.spec).toMatchObject({
        selector: { matchLabels: { 'app.kubernetes.io/component': component } },
        endpoints: [{ path: '/metrics', port: component === 'api' ? 'http' : 'probes' }],
      });
    }
    // The workers' pods get a headless Service for their monitor to find them by.
    const workerService = find(rendered, 'Service', 'prod-trellis-worker-metrics');
    expect(workerService.spec).toMatchObject({
      clusterIP: 'None',
      selector: { 'app.kubernetes.io/component': 'worker' },
    });
    // Off by default: nothing for Prometheus.
    expect(manifests.filter((item) => item.kind === 'ServiceMonitor')).toEqual([]);
    expect(
      deployment(manifests, 'api').spec.template.metadata.annotations['prometheus.io/scrape'],
    ).toBeUndefined();
  });

  it('follows Server.Port and Metrics.WorkerPort of the configuration for ports and probes', async () => {
    const rendered = await render(
      '--set',
      'config.Server.Port=7000',
      '--set',
      'config.Metrics.WorkerPort=9500',
    );
    expect(containerOf(rendered, 'api').ports[0]!.containerPort).toBe(7000);
    expect(containerOf(rendered, 'worker').ports[0]!.containerPort).toBe(9500);
  });

  it('refuses to render without Temporal.Address or the database URL, and refuses credentials in the ConfigMap', async () => {
    expect(await renderError('--set', 'config.Temporal.Address=')).toContain(
      'config.Temporal.Address is required',
    );
    expect(await renderError('--set', 'secrets.databaseUrl=')).toContain(
      'secrets.databaseUrl is required (or secrets.existingSecret)',
    );
    expect(await renderError('--set', 'secrets.encryptionKey=')).toContain(
      'secrets.encryptionKey is required',
    );
    const misplaced = await renderError('--set', 'config.Database.Url=postgres://u:p@h/db');
    expect(misplaced).toContain("at '/config/Database/Url'");
    expect(await renderError('--set', 'worker.replicas=-1')).toContain(
      "at '/worker/replicas': minimum",
    );
  });
});

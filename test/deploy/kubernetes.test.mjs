// deploy/kubernetes/: each manifest validated against the Kubernetes API schema (kubernetes-models
// bundles the OpenAPI schemas, so this runs offline), and its values checked against the origin's
// own configuration: probe paths, ports, grace periods, CPUs per worker.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { readConfig } from '../../server/config.ts';
import { KILL_AFTER_GRACE_MS } from '../../server/process/cluster.ts';
import { ROOT } from '../helpers/origin.mjs';

const DIR = join(ROOT, 'deploy/kubernetes');
/** What `kubectl apply -f deploy/kubernetes/` applies (not recursive), and what a user opts into. */
const SHARED_CACHE = 'shared-cache';
const MODELS = { Deployment, Service, HorizontalPodAutoscaler, Secret, NetworkPolicy };
const manifests = readdirSync(DIR, { recursive: true })
  .filter((name) => name.endsWith('.yaml'))
  .sort()
  .flatMap((name) =>
    parseAllDocuments(readFileSync(join(DIR, name), 'utf8')).map((doc) => ({
      name,
      object: doc.toJS(),
    })),
  );
/** The origin's objects are named ssr-origin; the Valkey's ssr-origin-valkey. */
const find = (kind, name = 'ssr-origin') =>
  manifests.find(({ object }) => object.kind === kind && object.metadata.name === name)?.object;
const VALKEY = 'ssr-origin-valkey';
/** Kubernetes quantities and Valkey sizes in bytes: `384Mi`, `256mb`. */
const bytes = (text) => {
  const [, number, unit] = /^(\d+)([a-zA-Z]*)$/.exec(String(text)) ?? [];
  const units = {
    '': 1,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    kb: 2 ** 10,
    mb: 2 ** 20,
    gb: 2 ** 30,
  };
  assert.ok(number && unit in units, `a size: ${text}`);
  return Number(number) * units[unit];
};

describe('Kubernetes manifests', () => {
  it('are each valid against the Kubernetes API schema', () => {
    assert.deepEqual(
      manifests.map(({ name, object }) => `${name}: ${object.kind} ${object.metadata.name}`),
      [
        'deployment.yaml: Deployment ssr-origin',
        'hpa.yaml: HorizontalPodAutoscaler ssr-origin',
        'service.yaml: Service ssr-origin',
        'shared-cache/secret.example.yaml: Secret ssr-origin',
        'shared-cache/valkey.yaml: Deployment ssr-origin-valkey',
        'shared-cache/valkey.yaml: Service ssr-origin-valkey',
        'shared-cache/valkey.yaml: NetworkPolicy ssr-origin-valkey',
      ],
    );
    for (const { name, object } of manifests) {
      const Model = MODELS[object.kind];
      assert.doesNotThrow(() => new Model(object).validate(), `${name} (${object.kind})`);
    }
  });

  it('rejects what the schema rejects (the validator is not a no-op)', () => {
    const broken = structuredClone(find('Deployment'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    assert.throws(() => new Deployment(broken).validate());
    const noSelector = structuredClone(find('Deployment'));
    delete noSelector.spec.selector;
    assert.throws(() => new Deployment(noSelector).validate());
  });

  it("agrees with the origin's configuration", () => {
    const deployment = find('Deployment');
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    const env = Object.fromEntries(container.env.map(({ name, value }) => [name, value]));
    const port = container.ports.find((p) => p.name === 'http');
    assert.equal(String(port.containerPort), env.PORT);
    assert.match(
      readFileSync(join(ROOT, 'Dockerfile'), 'utf8'),
      new RegExp(`ENV PORT=${env.PORT}\\b[\\s\\S]*EXPOSE ${env.PORT}\\b`),
    );
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    for (const probe of [container.readinessProbe, container.livenessProbe])
      assert.equal(probe.httpGet.port, 'http');
    // Kubernetes runs preStop, then sends SIGTERM, and SIGKILLs the pod
    // terminationGracePeriodSeconds after it began. The origin serves on for its drain window, then
    // has SHUTDOWN_GRACE_MS to drain, and its primary kills a worker still running
    // KILL_AFTER_GRACE_MS later: all of it fits, or Kubernetes cuts what the origin would finish.
    const { drainWindowMs, shutdownGraceMs } = readConfig(env).processes;
    const preStop = container.lifecycle?.preStop;
    const preStopMs = preStop === undefined ? 0 : Number(preStop.exec.command.at(-1)) * 1000;
    assert.ok(
      preStopMs + drainWindowMs + shutdownGraceMs + KILL_AFTER_GRACE_MS <=
        pod.terminationGracePeriodSeconds * 1000,
      `${preStopMs} + ${drainWindowMs} + ${shutdownGraceMs} + ${KILL_AFTER_GRACE_MS} ms`,
    );
    // The drain window keeps the pod serving while its endpoint's removal reaches kube-proxy and
    // the load balancers (a few seconds), as a preStop pause would; both would wait twice.
    assert.equal(preStop, undefined, 'the drain window does what a preStop pause did');
    assert.ok(
      drainWindowMs >= 5000,
      `DRAIN_WINDOW_MS ${drainWindowMs} covers endpoint propagation`,
    );
    // One worker per CPU the pod asks for, and a limit that matches, so no worker is throttled.
    assert.equal(Number(container.resources.requests.cpu), Number(env.WORKERS));
    assert.equal(container.resources.limits.cpu, container.resources.requests.cpu);
    assert.ok(
      env.NG_ALLOWED_HOSTS && env.NG_ALLOWED_HOSTS !== '*',
      'NG_ALLOWED_HOSTS names the public hosts',
    );
    assert.deepEqual(
      deployment.spec.selector.matchLabels,
      deployment.spec.template.metadata.labels,
    );

    const service = find('Service');
    assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
    assert.equal(service.spec.ports[0].targetPort, 'http');

    const hpa = find('HorizontalPodAutoscaler');
    assert.deepEqual(hpa.spec.scaleTargetRef, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    assert.equal(hpa.spec.metrics[0].resource.name, 'cpu');
    assert.ok(hpa.spec.minReplicas >= 2, 'one pod draining leaves another serving');
    assert.equal(
      deployment.spec.replicas,
      undefined,
      'the autoscaler owns the count: a fixed one resets it on every apply',
    );
  });

  it('leaves memory for a recycle, with a MAX_RSS_MB above a worker at its working size', () => {
    const [container] = find('Deployment').spec.template.spec.containers;
    const env = Object.fromEntries(container.env.map(({ name, value }) => [name, value]));
    // Measured (docs/scaling-and-deploying.md#memory-for-a-recycle-max_rss_mb-against-a-container-limit):
    // the primary's RSS, and a worker's under render load with its render cache full.
    const primary = 91 * 2 ** 20;
    const working = 608 * 2 ** 20;
    const workers = Number(env.WORKERS);
    const maxRss = Number(env.MAX_RSS_MB) * 2 ** 20;
    assert.ok(maxRss >= 1.2 * working, 'a healthy worker is never recycled');
    // Replacement first: the primary, the workers and one replacement, with a tenth to spare.
    assert.ok(
      bytes(container.resources.limits.memory) >= (primary + (workers + 1) * maxRss) / 0.9,
      `${container.resources.limits.memory} holds a recycle at MAX_RSS_MB=${env.MAX_RSS_MB}`,
    );
    assert.ok(
      bytes(container.resources.requests.memory) >= primary + workers * working,
      'the request covers the pod at its working size',
    );
  });

  it('has Prometheus scrape the metrics port METRICS_PORT opens, which the Service does not expose', () => {
    const deployment = find('Deployment');
    const [container] = deployment.spec.template.spec.containers;
    const env = Object.fromEntries(container.env.map(({ name, value }) => [name, value]));
    const metrics = container.ports.find((p) => p.name === 'metrics');
    assert.equal(String(metrics.containerPort), env.METRICS_PORT);
    assert.notEqual(env.METRICS_PORT, env.PORT);
    assert.deepEqual(deployment.spec.template.metadata.annotations, {
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': env.METRICS_PORT,
      'prometheus.io/path': '/metrics',
    });
    const service = find('Service');
    assert.ok(
      service.spec.ports.every(
        (p) => p.targetPort !== 'metrics' && p.port !== metrics.containerPort,
      ),
      'metrics stay off the public Service',
    );
  });

  it('trusts X-Forwarded-* only with a proxy in front that sets them', () => {
    const [container] = find('Deployment').spec.template.spec.containers;
    const env = Object.fromEntries(container.env.map(({ name, value }) => [name, value]));
    // No Ingress or proxy ships here: with TRUST_PROXY on, a client could name any host and scheme.
    assert.ok(!find('Ingress'));
    assert.notEqual(env.TRUST_PROXY, 'true');
  });
});

describe('the shared cache in Kubernetes', () => {
  const [origin] = find('Deployment').spec.template.spec.containers;
  const secret = find('Secret');

  it('takes REDIS_URL, REVALIDATE_TOKEN and ASSET_ARCHIVE from the Secret, optional so the origin starts without it', () => {
    for (const name of ['REDIS_URL', 'REVALIDATE_TOKEN', 'ASSET_ARCHIVE']) {
      const variable = origin.env.find((entry) => entry.name === name);
      assert.ok(variable, `${name} is set`);
      assert.equal(variable.value, undefined, `${name} is never written in the manifest`);
      assert.deepEqual(variable.valueFrom, {
        secretKeyRef: { name: secret.metadata.name, key: name, optional: true },
      });
      assert.ok(secret.stringData[name], `the example Secret has ${name}`);
    }
  });

  it('keeps the example Secret and the Valkey out of a plain `kubectl apply -f deploy/kubernetes/`', () => {
    for (const { name, object } of manifests) {
      if (object.kind === 'Secret' || object.metadata.name === VALKEY)
        assert.ok(name.startsWith(`${SHARED_CACHE}/`), `${name} (${object.kind})`);
    }
    // Placeholders, plainly: a value that looks real would be applied and trusted. ASSET_ARCHIVE
    // is a setting kept beside REDIS_URL, which it needs, and the collector's endpoint one beside
    // them: no secrets.
    const {
      ASSET_ARCHIVE: archive,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector,
      ...secrets
    } = secret.stringData;
    for (const value of Object.values(secrets)) assert.match(value, /CHANGE-ME/);
    assert.equal(archive, 'redis');
    assert.match(collector, /^http:\/\/[^/]+:4318$/);
  });

  it('is a configuration the origin starts with, traced or not, one request in ten recorded', () => {
    // The container's env as Kubernetes gives it: the Secret's keys, $(VAR) expanded.
    const envOf = (withSecret) => {
      const env = {};
      for (const { name, value, valueFrom } of origin.env) {
        if (valueFrom?.secretKeyRef) {
          if (withSecret) env[name] = secret.stringData[valueFrom.secretKeyRef.key];
        } else if (valueFrom?.fieldRef) {
          env[name] = 'ssr-origin-5d9c7-x2x7q';
        } else {
          env[name] = value.replace(/\$\((\w+)\)/g, (_, ref) => env[ref] ?? '');
        }
      }
      return env;
    };
    assert.equal(readConfig(envOf(false)).tracing, undefined, 'no endpoint: no tracing');
    const traced = readConfig(envOf(true)).tracing;
    assert.equal(traced.url, `${secret.stringData.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`);
    assert.equal(traced.sampler, 'parentbased_traceidratio');
    assert.equal(traced.ratio, 0.1);
    assert.equal(envOf(true).OTEL_RESOURCE_ATTRIBUTES, 'k8s.pod.name=ssr-origin-5d9c7-x2x7q');
  });

  it("runs a bounded, unpersisted Valkey with probes, limits and the Secret's password", () => {
    const deployment = find('Deployment', VALKEY);
    const [valkey] = deployment.spec.template.spec.containers;
    assert.match(
      valkey.image,
      /^valkey\/valkey:\d+\.\d+/,
      'the official image at a pinned version',
    );
    const args = valkey.args;
    const option = (flag) => {
      const at = args.indexOf(flag);
      assert.ok(at >= 0, `${flag} is set`);
      return args[at + 1];
    };
    assert.equal(option('--maxmemory-policy'), 'allkeys-lru', 'full means evict, never refuse');
    const maxmemory = bytes(option('--maxmemory'));
    const limit = bytes(valkey.resources.limits.memory);
    assert.ok(maxmemory > 0 && maxmemory <= 0.75 * limit, 'room under the limit for buffers');
    assert.equal(option('--save'), '', 'no snapshots');
    assert.equal(option('--appendonly'), 'no', 'no append-only file');
    assert.equal(option('--requirepass'), '$(VALKEY_PASSWORD)');
    const password = valkey.env.find((entry) => entry.name === 'VALKEY_PASSWORD');
    assert.equal(password.valueFrom.secretKeyRef.name, secret.metadata.name);
    assert.ok(secret.stringData[password.valueFrom.secretKeyRef.key]);
    assert.ok(valkey.resources.limits.cpu && valkey.resources.requests.memory);
    assert.ok(valkey.readinessProbe && valkey.livenessProbe, 'readiness and liveness probes');
    assert.equal(deployment.spec.replicas, 1, 'one cache, not several empty ones');

    const service = find('Service', VALKEY);
    assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
    const port = valkey.ports.find((entry) => entry.name === service.spec.ports[0].targetPort);
    assert.ok(port, "the Service's target port is the container's");
    // The example REDIS_URL for this Valkey (in the Secret's comment) names the Service and port.
    assert.match(
      readFileSync(join(DIR, SHARED_CACHE, 'secret.example.yaml'), 'utf8'),
      new RegExp(`REDIS_URL="redis://default:\\$PASSWORD@${VALKEY}:${service.spec.ports[0].port}"`),
    );

    const policy = find('NetworkPolicy', VALKEY);
    assert.deepEqual(policy.spec.podSelector.matchLabels, deployment.spec.template.metadata.labels);
    assert.deepEqual(
      policy.spec.ingress[0].from[0].podSelector.matchLabels,
      find('Deployment').spec.template.metadata.labels,
      "only the origin's pods connect",
    );
  });
});

describe('.dockerignore', () => {
  it('keeps out of the build context every build folder and file .gitignore lists at the root', () => {
    const ignored = (file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#') && !line.startsWith('!'));
    const docker = ignored('.dockerignore');
    // A .dockerignore pattern covers an entry when it is the entry, a folder above it, prefix* or *suffix.
    const covered = (entry) =>
      docker.some(
        (pattern) =>
          pattern === entry ||
          entry.startsWith(`${pattern}/`) ||
          (pattern.endsWith('*') && entry.startsWith(pattern.slice(0, -1))) ||
          (pattern.startsWith('*') && !entry.includes('/') && entry.endsWith(pattern.slice(1))),
      );
    // Root-anchored lines of .gitignore are this repository's own output (the rest are editors' files).
    const rooted = ignored('.gitignore')
      .filter((line) => line.startsWith('/'))
      .map((line) => line.slice(1).replace(/\/\*?$/, ''));
    for (const folder of ['dist', 'dist-test', 'dist-bench', 'node_modules', 'bench/node_modules'])
      assert.ok(rooted.includes(folder), `${folder} is in .gitignore`);
    assert.deepEqual(
      rooted.filter((entry) => !covered(entry)),
      [],
      'in .gitignore, not in .dockerignore',
    );
  });
});

// deploy/kubernetes/: each manifest validated against the Kubernetes API schema (kubernetes-models
// bundles the OpenAPI schemas, so this runs offline), and its values checked against the origin's
// own configuration: probe paths, ports, grace periods, CPUs per worker.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/origin.mjs';

const DIR = join(ROOT, 'deploy/kubernetes');
const MODELS = { Deployment, Service, HorizontalPodAutoscaler };
const manifests = readdirSync(DIR)
  .filter((name) => name.endsWith('.yaml'))
  .flatMap((name) =>
    parseAllDocuments(readFileSync(join(DIR, name), 'utf8')).map((doc) => ({
      name,
      object: doc.toJS(),
    })),
  );
const find = (kind) => manifests.find(({ object }) => object.kind === kind)?.object;

describe('Kubernetes manifests', () => {
  it('are each valid against the Kubernetes API schema', () => {
    assert.deepEqual(manifests.map(({ object }) => object.kind).sort(), [
      'Deployment',
      'HorizontalPodAutoscaler',
      'Service',
    ]);
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
    // Kubernetes waits preStop, then sends SIGTERM; the origin then has SHUTDOWN_GRACE_MS to drain.
    const preStopSeconds = Number(container.lifecycle.preStop.exec.command.at(-1));
    assert.ok(
      pod.terminationGracePeriodSeconds * 1000 >
        Number(env.SHUTDOWN_GRACE_MS) + preStopSeconds * 1000,
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

  it('trusts X-Forwarded-* only with a proxy in front that sets them', () => {
    const [container] = find('Deployment').spec.template.spec.containers;
    const env = Object.fromEntries(container.env.map(({ name, value }) => [name, value]));
    // No Ingress or proxy ships here: with TRUST_PROXY on, a client could name any host and scheme.
    assert.ok(!find('Ingress'));
    assert.notEqual(env.TRUST_PROXY, 'true');
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

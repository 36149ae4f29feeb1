// tests/k8s/validate.mjs -- validates the rendered k8s/ overlays (see tests/k8s/run.sh).
//
//   node validate.mjs --modules DIR --prestop k8s/prestop.sh ENV=RENDERED.yaml...
//
// For every overlay: every object is validated against its Kubernetes JSON schema with the
// npm package kubernetes-models (PrometheusRule and PodMonitor with
// @kubernetes-models/prometheus-operator) and its field names against the models' interfaces
// (unknown fields are errors), then the deploy invariants of docs/architecture.md §4, §5 and §8
// are checked (see checkOverlay). Then a self-test mutates a copy of each overlay once per
// invariant and requires the check to catch it, so no invariant can pass by accident. Exits 0
// when everything holds, 1 otherwise, printing one line per problem and per overlay a summary.
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const argv = process.argv.slice(2);
let modulesDir = null;
let prestopPath = null;
const overlays = [];
for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--modules') modulesDir = argv[++i];
    else if (argv[i] === '--prestop') prestopPath = argv[++i];
    else if (/^[a-z0-9-]+=/.test(argv[i])) {
        const at = argv[i].indexOf('=');
        overlays.push({ env: argv[i].slice(0, at), file: argv[i].slice(at + 1) });
    } else {
        console.error(`validate.mjs: unknown argument '${argv[i]}'`);
        process.exit(2);
    }
}
if (!modulesDir || !prestopPath || overlays.length === 0) {
    console.error('usage: node validate.mjs --modules DIR --prestop FILE ENV=RENDERED.yaml...');
    process.exit(2);
}
const require = createRequire(path.join(path.resolve(modulesDir), 'node_modules', 'x.js'));
const YAML = require('yaml');

// The drain bound of each engine (docs/architecture.md §4); an environment may only shorten it.
const MAX_BOUNDS = { traditional: 600, holdem: 600, persistent: 120, zhajinhua: 600 };
const ENGINE_MARGIN_S = 60; // void, flush, deregister, release after the bound
const GATE_MARGIN_S = 15;
const DIRECTOR_MARGIN_S = 60; // the same rule as the engines: grace >= bound + 60 s
const FAILOVER_MARGIN_MS = 2000; // a lease or claim outlasts Sentinel's DOWN_AFTER_MS (or the
// cluster's NODE_TIMEOUT_MS) by this
const ALERT_DELAY_S = 20; // a 10 s scrape plus a 10 s rule evaluation
const VERSIONS_ALIVE = 2;

// ---- schema validation ---------------------------------------------------------------------

const MODEL_MODULES = {
    'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
};
function modelFor(apiVersion, kind) {
    const mod = MODEL_MODULES[apiVersion] ?? `kubernetes-models/${apiVersion}`;
    let m;
    try {
        m = require(mod);
    } catch (e) {
        return null;
    }
    return typeof m[kind] === 'function' ? m[kind] : null;
}

function validateSchema(obj) {
    const Model = modelFor(obj.apiVersion, obj.kind);
    if (!Model) return [`no schema model for ${obj.apiVersion} ${obj.kind}`];
    try {
        new Model(obj).validate();
    } catch (e) {
        return [`schema: ${e.message}`];
    }
    return unknownFields(obj).map((e) => `schema: ${e}`);
}

// ---- unknown fields ---------------------------------------------------------------------------
// The models' JSON schemas accept unknown fields (a typo like `maxUnavialable` would pass), so the
// field names of every core object are also checked against the models' TypeScript interfaces
// (their .d.ts files list each field of each type).

function loadFieldTable() {
    const table = {};
    const kinds = {};
    const walk = (dir) => {
        for (const ent of readdirSync(dir, { withFileTypes: true })) {
            const p = path.join(dir, ent.name);
            if (ent.isDirectory()) walk(p);
            else if (ent.name.endsWith('.d.ts')) {
                const text = readFileSync(p, 'utf8');
                const local = {};
                for (const m of text.matchAll(/^export interface (\w+)[^{\n]*\{\n([\s\S]*?)^\}/gm)) {
                    // A field starts at 4 spaces of indent and may go on over several lines
                    // (`{ [key: string]: string; }` maps); comments start with "/**".
                    const fields = {};
                    let cur = null;
                    for (const line of m[2].split('\n')) {
                        const f = /^ {4}"([^"]+)"\??: (.*)$/.exec(line);
                        if (f) fields[(cur = f[1])] = f[2];
                        else if (cur && /^ {4}[}\]]/.test(line)) {
                            fields[cur] += ` ${line.trim()}`; // the end of a multi-line type
                            cur = null;
                        } else if (/^ {4}\S/.test(line)) cur = null;
                        else if (cur) fields[cur] += ` ${line.trim()}`;
                    }
                    for (const k of Object.keys(fields)) fields[k] = fields[k].replace(/\/\*\*[\s\S]*?\*\//g, '').replace(/\s+/g, ' ').trim().replace(/;$/, '');
                    local[m[1]] = fields;
                }
                for (const a of text.matchAll(/^export \{ (\w+) as (\w+)/gm)) {
                    if (!local[a[1]]) continue;
                    table[a[2]] = local[a[1]];
                    const av = /^"(.+)"$/.exec(local[a[1]].apiVersion ?? '');
                    const kd = /^"(.+)"$/.exec(local[a[1]].kind ?? '');
                    if (av && kd) kinds[`${av[1]} ${kd[1]}`] = a[2];
                }
            }
        }
    };
    for (const pkg of ['kubernetes-models', '@kubernetes-models/apimachinery'])
        walk(path.dirname(require.resolve(`${pkg}/package.json`)));
    return { table, kinds };
}
let FIELDS = null;

// The fields of an inline object type `{ "a"?: T; "b": U }` (comments already removed).
function inlineFields(type) {
    const fields = {};
    let depth = 0, start = 1;
    const body = type.slice(0, type.lastIndexOf('}') + 1);
    for (let i = 1; i < body.length; i++) {
        const ch = body[i];
        if (ch === '{' || ch === '<' || ch === '(') depth++;
        else if (ch === '}' || ch === '>' || ch === ')') depth--;
        if ((ch === ';' && depth === 0) || (depth < 0)) {
            const f = /^\s*"([^"]+)"\??: ([\s\S]+)$/.exec(body.slice(start, i));
            if (f) fields[f[1]] = f[2].trim();
            start = i + 1;
            if (depth < 0) break;
        }
    }
    return fields;
}

function checkFields(value, type, where, errs) {
    type = type.trim();
    let m;
    if ((m = /^Array<(.+)>$/.exec(type))) {
        if (Array.isArray(value)) value.forEach((v, i) => checkFields(v, m[1], `${where}[${i}]`, errs));
    } else if ((m = /^\{\s*\[key: string\]: (.+?);?\s*\}$/.exec(type))) {
        if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) checkFields(v, m[1], `${where}.${k}`, errs);
    } else if ((FIELDS.table[type] || type.startsWith('{ "')) && value && typeof value === 'object' && !Array.isArray(value)) {
        const fields = FIELDS.table[type] ?? inlineFields(type);
        for (const [k, v] of Object.entries(value)) {
            if (!(k in fields)) errs.push(`unknown field ${where}.${k}`);
            else checkFields(v, fields[k], `${where}.${k}`, errs);
        }
    }
}

function unknownFields(obj) {
    FIELDS ??= loadFieldTable();
    const type = FIELDS.kinds[`${obj.apiVersion} ${obj.kind}`];
    const errs = [];
    if (!type) {
        // CRDs: the prometheus-operator model checks types; the rule fields are checked here.
        if (obj.kind === 'PrometheusRule')
            (obj.spec?.groups ?? []).forEach((g, i) => {
                for (const k of Object.keys(g))
                    if (!['name', 'interval', 'rules', 'limit', 'partial_response_strategy'].includes(k))
                        errs.push(`unknown field spec.groups[${i}].${k}`);
                (g.rules ?? []).forEach((r, j) => {
                    for (const k of Object.keys(r))
                        if (!['alert', 'record', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations'].includes(k))
                            errs.push(`unknown field spec.groups[${i}].rules[${j}].${k}`);
                });
            });
        return errs;
    }
    checkFields(obj, type, '', errs);
    return errs.map((e) => e.replace('field .', 'field '));
}

// ---- invariants ----------------------------------------------------------------------------

const serviceLinkPrefix = (name) => name.toUpperCase().replace(/-/g, '_');
const num = (s) => (/^[0-9]+$/.test(String(s)) ? Number(s) : NaN);

// The value of a "$(VAR)" reference in args: the container's env, or a Service link variable.
function envOf(container) {
    const env = {};
    for (const e of container.env ?? []) {
        env[e.name] = e.value !== undefined ? e.value : e.valueFrom ? { from: e.valueFrom } : '';
    }
    return env;
}

function argValue(args, flag) {
    const hits = args.filter((a) => a.startsWith(`--${flag}=`));
    return hits.length === 1 ? hits[0].slice(flag.length + 3) : undefined;
}

/*
 * Checks one rendered overlay; returns a list of "object: problem" strings (empty = all good)
 * and fills `facts` with what was checked (bounds, graces, pools) for the summary.
 */
function checkOverlay(objs, prestopText, facts) {
    const errs = [];
    const err = (o, msg) => errs.push(`${o.kind}/${o.metadata?.name}: ${msg}`);
    const byKind = (k) => objs.filter((o) => o.kind === k);
    const services = byKind('Service');
    const configMaps = byKind('ConfigMap');
    const secrets = byKind('Secret');
    const namespaces = byKind('Namespace').map((n) => n.metadata.name);
    if (namespaces.length !== 1) errs.push(`overlay: expected one Namespace, found ${namespaces.length}`);
    const ns = namespaces[0];

    for (const o of objs) {
        if (o.kind !== 'Namespace' && o.metadata?.namespace !== ns)
            err(o, `namespace '${o.metadata?.namespace}' is not the overlay's '${ns}'`);
    }

    // Redis never evicts (lease keys, wallets) and its memory cap fits its container.
    for (const s of byKind('StatefulSet').filter((x) => ['croupier-redis', 'croupier-redis-cluster'].includes(x.metadata.name))) {
        const c = s.spec.template.spec.containers[0];
        const args = c.args ?? [];
        const i = args.indexOf('--maxmemory-policy');
        if (i < 0 || args[i + 1] !== 'noeviction') err(s, 'Redis must run with --maxmemory-policy noeviction');
        const mm = /^([0-9]+)(mb|gb)$/.exec(envOf(c).REDIS_MAXMEMORY ?? '');
        const lim = /^([0-9]+)(Mi|Gi)$/.exec(c.resources?.limits?.memory ?? '');
        if (!mm || !lim) err(s, 'REDIS_MAXMEMORY (NNmb|NNgb) and a memory limit (NNMi|NNGi) are required');
        else {
            const mib = (v, u) => Number(v) * (u === 'gb' || u === 'Gi' ? 1024 : 1);
            if (mib(mm[1], mm[2]) >= mib(lim[1], lim[2]))
                err(s, `maxmemory ${mm[0]} must stay below the memory limit ${lim[0]}`);
        }
    }
    const statefulSets = byKind('StatefulSet');
    const redisSet = statefulSets.find((x) => x.metadata.name === 'croupier-redis');
    const sentinelSet = statefulSets.find((x) => x.metadata.name === 'croupier-sentinel');
    const clusterSet = statefulSets.find((x) => x.metadata.name === 'croupier-redis-cluster');
    if (clusterSet) {
        if (statefulSets.length !== 1)
            errs.push('overlay: a Redis Cluster overlay runs the croupier-redis-cluster StatefulSet only (no croupier-redis, no sentinels)');
    } else if (!redisSet || statefulSets.length !== (sentinelSet ? 2 : 1))
        errs.push('overlay: expected the Redis StatefulSet (and, with replicas, the croupier-sentinel one) only');

    // Redis Cluster (docs/deploy.md "Redis Cluster on Kubernetes"): every node behind a Service
    // of its own (the seeds, IP literals from link variables), masters >= 3 each with the same
    // number of replicas, the Job that forms it naming every node, cluster-node-timeout from
    // NODE_TIMEOUT_MS.
    const cl = clusterSet ? { links: [], nodes: clusterSet.spec.replicas ?? 1, perMaster: NaN, nodeTimeout: NaN } : null;
    if (cl) {
        const cc = clusterSet.spec.template.spec.containers[0];
        const cargs = cc.args ?? [];
        const nt = cargs.indexOf('--cluster-node-timeout');
        cl.nodeTimeout = num(envOf(cc).NODE_TIMEOUT_MS);
        if (nt < 0 || cargs[nt + 1] !== '$(NODE_TIMEOUT_MS)' || !(cl.nodeTimeout > 0))
            err(clusterSet, 'args must hold --cluster-node-timeout $(NODE_TIMEOUT_MS), NODE_TIMEOUT_MS a positive integer');
        // A master hands its slots to a replica before it stops, inside the grace period.
        const pre = cc.lifecycle?.preStop?.exec?.command ?? [];
        const fw = num(envOf(cc).FAILOVER_WAIT_S ?? '15');
        if (!pre.some((a) => a.endsWith('/redis-cluster-prestop.sh')))
            err(clusterSet, 'preStop must run redis-cluster-prestop.sh (a master hands its slots over before it stops)');
        else if (!(clusterSet.spec.template.spec.terminationGracePeriodSeconds >= fw + 30))
            err(clusterSet, `terminationGracePeriodSeconds must be >= FAILOVER_WAIT_S ${fw} + 30 (the handover, then the AOF flush)`);
        const hl = services.find((x) => x.metadata.name === clusterSet.spec.serviceName);
        if (!hl || hl.spec.clusterIP !== 'None' || hl.spec.publishNotReadyAddresses !== true)
            err(clusterSet, `its governing Service ${clusterSet.spec.serviceName} must be headless and publish not-ready pods (the Job and the start script resolve the names before the cluster is ok)`);
        const jobs = byKind('Job').filter((x) => x.metadata.name === 'croupier-redis-cluster-create');
        if (jobs.length !== 1) err(clusterSet, 'the Job croupier-redis-cluster-create (it forms the cluster) is required');
        else {
            const jenv = envOf(jobs[0].spec.template.spec.containers[0]);
            cl.perMaster = num(jenv.REPLICAS_PER_MASTER);
            const want = [...Array(cl.nodes).keys()].map((i) => `${clusterSet.metadata.name}-${i}.${clusterSet.spec.serviceName}:6379`);
            const got = String(jenv.NODES ?? '').trim().split(/\s+/);
            if (got.length !== want.length || !want.every((w) => got.includes(w)))
                err(jobs[0], `NODES must list every node of the StatefulSet: ${want.join(' ')}`);
        }
        if (!(cl.perMaster >= 1) || cl.nodes % (cl.perMaster + 1) !== 0 || cl.nodes / (cl.perMaster + 1) < 3)
            err(clusterSet, `${cl.nodes} nodes with REPLICAS_PER_MASTER ${cl.perMaster}: a cluster needs 3 masters or more, each with as many replicas (>= 1)`);
        for (let i = 0; i < cl.nodes; i++) {
            const pod = `${clusterSet.metadata.name}-${i}`;
            const svc = services.find((x) => x.spec.selector?.['statefulset.kubernetes.io/pod-name'] === pod);
            if (!svc || svc.spec.clusterIP === 'None' || svc.spec.publishNotReadyAddresses !== true)
                err(clusterSet, `node ${pod} needs a Service of its own (selector statefulset.kubernetes.io/pod-name, a ClusterIP, publishNotReadyAddresses)`);
            else {
                const v = serviceLinkPrefix(svc.metadata.name);
                cl.links.push(`$(${v}_SERVICE_HOST):$(${v}_SERVICE_PORT)`);
            }
        }
    }
    facts.cluster = cl;

    // Redis with replicas and Sentinels (docs/deploy.md "Redis Sentinel in Kubernetes"): three
    // sentinels, each behind a Service of its own whose link variables the croupier pods read;
    // at least a master and two replicas, so that --redis-min-replicas 1 survives any one loss.
    const ha = { links: null, master: null, downAfter: NaN, replicas: redisSet?.spec.replicas ?? 1 };
    if (sentinelSet) {
        const sc = sentinelSet.spec.template.spec.containers[0];
        const senv = envOf(sc);
        const n = sentinelSet.spec.replicas ?? 1;
        if (n !== 3) err(sentinelSet, `expected 3 sentinels (quorum 2), found ${n}`);
        if (!(ha.replicas >= 3)) err(redisSet, `Redis with Sentinels needs a master and 2 replicas (replicas >= 3), found ${ha.replicas}`);
        ha.master = senv.MASTER_NAME;
        ha.downAfter = num(senv.DOWN_AFTER_MS);
        if (!ha.master) err(sentinelSet, 'MASTER_NAME (the monitored master) is required');
        if (!(ha.downAfter > 0)) err(sentinelSet, 'DOWN_AFTER_MS must be a positive integer');
        const rmaster = redisSet && envOf(redisSet.spec.template.spec.containers[0]).MASTER_NAME;
        if (redisSet && rmaster !== ha.master) err(redisSet, `MASTER_NAME '${rmaster}' is not the sentinels' '${ha.master}'`);
        ha.links = [];
        for (let i = 0; i < n; i++) {
            const pod = `croupier-sentinel-${i}`;
            const svc = services.find((x) => x.spec.selector?.['statefulset.kubernetes.io/pod-name'] === pod);
            if (!svc) err(sentinelSet, `sentinel ${pod} needs a Service of its own (selector statefulset.kubernetes.io/pod-name)`);
            else {
                const v = serviceLinkPrefix(svc.metadata.name);
                ha.links.push(`$(${v}_SERVICE_HOST):$(${v}_SERVICE_PORT)`);
            }
        }
    }
    facts.ha = sentinelSet ? ha : null;

    const deployments = byKind('Deployment');
    const engines = {};
    let gates = 0;
    const directors = [];
    for (const d of deployments) {
        const ru = d.spec.strategy?.rollingUpdate;
        if (d.spec.strategy?.type !== 'RollingUpdate' || ru?.maxSurge !== 1 || ru?.maxUnavailable !== 0)
            err(d, 'strategy must be RollingUpdate with maxSurge 1 and maxUnavailable 0');
        const pod = d.spec.template.spec;
        const component = d.spec.template.metadata?.labels?.['app.kubernetes.io/component'];
        const c = pod.containers.find((x) => x.name === component);
        if (!c) {
            err(d, `no container named after its component '${component}'`);
            continue;
        }
        const env = envOf(c);
        const args = c.args ?? [];

        // Every $(VAR) in args resolves: the container's env or a Service link of this overlay.
        const links = new Set();
        if (pod.enableServiceLinks !== false)
            for (const s of services) {
                links.add(`${serviceLinkPrefix(s.metadata.name)}_SERVICE_HOST`);
                links.add(`${serviceLinkPrefix(s.metadata.name)}_SERVICE_PORT`);
            }
        for (const a of args)
            for (const m of a.matchAll(/\$\(([A-Za-z0-9_]+)\)/g))
                if (!(m[1] in env) && !links.has(m[1])) err(d, `args reference $(${m[1]}), which nothing defines`);
        // One Redis mode per process: --redis-cluster excludes --redis and the sentinel flags.
        const has = (flag) => args.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
        if (has('redis-cluster') && ['redis', 'redis-sentinels', 'redis-master'].some(has))
            err(d, 'carries --redis-cluster and --redis/--redis-sentinels/--redis-master: the modes exclude each other');
        if (cl) {
            const got = (argValue(args, 'redis-cluster') ?? '').split(',');
            if (got.length !== cl.links.length || !cl.links.every((l) => got.includes(l)))
                err(d, `--redis-cluster must list every node's Service: ${cl.links.join(',')}`);
            // The process refuses to start while slots are unserved: an init container waits.
            const w = (pod.initContainers ?? []).find((x) => envOf(x).SEEDS !== undefined);
            if (!w || envOf(w).SEEDS !== argValue(args, 'redis-cluster'))
                err(d, 'an init container must wait for the cluster (cluster-wait.sh, SEEDS = the --redis-cluster list)');
        } else {
            if (!/^\$\(([A-Z0-9_]+)_SERVICE_HOST\):\$\(\1_SERVICE_PORT\)$/.test(argValue(args, 'redis') ?? ''))
                err(d, '--redis must be $(<REDIS SERVICE>_SERVICE_HOST):$(<REDIS SERVICE>_SERVICE_PORT)');
            if (has('redis-cluster')) err(d, '--redis-cluster without the croupier-redis-cluster StatefulSet in the overlay');
        }
        if (ha.links) {
            const list = argValue(args, 'redis-sentinels') ?? '';
            const got = list.split(',');
            if (got.length !== ha.links.length || !ha.links.every((l) => got.includes(l)))
                err(d, `--redis-sentinels must list every sentinel's Service: ${ha.links.join(',')}`);
            if (argValue(args, 'redis-master') !== ha.master)
                err(d, `--redis-master must be the sentinels' master '${ha.master}'`);
        } else if (argValue(args, 'redis-sentinels') !== undefined)
            err(d, '--redis-sentinels without the croupier-sentinel StatefulSet in the overlay');

        // Health port: the named port, HEALTH_PORT (preStop) and --health-listen agree.
        const hp = (c.ports ?? []).find((p) => p.name === 'health');
        const port = num(env.HEALTH_PORT);
        if (!hp || hp.containerPort !== port) err(d, `containerPort 'health' must equal HEALTH_PORT (${env.HEALTH_PORT})`);
        if (argValue(args, 'health-listen') !== '0.0.0.0:$(HEALTH_PORT)')
            err(d, '--health-listen must be 0.0.0.0:$(HEALTH_PORT)');
        const probeOk = (p, pathWanted) =>
            p?.httpGet && p.httpGet.path === pathWanted && (p.httpGet.port === 'health' || p.httpGet.port === port) &&
            !p.exec && !p.tcpSocket && !p.grpc;
        if (!probeOk(c.livenessProbe, '/healthz'))
            err(d, 'livenessProbe must be an HTTP GET of /healthz on the health port (it never checks Redis)');
        if (!probeOk(c.readinessProbe, '/readyz')) err(d, 'readinessProbe must GET /readyz on the health port');
        if (!probeOk(c.startupProbe, '/healthz')) err(d, 'startupProbe must GET /healthz on the health port');
        for (const k of ['cpu', 'memory'])
            if (!c.resources?.requests?.[k]) err(d, `resources.requests.${k} is required`);
        if (!c.resources?.limits?.memory) err(d, 'resources.limits.memory is required');

        // preStop: the real k8s/prestop.sh, from a ConfigMap of this overlay, byte for byte.
        const cmd = c.lifecycle?.preStop?.exec?.command ?? [];
        const script = cmd.length === 2 && cmd[0] === '/bin/sh' ? cmd[1] : null;
        const mount = script && (c.volumeMounts ?? []).find((m) => script === `${m.mountPath}/${path.basename(script)}`);
        const vol = mount && (pod.volumes ?? []).find((v) => v.name === mount.name);
        const cm = vol?.configMap && configMaps.find((x) => x.metadata.name === vol.configMap.name);
        if (!cm) err(d, 'preStop must run /bin/sh <mount>/prestop.sh from a ConfigMap volume of this overlay');
        else if (cm.data?.[path.basename(script)] !== prestopText)
            err(d, `ConfigMap ${cm.metadata.name} does not hold k8s/prestop.sh byte for byte`);
        for (const v of pod.volumes ?? []) {
            if (v.configMap && !configMaps.some((x) => x.metadata.name === v.configMap.name))
                err(d, `volume ${v.name}: ConfigMap ${v.configMap.name} is not in the overlay`);
            const external = (d.metadata.annotations?.['croupier.dev/external-secrets'] ?? '').split(',');
            if (v.secret && !secrets.some((x) => x.metadata.name === v.secret.secretName) &&
                !external.includes(v.secret.secretName))
                err(d, `volume ${v.name}: Secret ${v.secret.secretName} is neither in the overlay nor declared external`);
        }

        const bound = num(env.DRAIN_MAX_SECONDS);
        const grace = pod.terminationGracePeriodSeconds;
        if (!(bound > 0)) err(d, `DRAIN_MAX_SECONDS '${env.DRAIN_MAX_SECONDS}' must be a positive integer`);
        const replicas = d.spec.replicas ?? 1;

        if (component === 'game') {
            const engine = env.ENGINE;
            if (!(engine in MAX_BOUNDS)) {
                err(d, `ENGINE '${engine}' is not ${Object.keys(MAX_BOUNDS).join('|')}`);
                continue;
            }
            if (engines[engine]) err(d, `a second Deployment for engine ${engine}`);
            if (d.spec.template.metadata.labels.engine !== engine) err(d, `pod label engine must be '${engine}'`);
            for (const [flag, want] of [
                ['engine', '$(ENGINE)'], ['listen', '0.0.0.0:7000'], ['advertise', '$(POD_IP):7000'],
                ['service', '$(ENGINE)'], ['lease-pool-size', '$(LEASE_POOL_SIZE)'],
                ['drain-max-seconds', '$(DRAIN_MAX_SECONDS)'], ['workers', '$(WORKERS)']]) {
                if (argValue(args, flag) !== want) err(d, `args must hold --${flag}=${want} (docs/architecture.md §8)`);
            }
            // croupier-ctl drain reaches POST /admin/drain only with an admin secret (docs/ops.md):
            // a file of a Secret volume of its own, readable by the pod's group.
            const asf = argValue(args, 'admin-secret-file') ?? '';
            const am = (c.volumeMounts ?? []).find((m) => asf.startsWith(`${m.mountPath}/`));
            const av = am && (pod.volumes ?? []).find((v) => v.name === am.name)?.secret;
            if (!av) err(d, '--admin-secret-file must point into a Secret volume (docs/ops.md, "drain")');
            else {
                facts.adminSecrets = [...(facts.adminSecrets ?? []), av.secretName];
                if (pod.securityContext?.fsGroup === undefined || ((av.defaultMode ?? 420) & 0o040) === 0)
                    err(d, `the admin Secret ${av.secretName} must be group-readable with an fsGroup (the process runs as ${pod.securityContext?.runAsUser})`);
            }
            if (env.POD_IP?.from?.fieldRef?.fieldPath !== 'status.podIP')
                err(d, 'POD_IP must come from the downward API (status.podIP)');
            if (bound > MAX_BOUNDS[engine])
                err(d, `drain bound ${bound} s exceeds the design's ${MAX_BOUNDS[engine]} s for ${engine}`);
            if (!(grace >= bound + ENGINE_MARGIN_S))
                err(d, `terminationGracePeriodSeconds ${grace} must be >= drain bound ${bound} + ${ENGINE_MARGIN_S}`);
            const pool = num(env.LEASE_POOL_SIZE);
            const need = VERSIONS_ALIVE * (replicas + ru.maxSurge) * 2;
            if (!(pool >= need))
                err(d, `LEASE_POOL_SIZE ${env.LEASE_POOL_SIZE} < ${VERSIONS_ALIVE} versions x (${replicas} replicas + maxSurge ${ru.maxSurge}) x 2 = ${need}`);
            if (!(num(env.WORKERS) >= 1)) err(d, 'WORKERS must be a positive integer');
            if (ha.links) {
                // Money must reach every replica: Sentinel may promote any of them (docs/deploy.md
                // "Failover and durability", Sizing).
                const mr = num(argValue(args, 'redis-min-replicas') ?? '1');
                if (mr !== ha.replicas - 1)
                    err(d, `--redis-min-replicas ${mr} must be every replica: ${ha.replicas - 1} (Redis nodes ${ha.replicas} minus the master)`);
                const ttl = num(argValue(args, 'lease-ttl-ms') ?? '6000');
                if (!(ttl >= ha.downAfter + FAILOVER_MARGIN_MS))
                    err(d, `--lease-ttl-ms ${ttl} must stay above the sentinels' DOWN_AFTER_MS ${ha.downAfter} + 2000 (the failover)`);
            }
            if (cl) {
                // One replica per master: a failover leaves the promoted master without any, so
                // WAIT for as many replicas as a master has would start no round until the lost
                // node is back (docs/deploy.md "The binaries on a cluster", Durability).
                const mrArg = argValue(args, 'redis-min-replicas') ?? '-1';
                const mr = mrArg === '-1' ? 0 : num(mrArg); // -1: the default, 0 on a cluster
                if (!(mr >= 0 && mr <= cl.perMaster - 1))
                    err(d, `--redis-min-replicas ${mr} must stay below the replicas of a master (${cl.perMaster}): a failover leaves one fewer`);
                const ttl = num(argValue(args, 'lease-ttl-ms') ?? '6000');
                if (!(ttl >= cl.nodeTimeout + FAILOVER_MARGIN_MS))
                    err(d, `--lease-ttl-ms ${ttl} must stay above the cluster's NODE_TIMEOUT_MS ${cl.nodeTimeout} + ${FAILOVER_MARGIN_MS} (the failover)`);
            }
            engines[engine] = { d, bound, grace, pool, replicas, need };
        } else if (component === 'gate') {
            gates++;
            const w = num(env.DRAIN_WINDOW_MS);
            const cl = num(env.CLOSE_TIMEOUT_MS);
            if (argValue(args, 'drain-window-ms') !== '$(DRAIN_WINDOW_MS)' ||
                argValue(args, 'close-timeout-ms') !== '$(CLOSE_TIMEOUT_MS)' || argValue(args, 'listen') === undefined)
                err(d, 'args must hold --listen, --drain-window-ms=$(DRAIN_WINDOW_MS), --close-timeout-ms=$(CLOSE_TIMEOUT_MS)');
            const tsf = argValue(args, 'token-secret-file') ?? '';
            const tm = (c.volumeMounts ?? []).find((m) => tsf.startsWith(`${m.mountPath}/`));
            const tv = tm && (pod.volumes ?? []).find((v) => v.name === tm.name)?.secret;
            if (!tv) err(d, '--token-secret-file must point into a Secret volume');
            else facts.tokenSecret = tv.secretName;
            if (!(bound * 1000 >= w + cl))
                err(d, `DRAIN_MAX_SECONDS ${bound} must cover drain window ${w} ms + close timeout ${cl} ms`);
            // Edge limits (docs/gateway.md "Edge limits"): the connection cap fits the memory
            // limit at 4 KiB a connection (an idle one costs 2-2.5 KB), and no per-address cap
            // where the gateway sees a proxy's address instead of the players'.
            const maxConns = num(env.MAX_CONNS);
            const memLim = /^([0-9]+)(Mi|Gi)$/.exec(c.resources?.limits?.memory ?? '');
            if (argValue(args, 'max-conns') !== '$(MAX_CONNS)' || !(maxConns >= 1))
                err(d, 'args must hold --max-conns=$(MAX_CONNS) with MAX_CONNS a positive integer');
            else if (memLim && maxConns * 4 > Number(memLim[1]) * (memLim[2] === 'Gi' ? 1024 * 1024 : 1024))
                err(d, `MAX_CONNS ${maxConns} x 4 KiB does not fit the memory limit ${memLim[0]}`);
            const pa = argValue(args, 'max-conns-per-addr') ?? '0';
            const paVar = /^\$\(([A-Z0-9_]+)\)$/.exec(pa);
            const perAddr = num(paVar ? env[paVar[1]] : pa);
            const gsvc = services.find((x) => x.spec?.selector?.['app.kubernetes.io/name'] === 'croupier-gate');
            const seesPlayers = gsvc && gsvc.spec.type === 'LoadBalancer' && gsvc.spec.externalTrafficPolicy === 'Local';
            if (Number.isNaN(perAddr))
                err(d, `--max-conns-per-addr must be a number or a $(VAR) of one, not '${pa}'`);
            else if (perAddr !== 0 && !seesPlayers)
                err(d, `--max-conns-per-addr ${perAddr}: the gateway's Service (${gsvc?.spec?.type ?? 'none'}) hides players' addresses behind a proxy; only a LoadBalancer with externalTrafficPolicy Local shows them`);
            const need = bound + Math.ceil((w + cl) / 1000) + GATE_MARGIN_S;
            if (!(grace >= need)) err(d, `terminationGracePeriodSeconds ${grace} must be >= ${need} (preStop + window + close + ${GATE_MARGIN_S})`);
            facts.gate = { bound, grace, replicas };
        } else if (component === 'director') {
            // The tournament director (docs/tournaments.md "The director", docs/deploy.md "The
            // tournament director"): the drain shell's contract, like a game server's.
            for (const [flag, want] of [
                ['drain-max-seconds', '$(DRAIN_MAX_SECONDS)'], ['director-id', '$(POD_NAME)'],
                ['claim-ttl-ms', '$(CLAIM_TTL_MS)']]) {
                if (argValue(args, flag) !== want) err(d, `args must hold --${flag}=${want} (docs/deploy.md "The tournament director")`);
            }
            if (env.POD_NAME?.from?.fieldRef?.fieldPath !== 'metadata.name')
                err(d, 'POD_NAME must come from the downward API (metadata.name): a tournament\'s owner_id names its pod');
            if (!(grace >= bound + DIRECTOR_MARGIN_S))
                err(d, `terminationGracePeriodSeconds ${grace} must be >= drain bound ${bound} + ${DIRECTOR_MARGIN_S}`);
            const claimTtl = num(env.CLAIM_TTL_MS);
            if (!(claimTtl >= 30)) err(d, `CLAIM_TTL_MS '${env.CLAIM_TTL_MS}' must be an integer >= 30`);
            else if (ha.links && !(claimTtl >= ha.downAfter + FAILOVER_MARGIN_MS))
                err(d, `CLAIM_TTL_MS ${claimTtl} must stay above the sentinels' DOWN_AFTER_MS ${ha.downAfter} + ${FAILOVER_MARGIN_MS} (the failover)`);
            else if (cl && !(claimTtl >= cl.nodeTimeout + FAILOVER_MARGIN_MS))
                err(d, `CLAIM_TTL_MS ${claimTtl} must stay above the cluster's NODE_TIMEOUT_MS ${cl.nodeTimeout} + ${FAILOVER_MARGIN_MS} (the failover)`);
            directors.push({ d, bound, grace, replicas, claimTtl });
        } else err(d, `unexpected component '${component}'`);
    }
    if (gates !== 1) errs.push(`overlay: expected one gateway Deployment, found ${gates}`);
    if (directors.length !== 1) errs.push(`overlay: expected one tournament director Deployment, found ${directors.length}`);
    // A player token must never be an admin token: the two secrets are different Secrets.
    if (facts.tokenSecret && (facts.adminSecrets ?? []).includes(facts.tokenSecret))
        errs.push(`overlay: the game servers' admin secret is the gateways' token Secret ${facts.tokenSecret} (docs/ops.md: a Secret of its own)`);
    for (const e of Object.keys(MAX_BOUNDS)) if (!engines[e]) errs.push(`overlay: no Deployment for engine ${e}`);

    // Headless Service per engine (registry routing uses pod IPs); the gateway's is not headless.
    for (const [e, x] of Object.entries(engines)) {
        const sel = x.d.spec.selector.matchLabels;
        const matches = (lbls) => lbls && Object.entries(lbls).every(([k, v]) => sel[k] === v) &&
            Object.keys(lbls).length === Object.keys(sel).length;
        const svc = services.find((s) => matches(s.spec.selector));
        if (!svc || svc.spec.clusterIP !== 'None') err(x.d, `engine ${e} needs a headless Service selecting its pods`);
        if (!byKind('PodDisruptionBudget').some((p) => matches(p.spec.selector.matchLabels)))
            err(x.d, `engine ${e} needs a PodDisruptionBudget`);
    }

    // Alerts: per engine, thresholds from its own bound, grace and pool; all before SIGKILL.
    const rules = byKind('PrometheusRule');
    for (const [e, x] of Object.entries(engines)) {
        const pr = rules.filter((r) => r.spec.groups.some((g) => g.rules.some((rl) => rl.expr.includes(`engine="${e}"`))));
        if (pr.length !== 1) {
            err(x.d, `expected one PrometheusRule for engine ${e}, found ${pr.length}`);
            continue;
        }
        const all = pr[0].spec.groups.flatMap((g) => g.rules.map((r) => ({ ...r, interval: g.interval })));
        const get = (name) => all.find((r) => r.alert === name);
        const forS = (r) => {
            const m = /^([0-9]+)(s|m)$/.exec(r.for ?? '0s');
            return m ? Number(m[1]) * (m[2] === 'm' ? 60 : 1) : NaN;
        };
        for (const r of all) {
            if (!r.expr.includes(`namespace="${ns}",engine="${e}"`))
                err(pr[0], `${r.alert}: expression must select namespace="${ns}",engine="${e}"`);
            if (r.interval !== '10s') err(pr[0], `${r.alert}: group interval must be 10s`);
        }
        const ob = get('CroupierDrainOverBound');
        const obm = ob && / > ([0-9.]+)$/.exec(ob.expr);
        if (!obm || !ob.expr.includes('game_drain_duration_seconds') || Number(obm[1]) !== x.bound)
            err(pr[0], `CroupierDrainOverBound must fire at game_drain_duration_seconds > ${x.bound} (the bound)`);
        else if (!(Number(obm[1]) + forS(ob) + ALERT_DELAY_S < x.grace))
            err(pr[0], `CroupierDrainOverBound fires after SIGKILL (${obm[1]} + for + ${ALERT_DELAY_S} >= ${x.grace})`);
        const ng = get('CroupierDrainNearGrace');
        const ngm = ng && / > \( ([0-9]+) \+ ([0-9]+) \) \/ 2$/.exec(ng.expr);
        if (!ngm || !ng.expr.includes('game_drain_duration_seconds') || Number(ngm[1]) !== x.bound || Number(ngm[2]) !== x.grace)
            err(pr[0], `CroupierDrainNearGrace must fire at game_drain_duration_seconds > ( ${x.bound} + ${x.grace} ) / 2`);
        else if (!((x.bound + x.grace) / 2 + forS(ng) + ALERT_DELAY_S < x.grace))
            err(pr[0], `CroupierDrainNearGrace fires after SIGKILL at grace ${x.grace}`);
        const ll = get('CroupierLeaseLost');
        if (!ll || !/increase\(lease_renew_total\{[^}]*result="lost"\}\[[0-9]+m\]\)\) > 0$/.test(ll.expr))
            err(pr[0], 'CroupierLeaseLost must fire on an increase of lease_renew_total{result="lost"}');
        const ph = get('CroupierLeasePoolHigh');
        const phm = ph && /lease_pool_in_use\{.*\}\) >= 0\.75 \* ([0-9]+)$/.exec(ph.expr);
        if (!phm || Number(phm[1]) !== x.pool)
            err(pr[0], `CroupierLeasePoolHigh must fire at lease_pool_in_use >= 0.75 * ${x.pool} (LEASE_POOL_SIZE)`);
        x.rule = pr[0].metadata.name;
    }
    facts.engines = engines;

    // The director: a PodDisruptionBudget (evictions one at a time, each through preStop), and
    // its alert rules, scoped to this namespace, the drain alert at its own bound, before SIGKILL.
    for (const x of directors) {
        const sel = x.d.spec.selector.matchLabels;
        const matches = (lbls) => lbls && Object.entries(lbls).every(([k, v]) => sel[k] === v) &&
            Object.keys(lbls).length === Object.keys(sel).length;
        if (!byKind('PodDisruptionBudget').some((p) => matches(p.spec.selector.matchLabels)))
            err(x.d, 'the director needs a PodDisruptionBudget');
        const dr = rules.filter((r) => r.metadata.name === 'croupier-director-alerts');
        if (dr.length !== 1) {
            errs.push('overlay: expected one PrometheusRule croupier-director-alerts');
            continue;
        }
        const all = dr[0].spec.groups.flatMap((g) => g.rules.map((r) => ({ ...r, interval: g.interval })));
        for (const r of all) {
            if (!r.expr.includes(`namespace="${ns}"`)) err(dr[0], `${r.alert}: expression must select namespace="${ns}"`);
            if (r.interval !== '10s') err(dr[0], `${r.alert}: group interval must be 10s`);
        }
        const get = (name) => all.find((r) => r.alert === name);
        for (const [name, metric] of [
            ['CroupierDirectorNoneReady', 'director_ready'], ['CroupierDirectorAbsent', 'director_ready'],
            ['CroupierDirectorStaleWrites', 'tour_stale_writes_total'],
            ['CroupierDirectorHandoverLost', 'tour_handovers_total'],
            ['CroupierDirectorRenewFailing', 'tour_renew_failures_total']])
            if (!get(name)?.expr.includes(metric)) err(dr[0], `${name} is required (on ${metric})`);
        const ob = get('CroupierDirectorDrainOverBound');
        const obm = ob && / > ([0-9.]+)$/.exec(ob.expr);
        const forS = /^([0-9]+)(s|m)$/.exec(ob?.for ?? '0s');
        if (!obm || !ob.expr.includes('director_drain_duration_seconds') || Number(obm[1]) !== x.bound)
            err(dr[0], `CroupierDirectorDrainOverBound must fire at director_drain_duration_seconds > ${x.bound} (the bound)`);
        else if (!forS || !(x.bound + Number(forS[1]) * (forS[2] === 'm' ? 60 : 1) + ALERT_DELAY_S < x.grace))
            err(dr[0], `CroupierDirectorDrainOverBound fires after SIGKILL (${x.bound} + for + ${ALERT_DELAY_S} >= ${x.grace})`);
        facts.director = { bound: x.bound, grace: x.grace, replicas: x.replicas, claimTtl: x.claimTtl };
    }

    // The gateway's alert rules (scoped to this namespace) and the Grafana dashboard; their
    // expressions are proven by tests/prom (promtool and the metrics of the real binaries).
    const gr = rules.filter((r) => r.metadata.name === 'croupier-gate-alerts');
    if (gr.length !== 1) errs.push('overlay: expected one PrometheusRule croupier-gate-alerts');
    for (const r of gr.flatMap((x) => x.spec.groups.flatMap((g) => g.rules)))
        if (!r.expr.includes(`namespace="${ns}"`)) err(gr[0], `${r.alert}: expression must select namespace="${ns}"`);
    const dash = configMaps.filter((c) => c.metadata.labels?.grafana_dashboard !== undefined);
    if (dash.length !== 1) errs.push(`overlay: expected one ConfigMap labelled grafana_dashboard, found ${dash.length}`);
    for (const c of dash)
        for (const [k, v] of Object.entries(c.data ?? {})) {
            let d;
            try {
                d = JSON.parse(v);
            } catch (e) {
                err(c, `${k}: not JSON (${e.message})`);
                continue;
            }
            if (!Array.isArray(d.panels) || !d.panels.length || !d.uid) err(c, `${k}: a dashboard needs a uid and panels`);
        }

    // The preStop script: GET only, and only through `wget -q -O-`.
    if (/POST|--post-data|--post-file|\bcurl\b|\bnc\b/.test(prestopText))
        errs.push('k8s/prestop.sh: must use GET only (found POST, --post-data/--post-file, curl or nc)');
    const code = prestopText.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
    if (!/\bwget\b/.test(code) || /\bwget\b(?! -q -O- )/.test(code))
        errs.push('k8s/prestop.sh: every wget call must be `wget -q -O- URL`');
    return errs;
}

// ---- self-test: every invariant must catch a violation ---------------------------------------

const dep = (objs, name) => objs.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
const ctr = (d) => d.spec.template.spec.containers[0];
const setEnv = (d, k, v) => (ctr(d).env.find((e) => e.name === k).value = v);
const MUTATIONS = [
    ['maxUnavailable 1', (o) => (dep(o, 'croupier-game-holdem').spec.strategy.rollingUpdate.maxUnavailable = 1), 'maxUnavailable 0'],
    ['maxSurge 2', (o) => (dep(o, 'croupier-gate').spec.strategy.rollingUpdate.maxSurge = 2), 'maxSurge 1'],
    ['grace = bound', (o) => { const d = dep(o, 'croupier-game-persistent'); d.spec.template.spec.terminationGracePeriodSeconds = Number(ctr(d).env.find((e) => e.name === 'DRAIN_MAX_SECONDS').value); }, 'terminationGracePeriodSeconds'],
    ['bound above design', (o) => setEnv(dep(o, 'croupier-game-persistent'), 'DRAIN_MAX_SECONDS', '121'), 'exceeds the design'],
    ['pool too small', (o) => setEnv(dep(o, 'croupier-game-traditional'), 'LEASE_POOL_SIZE', '3'), 'LEASE_POOL_SIZE 3'],
    ['liveness on /readyz', (o) => (ctr(dep(o, 'croupier-game-holdem')).livenessProbe.httpGet.path = '/readyz'), 'livenessProbe'],
    ['liveness exec', (o) => { const p = ctr(dep(o, 'croupier-gate')).livenessProbe; delete p.httpGet; p.exec = { command: ['redis-cli', 'ping'] }; }, 'livenessProbe'],
    ['probe on rpc port', (o) => (ctr(dep(o, 'croupier-game-holdem')).readinessProbe.httpGet.port = 'rpc'), 'readinessProbe'],
    ['health port mismatch', (o) => setEnv(dep(o, 'croupier-game-holdem'), 'HEALTH_PORT', '9090'), 'HEALTH_PORT'],
    ['prestop changed', (o) => { const c = o.find((x) => x.kind === 'ConfigMap' && x.metadata.name.startsWith('croupier-prestop')); c.data['prestop.sh'] += '\n'; }, 'byte for byte'],
    ['alert over bound drifts', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name.endsWith('-holdem')); const a = r.spec.groups[0].rules.find((y) => y.alert === 'CroupierDrainOverBound'); a.expr = a.expr.replace(/ > [0-9]+$/, ' > 9999'); }, 'CroupierDrainOverBound'],
    ['alert after SIGKILL', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name.endsWith('-persistent')); r.spec.groups[0].rules.find((y) => y.alert === 'CroupierDrainOverBound').for = '5m'; }, 'fires after SIGKILL'],
    ['zhajinhua alert over bound drifts', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name.endsWith('-zhajinhua')); const a = r.spec.groups[0].rules.find((y) => y.alert === 'CroupierDrainOverBound'); a.expr = a.expr.replace(/ > [0-9]+$/, ' > 9999'); }, 'CroupierDrainOverBound'],
    ['zhajinhua without its Deployment', (o) => o.splice(o.indexOf(dep(o, 'croupier-game-zhajinhua')), 1), 'no Deployment for engine zhajinhua'],
    ['pool alert drifts', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name.endsWith('-traditional')); const a = r.spec.groups[0].rules.find((y) => y.alert === 'CroupierLeasePoolHigh'); a.expr = a.expr.replace(/ \* [0-9]+$/, ' * 1000'); }, 'CroupierLeasePoolHigh'],
    ['redis evicts', (o) => { const c = o.find((x) => x.kind === 'StatefulSet').spec.template.spec.containers[0]; c.args[c.args.indexOf('noeviction')] = 'allkeys-lru'; }, 'noeviction'],
    ['undefined arg variable', (o) => ctr(dep(o, 'croupier-game-holdem')).args.push('--games=$(GAMES)'), '$(GAMES)'],
    ['gate alerts unscoped', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name === 'croupier-gate-alerts'); r.spec.groups[0].rules[0].expr = r.spec.groups[0].rules[0].expr.replace(/namespace="[^"]*"/, 'namespace="other"'); }, 'must select namespace'],
    ['dashboard not JSON', (o) => { const c = o.find((x) => x.kind === 'ConfigMap' && x.metadata.labels?.grafana_dashboard !== undefined); const k = Object.keys(c.data)[0]; c.data[k] = c.data[k].slice(1); }, 'not JSON'],
    ['no admin secret', (o) => { const a = ctr(dep(o, 'croupier-game-holdem')).args; a.splice(a.findIndex((x) => x.startsWith('--admin-secret-file=')), 1); }, '--admin-secret-file must point'],
    ['admin secret = token secret', (o) => { const t = dep(o, 'croupier-gate').spec.template.spec.volumes.find((v) => v.name === 'token').secret.secretName; dep(o, 'croupier-game-zhajinhua').spec.template.spec.volumes.find((v) => v.name === 'admin').secret.secretName = t; }, "token Secret"],
    ['admin secret unreadable', (o) => { delete dep(o, 'croupier-game-traditional').spec.template.spec.securityContext.fsGroup; }, 'group-readable'],
    ['gateway grace short', (o) => (dep(o, 'croupier-gate').spec.template.spec.terminationGracePeriodSeconds = 10), 'preStop + window + close'],
    ['gateway connections over memory', (o) => setEnv(dep(o, 'croupier-gate'), 'MAX_CONNS', '100000000'), 'does not fit the memory limit'],
    ['gateway without a connection cap', (o) => { const a = ctr(dep(o, 'croupier-gate')).args; a.splice(a.findIndex((x) => x.startsWith('--max-conns=')), 1); }, '--max-conns=$(MAX_CONNS)'],
    ['director grace short', (o) => (dep(o, 'croupier-director').spec.template.spec.terminationGracePeriodSeconds = Number(ctr(dep(o, 'croupier-director')).env.find((e) => e.name === 'DRAIN_MAX_SECONDS').value) + 59), 'drain bound'],
    ['director bound not passed', (o) => { const a = ctr(dep(o, 'croupier-director')).args; a.splice(a.findIndex((x) => x.startsWith('--drain-max-seconds=')), 1); }, '--drain-max-seconds=$(DRAIN_MAX_SECONDS)'],
    ['director id not the pod name', (o) => (ctr(dep(o, 'croupier-director')).env.find((e) => e.name === 'POD_NAME').valueFrom.fieldRef.fieldPath = 'spec.nodeName'), 'metadata.name'],
    ['director without preStop', (o) => { delete ctr(dep(o, 'croupier-director')).lifecycle; }, 'preStop must run'],
    ['director readiness on /healthz', (o) => (ctr(dep(o, 'croupier-director')).readinessProbe.httpGet.path = '/healthz'), 'readinessProbe'],
    ['director maxUnavailable 1', (o) => (dep(o, 'croupier-director').spec.strategy.rollingUpdate.maxUnavailable = 1), 'maxUnavailable 0'],
    ['director without memory limit', (o) => { delete ctr(dep(o, 'croupier-director')).resources.limits; }, 'resources.limits.memory'],
    ['director without a PDB', (o) => o.splice(o.findIndex((x) => x.kind === 'PodDisruptionBudget' && x.metadata.name === 'croupier-director'), 1), 'director needs a PodDisruptionBudget'],
    ['director missing', (o) => o.splice(o.indexOf(dep(o, 'croupier-director')), 1), 'one tournament director Deployment'],
    ['director alert over bound drifts', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name === 'croupier-director-alerts'); const a = r.spec.groups[0].rules.find((y) => y.alert === 'CroupierDirectorDrainOverBound'); a.expr = a.expr.replace(/ > [0-9]+$/, ' > 9999'); }, 'CroupierDirectorDrainOverBound'],
    ['director alert after SIGKILL', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name === 'croupier-director-alerts'); r.spec.groups[0].rules.find((y) => y.alert === 'CroupierDirectorDrainOverBound').for = '5m'; }, 'fires after SIGKILL'],
    ['director alerts unscoped', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name === 'croupier-director-alerts'); const a = r.spec.groups[0].rules.find((y) => y.alert === 'CroupierDirectorStaleWrites'); a.expr = a.expr.replace(/namespace="[^"]*"/, 'namespace="other"'); }, 'must select namespace'],
    ['director alert dropped', (o) => { const r = o.find((x) => x.kind === 'PrometheusRule' && x.metadata.name === 'croupier-director-alerts'); const g = r.spec.groups[0]; g.rules.splice(g.rules.findIndex((y) => y.alert === 'CroupierDirectorHandoverLost'), 1); }, 'CroupierDirectorHandoverLost is required'],
    ['per-address cap behind a proxy', (o) => { setEnv(dep(o, 'croupier-gate'), 'MAX_CONNS_PER_ADDR', '64'); const s = o.find((x) => x.kind === 'Service' && x.metadata.name === 'croupier-gate'); s.spec.type = 'ClusterIP'; delete s.spec.externalTrafficPolicy; }, 'hides players'],
];
// Injected only into overlays that run Redis with Sentinels.
const sset = (o) => o.find((x) => x.kind === 'StatefulSet' && x.metadata.name === 'croupier-sentinel');
const HA_MUTATIONS = [
    ['two sentinels', (o) => (sset(o).spec.replicas = 2), 'expected 3 sentinels'],
    ['redis without replicas', (o) => (o.find((x) => x.kind === 'StatefulSet' && x.metadata.name === 'croupier-redis').spec.replicas = 1), 'master and 2 replicas'],
    ['sentinel list short', (o) => { const a = ctr(dep(o, 'croupier-gate')).args; const i = a.findIndex((x) => x.startsWith('--redis-sentinels=')); a[i] = a[i].replace(/,[^,]*$/, ''); }, '--redis-sentinels must list'],
    ['no sentinel flags', (o) => { const a = ctr(dep(o, 'croupier-game-holdem')).args; a.splice(a.findIndex((x) => x.startsWith('--redis-sentinels=')), 1); }, '--redis-sentinels must list'],
    ['wrong master name', (o) => { const a = ctr(dep(o, 'croupier-game-persistent')).args; a[a.findIndex((x) => x.startsWith('--redis-master='))] = '--redis-master=other'; }, '--redis-master must be'],
    ['min replicas 0', (o) => { const a = ctr(dep(o, 'croupier-game-traditional')).args; a[a.findIndex((x) => x.startsWith('--redis-min-replicas='))] = '--redis-min-replicas=0'; }, '--redis-min-replicas 0'],
    ['lease shorter than failover', (o) => ctr(dep(o, 'croupier-game-zhajinhua')).args.push('--lease-ttl-ms=3000'), '--lease-ttl-ms 3000'],
    ['director claims shorter than failover', (o) => setEnv(dep(o, 'croupier-director'), 'CLAIM_TTL_MS', '3000'), 'CLAIM_TTL_MS 3000'],
    ['director without sentinel flags', (o) => { const a = ctr(dep(o, 'croupier-director')).args; a.splice(a.findIndex((x) => x.startsWith('--redis-sentinels=')), 1); }, '--redis-sentinels must list'],
    ['sentinel Service missing', (o) => o.splice(o.findIndex((x) => x.kind === 'Service' && x.metadata.name === 'croupier-sentinel-1'), 1), 'needs a Service of its own'],
];
// Injected into every overlay without Redis Cluster.
const NONCLUSTER_MUTATIONS = [
    ['cluster flag without a cluster', (o) => ctr(dep(o, 'croupier-gate')).args.push('--redis-cluster=10.0.0.1:6379'), 'without the croupier-redis-cluster StatefulSet'],
];
// Injected only into overlays that run Redis Cluster.
const cset = (o) => o.find((x) => x.kind === 'StatefulSet' && x.metadata.name === 'croupier-redis-cluster');
const cjob = (o) => o.find((x) => x.kind === 'Job' && x.metadata.name === 'croupier-redis-cluster-create');
const CLUSTER_MUTATIONS = [
    ['cluster and sentinel flags', (o) => ctr(dep(o, 'croupier-gate')).args.push('--redis-sentinels=10.0.0.1:26379'), 'modes exclude each other'],
    ['cluster and --redis', (o) => ctr(dep(o, 'croupier-game-holdem')).args.push('--redis=10.0.0.1:6379'), 'modes exclude each other'],
    ['game without --redis-cluster', (o) => { const a = ctr(dep(o, 'croupier-game-persistent')).args; a.splice(a.findIndex((x) => x.startsWith('--redis-cluster=')), 1); }, '--redis-cluster must list'],
    ['gate seed list short', (o) => { const a = ctr(dep(o, 'croupier-gate')).args; const i = a.findIndex((x) => x.startsWith('--redis-cluster=')); a[i] = a[i].replace(/,[^,]*$/, ''); }, '--redis-cluster must list'],
    ['seed Service missing', (o) => o.splice(o.findIndex((x) => x.kind === 'Service' && x.metadata.name === 'croupier-redis-cluster-4'), 1), 'needs a Service of its own'],
    ['seed Service hides unready nodes', (o) => (o.find((x) => x.kind === 'Service' && x.metadata.name === 'croupier-redis-cluster-0').spec.publishNotReadyAddresses = false), 'needs a Service of its own'],
    ['five nodes', (o) => (cset(o).spec.replicas = 5), 'a cluster needs 3 masters'],
    ['no replicas', (o) => (cjob(o).spec.template.spec.containers[0].env.find((e) => e.name === 'REPLICAS_PER_MASTER').value = '0'), 'a cluster needs 3 masters'],
    ['Job misses a node', (o) => { const e = cjob(o).spec.template.spec.containers[0].env.find((x) => x.name === 'NODES'); e.value = e.value.replace(/\s*\S+$/, ''); }, 'NODES must list every node'],
    ['no create Job', (o) => o.splice(o.indexOf(cjob(o)), 1), 'croupier-redis-cluster-create'],
    ['node without preStop handover', (o) => { delete cset(o).spec.template.spec.containers[0].lifecycle; }, 'preStop must run redis-cluster-prestop.sh'],
    ['node grace too short for the handover', (o) => (cset(o).spec.template.spec.terminationGracePeriodSeconds = 20), 'FAILOVER_WAIT_S 15 + 30'],
    ['no node timeout', (o) => { const a = cset(o).spec.template.spec.containers[0].args; a.splice(a.indexOf('--cluster-node-timeout'), 2); }, '--cluster-node-timeout'],
    ['lease shorter than failover', (o) => ctr(dep(o, 'croupier-game-zhajinhua')).args.push('--lease-ttl-ms=4000'), '--lease-ttl-ms 4000'],
    ['min replicas = replicas', (o) => ctr(dep(o, 'croupier-game-traditional')).args.push('--redis-min-replicas=1'), '--redis-min-replicas 1'],
    ['no init wait', (o) => { delete dep(o, 'croupier-game-holdem').spec.template.spec.initContainers; }, 'an init container must wait'],
    ['director claims shorter than the cluster failover', (o) => setEnv(dep(o, 'croupier-director'), 'CLAIM_TTL_MS', '4000'), "CLAIM_TTL_MS 4000 must stay above the cluster's"],
    ['director without --redis-cluster', (o) => { const a = ctr(dep(o, 'croupier-director')).args; a.splice(a.findIndex((x) => x.startsWith('--redis-cluster=')), 1); }, '--redis-cluster must list'],
    ['single Redis beside the cluster', (o) => { const r = structuredClone(cset(o)); r.metadata.name = 'croupier-redis'; o.push(r); }, 'croupier-redis-cluster StatefulSet only'],
];
const PRESTOP_MUTATIONS = [
    ['prestop POSTs', (t) => t.replace('wget -q -O- "$BASE$1"', 'wget -q -O- --post-data= "$BASE$1"'), 'GET only'],
    ['prestop wget without -q -O-', (t) => t.replace('wget -q -O- "$BASE$1" 2>&1\n    fi', 'wget "$BASE$1"\n    fi'), 'wget -q -O-'],
];

function selfTest(env, objs, prestopText) {
    const failures = [];
    const clean = checkOverlay(structuredClone(objs), prestopText, {});
    if (clean.length) return { failures: [`${env}: self-test needs a clean overlay first`], count: 1 };
    const base = MUTATIONS;
    const mutations = [...base, ...(sset(objs) ? HA_MUTATIONS : []), ...(cset(objs) ? CLUSTER_MUTATIONS : NONCLUSTER_MUTATIONS)];
    for (const [name, mutate, expect] of mutations) {
        const copy = structuredClone(objs);
        mutate(copy);
        const errs = checkOverlay(copy, prestopText, {});
        if (!errs.some((e) => e.includes(expect))) failures.push(`${env}: self-test '${name}' was not caught (wanted '${expect}'; got ${JSON.stringify(errs)})`);
    }
    for (const [name, mutate, expect] of PRESTOP_MUTATIONS) {
        const bad = mutate(prestopText);
        if (bad === prestopText) {
            failures.push(`${env}: self-test '${name}' could not mutate k8s/prestop.sh (update the mutation)`);
            continue;
        }
        const copy = structuredClone(objs);
        for (const c of copy) if (c.kind === 'ConfigMap' && c.data?.['prestop.sh']) c.data['prestop.sh'] = bad;
        if (!checkOverlay(copy, bad, {}).some((e) => e.includes(expect))) failures.push(`${env}: self-test '${name}' was not caught`);
    }
    // Schema validation must reject a wrongly typed field too.
    const copy = structuredClone(dep(objs, 'croupier-gate'));
    copy.spec.replicas = 'three';
    if (validateSchema(copy).length === 0) failures.push(`${env}: schema validation accepted replicas: "three"`);
    // ... and a misspelt field.
    const typo = structuredClone(dep(objs, 'croupier-game-holdem'));
    typo.spec.strategy.rollingUpdate.maxUnavialable = 0;
    if (!validateSchema(typo).some((e) => e.includes('unknown field spec.strategy.rollingUpdate.maxUnavialable')))
        failures.push(`${env}: schema validation accepted the misspelt field maxUnavialable`);
    return { failures, count: mutations.length + PRESTOP_MUTATIONS.length + 2 };
}

// ---- main ------------------------------------------------------------------------------------

const prestopText = readFileSync(prestopPath, 'utf8');
let bad = 0;
for (const { env, file } of overlays) {
    const docs = YAML.parseAllDocuments(readFileSync(file, 'utf8'));
    const objs = [];
    for (const doc of docs) {
        if (doc.errors.length) {
            console.log(`FAIL ${env}: YAML: ${doc.errors[0].message}`);
            bad++;
            continue;
        }
        const o = doc.toJSON();
        if (o) objs.push(o);
    }
    const counts = {};
    let schemaErrs = 0;
    for (const o of objs) {
        counts[o.kind] = (counts[o.kind] ?? 0) + 1;
        for (const e of validateSchema(o)) {
            console.log(`FAIL ${env}: ${o.kind}/${o.metadata?.name}: ${e}`);
            schemaErrs++;
        }
    }
    const facts = {};
    const errs = checkOverlay(objs, prestopText, facts);
    for (const e of errs) console.log(`FAIL ${env}: ${e}`);
    const st = selfTest(env, objs, prestopText);
    for (const f of st.failures) console.log(`FAIL ${f}`);
    bad += schemaErrs + errs.length + st.failures.length;

    const kinds = Object.entries(counts).sort().map(([k, n]) => `${n} ${k}`).join(', ');
    console.log(`${env}: ${objs.length} objects validated against their schemas (${kinds})`);
    for (const [e, x] of Object.entries(facts.engines ?? {}))
        console.log(`  ${e.padEnd(11)} replicas ${x.replicas}, drain bound ${x.bound} s, grace ${x.grace} s, ` +
            `lease pool ${x.pool} >= ${x.need}, alerts ${x.rule}`);
    if (facts.gate)
        console.log(`  gate        replicas ${facts.gate.replicas}, preStop bound ${facts.gate.bound} s, grace ${facts.gate.grace} s`);
    if (facts.director)
        console.log(`  director    replicas ${facts.director.replicas}, drain bound ${facts.director.bound} s, grace ${facts.director.grace} s, claim TTL ${facts.director.claimTtl} ms`);
    if (facts.cluster)
        console.log(`  redis       Redis Cluster: ${facts.cluster.nodes} nodes, ${facts.cluster.perMaster} replica(s) per master, node timeout ${facts.cluster.nodeTimeout} ms, ${facts.cluster.links.length} seeds`);
    if (facts.ha)
        console.log(`  redis       ${facts.ha.replicas} nodes (master + replicas), 3 sentinels on master '${facts.ha.master}', down-after ${facts.ha.downAfter} ms`);
    console.log(`  invariants: ${errs.length} violated; self-test: ${st.count - st.failures.length}/${st.count} injected violations caught`);
}
console.log(bad === 0 ? 'k8s manifests: all overlays valid' : `k8s manifests: ${bad} problem(s)`);
process.exit(bad === 0 ? 0 : 1);

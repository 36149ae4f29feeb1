#!/usr/bin/env python3
"""tests/prom: turns one rendered overlay of k8s/ into promtool's inputs (run by tests/prom/run.sh).

usage: prom_check.py [--mutants] RENDERED_YAML OUT_DIR

Writes into OUT_DIR:
  rules-<PrometheusRule name>.yml   the rule's `spec` (groups) as a Prometheus rule file
  test-<PrometheusRule name>.yml    promtool unit tests of that file (`promtool test rules`)
  dashboard-<ConfigMap>-<key>.yml   every expression of a Grafana dashboard as a recording rule,
                                    its variables replaced, so that `promtool check rules` parses it
  exprs.json                        [{"where": ..., "expr": ...}] every expression above, for the
                                    metric-name check (metric_names.mjs)
  mutants/<rule>-<alert>-never|always/{rules,test}.yml  the rule file with that one alert made
                                    to never / always fire, and the same tests: each must fail
                                    (--mutants; for the gateway's rules, the director's and one
                                    engine's, as the tests of every engine come from the same code)

The unit tests take their thresholds from the rendered Deployments -- the drain bound
(DRAIN_MAX_SECONDS), terminationGracePeriodSeconds and LEASE_POOL_SIZE of each engine, the
director's DRAIN_MAX_SECONDS -- and the
`for` of each rule, so they hold for every overlay: each alert gets input just below its
threshold (no alert), just above it (the alert fires, with its labels and annotations), and the
same high input from another engine or namespace (no alert in this engine's rules).
"""
import json
import math
import os
import re
import sys

import yaml

INSTANCE = {"instance": "10.0.0.7:8080", "job": "croupier"}
HWM = 4096  # the money writer's high watermark in the tests (the alert reads the exported gauge)
DASHBOARD_VARS = {"$namespace": "croupier-test", "${namespace}": "croupier-test",
                  "$__rate_interval": "1m", "$__interval": "30s", "$__range": "1h"}


def duration_s(text):
    m = re.fullmatch(r"([0-9]+)(s|m|h)", text or "0s")
    if not m:
        sys.exit("prom_check.py: cannot read the duration %r" % text)
    return int(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2)]


def fmt_value(v):
    """$value as Prometheus' templates print a float64 (%v)."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def expand(template, labels, value):
    out = re.sub(r"\{\{ \$labels\.([a-z_]+) \}\}", lambda m: labels.get(m.group(1), ""), template)
    if "{{ $value }}" in out:
        out = out.replace("{{ $value }}", fmt_value(value))
    if "{{" in out:
        sys.exit("prom_check.py: annotation template not understood: %r" % template)
    return out


def series(name, labels, values):
    body = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    return {"series": "%s{%s}" % (name, body), "values": values}


class RuleFile:
    def __init__(self, rule_obj):
        self.name = rule_obj["metadata"]["name"]
        self.spec = rule_obj["spec"]
        self.rules = {r["alert"]: r for g in self.spec["groups"] for r in g["rules"] if "alert" in r}
        self.tests = []

    def case(self, what, alert, input_series, eval_s, fires, labels=None, value=None):
        """One promtool test group: input_series, then `alert` at eval_s fires (with labels and
        the value its annotations print) or does not."""
        rule = self.rules.get(alert)
        if rule is None:
            sys.exit("prom_check.py: %s has no alert %s" % (self.name, alert))
        exp = []
        if fires:
            lab = dict(labels)
            lab.update(rule.get("labels", {}))
            exp.append({"exp_labels": lab,
                        "exp_annotations": {k: expand(v, lab, value)
                                            for k, v in rule.get("annotations", {}).items()}})
        self.tests.append({"name": "%s: %s" % (alert, what), "interval": "10s",
                           "input_series": input_series,
                           "alert_rule_test": [{"eval_time": "%ds" % eval_s, "alertname": alert,
                                                 "exp_alerts": exp}]})

    def for_s(self, alert):
        return duration_s(self.rules[alert].get("for", "0s"))


def const(v, n=120):
    return "%sx%d" % (fmt_value(v), n)


def game_tests(rf, ns, engine, bound, grace, pool):
    pod = {"namespace": ns, "engine": engine, "pod": "croupier-game-%s-abc" % engine}
    pod.update(INSTANCE)
    other_engine = dict(pod, engine="other-engine", pod="croupier-game-other-abc")
    other_ns = dict(pod, namespace="another-namespace")
    out = {"namespace": ns, "pod": pod["pod"]}

    # Drain over its bound: game_drain_duration_seconds > bound.
    a = "CroupierDrainOverBound"
    t = rf.for_s(a) + 30
    rf.case("at the bound", a, [series("game_drain_duration_seconds", pod, const(bound))], t, False)
    rf.case("one second over the bound", a,
            [series("game_drain_duration_seconds", pod, const(bound + 1))], t, True, out, bound + 1)
    rf.case("another engine or namespace over the bound", a,
            [series("game_drain_duration_seconds", other_engine, const(bound + 1000)),
             series("game_drain_duration_seconds", other_ns, const(bound + 1000))], t, False)
    rf.case("not draining", a, [series("game_drain_duration_seconds", pod, const(0))], t, False)

    # Drain near kubelet's SIGKILL: past the midpoint of bound and grace.
    a = "CroupierDrainNearGrace"
    mid = (bound + grace) / 2
    t = rf.for_s(a) + 30
    rf.case("at the midpoint", a,
            [series("game_drain_duration_seconds", pod, const(math.floor(mid)))], t, False)
    rf.case("past the midpoint", a,
            [series("game_drain_duration_seconds", pod, const(math.floor(mid) + 1))], t, True,
            out, math.floor(mid) + 1)

    # A lease lost to another owner.
    a = "CroupierLeaseLost"
    lost = dict(pod, result="lost")
    ok = dict(pod, result="ok")
    t = 120
    rf.case("renewals only succeed", a,
            [series("lease_renew_total", lost, const(0)), series("lease_renew_total", ok, "0+1x120")],
            t, False)
    rf.case("one renewal found another owner", a,
            [series("lease_renew_total", lost, "0x5 1x115"), series("lease_renew_total", ok, "0+1x120")],
            t, True, out)

    # The lease pool near exhaustion: >= 75 % of LEASE_POOL_SIZE in use.
    a = "CroupierLeasePoolHigh"
    high = math.ceil(0.75 * pool)
    t = rf.for_s(a) + 30
    rf.case("one slot below 75 %% of %d" % pool, a,
            [series("lease_pool_in_use", pod, const(high - 1))], t, False)
    rf.case("%d of %d slots in use" % (high, pool), a,
            [series("lease_pool_in_use", pod, const(high))], t, True, {"namespace": ns}, high)
    rf.case("another engine's pool full", a,
            [series("lease_pool_in_use", other_engine, const(pool))], t, False)

    # The settlement queue at its high watermark.
    a = "CroupierSettlementQueueFull"
    t = rf.for_s(a) + 30
    hwm = [series("money_writer_high_watermark", pod, const(HWM))]
    rf.case("one below the watermark", a, hwm + [series("money_writer_depth", pod, const(HWM - 1))],
            t, False)
    rf.case("at the watermark", a, hwm + [series("money_writer_depth", pod, const(HWM))], t, True,
            out, HWM)
    rf.case("at the watermark for less than its for", a,
            hwm + [series("money_writer_depth", pod, "%s %s" % (const(HWM, max(0, rf.for_s(a) // 10 - 2)),
                                                                 const(0)))],
            t, False)
    rf.case("another engine at its watermark", a,
            [series("money_writer_high_watermark", other_engine, const(HWM)),
             series("money_writer_depth", other_engine, const(HWM))], t, False)

    # A server stuck unready (not draining).
    unready_tests(rf, "CroupierGameUnready", "game", pod, out)

    # Redis's eviction policy, evictions and memory headroom, as the pods read them (rguard.h).
    per_engine = {"namespace": ns, "engine": engine}
    a = "CroupierRedisEvicts"
    t = rf.for_s(a) + 30
    rf.case("noeviction", a, [series("redis_eviction_policy_safe", pod, const(1))], t, False)
    rf.case("an evicting policy", a, [series("redis_eviction_policy_safe", pod, const(0))], t,
            True, per_engine)
    rf.case("another engine on an evicting Redis", a,
            [series("redis_eviction_policy_safe", other_engine, const(0))], t, False)
    a = "CroupierRedisKeysEvicted"
    t = 120
    rf.case("evicted keys from long ago", a, [series("redis_evicted_keys", pod, const(40))], t,
            False)
    rf.case("keys evicted now", a, [series("redis_evicted_keys", pod, "0x6 5x114")], t, True,
            per_engine)
    rf.case("a Redis restart resets the count", a,
            [series("redis_evicted_keys", pod, "40x6 0x114")], t, False)
    a = "CroupierRedisMemoryLow"
    t = rf.for_s(a) + 30
    rf.case("half the memory free", a, [series("redis_memory_headroom_ratio", pod, const(0.5))],
            t, False)
    rf.case("5 % free", a, [series("redis_memory_headroom_ratio", pod, const(0.05))], t, True,
            per_engine)
    rf.case("5 % free for less than its for", a,
            [series("redis_memory_headroom_ratio", pod,
                    "%s %s" % (const(0.05, max(0, rf.for_s(a) // 10 - 3)), const(0.5)))], t, False)
    rf.case("another engine's Redis nearly full", a,
            [series("redis_memory_headroom_ratio", other_engine, const(0.05))], t, False)


def unready_tests(rf, a, prefix, pod, out):
    t = rf.for_s(a) + 30
    ready, draining = prefix + "_ready", prefix + "_draining"
    rf.case("ready", a, [series(ready, pod, const(1)), series(draining, pod, const(0))], t, False)
    rf.case("unready and not draining", a,
            [series(ready, pod, const(0)), series(draining, pod, const(0))], t, True, out, 0)
    rf.case("unready because draining", a,
            [series(ready, pod, const(0)), series(draining, pod, const(1))], t, False)
    rf.case("unready for less than its for, then ready", a,
            [series(ready, pod, "%s %s" % (const(0, max(0, rf.for_s(a) // 10 - 3)), const(1))),
             series(draining, pod, const(0))], t, False)


def rate_tests(rf, a, metric, pod, out, extra=None):
    """An alert on the rate of a counter summed by pod (`... > N` at the end of its expression):
    a fifth of N (no alert), twice N (fires), twice N in another namespace (no alert)."""
    m = re.search(r"\) > ([0-9.]+)$", rf.rules[a]["expr"])
    if not m:
        sys.exit("prom_check.py: %s: no threshold ' > N' at the end of its expression" % a)
    per_s = float(m.group(1))
    lab = dict(pod, **(extra or {}))
    t = rf.for_s(a) + 6 * 60
    # Counters rising by a whole number every 10 s: 2x and a fifth of the threshold rate.
    fast, slow = max(1, math.ceil(per_s * 10 * 2)), per_s * 10 / 5
    rf.case("%.3g/s" % (slow / 10), a, [series(metric, lab, "0+%sx200" % fmt_value(slow))], t,
            False)
    rf.case("%.3g/s" % (fast / 10), a, [series(metric, lab, "0+%dx200" % fast)], t, True, out)
    rf.case("another namespace at %.3g/s" % (fast / 10), a,
            [series(metric, dict(lab, namespace="another-namespace"), "0+%dx200" % fast)], t,
            False)


def gate_tests(rf, ns):
    pod = {"namespace": ns, "pod": "croupier-gate-abc"}
    pod.update(INSTANCE)
    out = {"namespace": ns, "pod": pod["pod"]}
    rate_tests(rf, "CroupierGateShedsSlowConsumers", "gate_slow_consumer_closes_total", pod, out)
    rate_tests(rf, "CroupierGateRefusesConnections", "gate_connections_refused_total", pod, out,
               {"reason": "max_conns_per_addr"})
    unready_tests(rf, "CroupierGateUnready", "gate", pod, out)


def director_tests(rf, ns, bound):
    """The tournament director's rules (k8s/base/director-alerts.yaml); the drain threshold is
    the Deployment's DRAIN_MAX_SECONDS."""
    pod = {"namespace": ns, "pod": "croupier-director-abc"}
    pod.update(INSTANCE)
    pod2 = dict(pod, pod="croupier-director-def", instance="10.0.0.8:8080")
    other_ns = dict(pod, namespace="another-namespace")
    out = {"namespace": ns, "pod": pod["pod"]}
    per_ns = {"namespace": ns}

    # No director ready: every scraped director unready.
    a = "CroupierDirectorNoneReady"
    t = rf.for_s(a) + 30
    rf.case("one of two ready", a,
            [series("director_ready", pod, const(0)), series("director_ready", pod2, const(1))],
            t, False)
    rf.case("none of two ready", a,
            [series("director_ready", pod, const(0)), series("director_ready", pod2, const(0))],
            t, True, per_ns, 0)
    rf.case("none ready for less than its for, then one", a,
            [series("director_ready", pod, const(0)),
             series("director_ready", pod2,
                    "%s %s" % (const(0, max(0, rf.for_s(a) // 10 - 3)), const(1)))], t, False)
    rf.case("none ready in another namespace", a,
            [series("director_ready", other_ns, const(0)), series("director_ready", pod, const(1))],
            t, False)

    # No director scraped at all.
    a = "CroupierDirectorAbsent"
    t = rf.for_s(a) + 30
    rf.case("a director scraped", a, [series("director_ready", pod, const(0))], t, False)
    rf.case("no director scraped here (one in another namespace)", a,
            [series("director_ready", other_ns, const(1))], t, True, per_ns)

    # One director stuck unready (not draining).
    unready_tests(rf, "CroupierDirectorUnready", "director", pod, out)

    # A write refused by the fence: a tournament taken over from a live owner.
    a = "CroupierDirectorStaleWrites"
    t = 120
    rf.case("no stale write", a, [series("tour_stale_writes_total", pod, const(0))], t, False)
    rf.case("one stale write", a, [series("tour_stale_writes_total", pod, "0x5 1x115")], t, True,
            out)
    rf.case("a stale write long ago", a, [series("tour_stale_writes_total", pod, const(3))], t,
            False)
    rf.case("a stale write in another namespace", a,
            [series("tour_stale_writes_total", other_ns, "0x5 1x115")], t, False)

    # A tournament lost rather than handed back; handovers by drain are normal.
    a = "CroupierDirectorHandoverLost"
    lost = dict(pod, why="lost")
    released = dict(pod, why="released")
    t = 120
    rf.case("tournaments handed back on a drain", a,
            [series("tour_handovers_total", lost, const(0)),
             series("tour_handovers_total", released, "0x5 7x115")], t, False)
    rf.case("one tournament lost", a,
            [series("tour_handovers_total", lost, "0x5 1x115"),
             series("tour_handovers_total", released, const(0))], t, True, out)
    rf.case("one lost in another namespace", a,
            [series("tour_handovers_total", dict(lost, namespace="another-namespace"), "0x5 1x115")],
            t, False)

    # Renewals failing for 5 minutes (a few failures that stopped do not fire).
    a = "CroupierDirectorRenewFailing"
    rate_tests(rf, a, "tour_renew_failures_total", pod, out)
    rf.case("a few failures, then none", a,
            [series("tour_renew_failures_total", pod, "0+1x5 5x195")], rf.for_s(a) + 6 * 60, False)

    # A drain over its bound.
    a = "CroupierDirectorDrainOverBound"
    t = rf.for_s(a) + 30
    rf.case("at the bound", a, [series("director_drain_duration_seconds", pod, const(bound))], t,
            False)
    rf.case("one second over the bound", a,
            [series("director_drain_duration_seconds", pod, const(bound + 1))], t, True, out,
            bound + 1)
    rf.case("another namespace over the bound", a,
            [series("director_drain_duration_seconds", other_ns, const(bound + 1000))], t, False)
    rf.case("not draining", a, [series("director_drain_duration_seconds", pod, const(0))], t,
            False)


def env_of(dep, name):
    for c in dep["spec"]["template"]["spec"]["containers"]:
        for e in c.get("env", []):
            if e["name"] == name:
                return e["value"]
    sys.exit("prom_check.py: %s has no env %s" % (dep["metadata"]["name"], name))


def main():
    args = sys.argv[1:]
    mutants = args[:1] == ["--mutants"]
    if mutants:
        args = args[1:]
    if len(args) != 2:
        sys.exit(__doc__.strip())
    objs = [o for o in yaml.safe_load_all(open(args[0])) if o]
    out = args[1]
    mutated_game = False
    os.makedirs(out, exist_ok=True)
    deps = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Deployment"}
    exprs = []
    nrules = 0
    for o in objs:
        if o["kind"] != "PrometheusRule":
            continue
        rf = RuleFile(o)
        ns = o["metadata"].get("namespace")
        if not ns:
            sys.exit("prom_check.py: %s has no namespace" % rf.name)
        for g in rf.spec["groups"]:
            for r in g["rules"]:
                exprs.append({"where": "%s %s" % (rf.name, r.get("alert") or r.get("record")),
                              "expr": r["expr"]})
        engines = {m for r in rf.rules.values() for m in re.findall(r'engine="([^"]+)"', r["expr"])}
        if rf.name.startswith("croupier-game-alerts-"):
            if len(engines) != 1:
                sys.exit("prom_check.py: %s selects engines %s, not one" % (rf.name, engines))
            engine = engines.pop()
            dep = deps.get("croupier-game-" + engine)
            if dep is None:
                sys.exit("prom_check.py: no Deployment croupier-game-%s for %s" % (engine, rf.name))
            game_tests(rf, ns, engine, int(env_of(dep, "DRAIN_MAX_SECONDS")),
                       int(dep["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]),
                       int(env_of(dep, "LEASE_POOL_SIZE")))
        elif rf.name == "croupier-gate-alerts":
            gate_tests(rf, ns)
        elif rf.name == "croupier-director-alerts":
            dep = deps.get("croupier-director")
            if dep is None:
                sys.exit("prom_check.py: no Deployment croupier-director for %s" % rf.name)
            director_tests(rf, ns, int(env_of(dep, "DRAIN_MAX_SECONDS")))
        else:
            sys.exit("prom_check.py: no unit tests for PrometheusRule %s: add them" % rf.name)
        untested = set(rf.rules) - {t["alert_rule_test"][0]["alertname"] for t in rf.tests}
        if untested:
            sys.exit("prom_check.py: %s: alerts without unit tests: %s" % (rf.name, sorted(untested)))
        rules_path = os.path.join(out, "rules-%s.yml" % rf.name)
        with open(rules_path, "w") as f:
            yaml.safe_dump({"groups": rf.spec["groups"]}, f, sort_keys=False)
        with open(os.path.join(out, "test-%s.yml" % rf.name), "w") as f:
            yaml.safe_dump({"rule_files": [os.path.basename(rules_path)],
                            "evaluation_interval": "10s", "tests": rf.tests}, f, sort_keys=False)
        # Self-test: each alert made to never fire, and to always fire, must fail these tests.
        own = rf.name in ("croupier-gate-alerts", "croupier-director-alerts")
        mutate = mutants and (own or not mutated_game)
        mutated_game = mutated_game or (mutate and not own)
        for alert in sorted(rf.rules) if mutate else []:
            for kind, expr in (("never", "vector(1) > 2"), ("always", "vector(1)")):
                groups = json.loads(json.dumps(rf.spec["groups"]))
                for g in groups:
                    for r in g["rules"]:
                        if r.get("alert") == alert:
                            r["expr"] = expr
                mut = os.path.join(out, "mutants", "%s-%s-%s" % (rf.name, alert, kind))
                os.makedirs(mut, exist_ok=True)
                with open(os.path.join(mut, "rules.yml"), "w") as f:
                    yaml.safe_dump({"groups": groups}, f, sort_keys=False)
                with open(os.path.join(mut, "test.yml"), "w") as f:
                    yaml.safe_dump({"rule_files": ["rules.yml"], "evaluation_interval": "10s",
                                    "tests": rf.tests}, f, sort_keys=False)
        nrules += 1
    if nrules == 0:
        sys.exit("prom_check.py: no PrometheusRule in %s" % args[0])

    ndash = 0
    for o in objs:
        if o["kind"] != "ConfigMap" or o["metadata"].get("labels", {}).get("grafana_dashboard") is None:
            continue
        for key, text in o.get("data", {}).items():
            dash = json.loads(text)
            rules = []
            for p in dash.get("panels", []):
                for t in p.get("targets", []):
                    e = t["expr"]
                    for k, v in DASHBOARD_VARS.items():
                        e = e.replace(k, v)
                    if "$" in e:
                        sys.exit("prom_check.py: %s panel %r: unknown variable in %r" %
                                 (key, p.get("title"), t["expr"]))
                    rules.append({"record": "croupier_dashboard:panel%d_%s" % (p["id"], t["refId"]),
                                  "expr": e})
                    exprs.append({"where": "%s panel %r %s" % (key, p.get("title"), t["refId"]),
                                  "expr": e})
            for v in dash.get("templating", {}).get("list", []):
                if v.get("type") != "query":
                    continue
                q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
                m = re.fullmatch(r"label_values\(([^,]+), *[a-z_]+\)", q)
                if not m:
                    sys.exit("prom_check.py: %s variable %s: not label_values(EXPR, label)" %
                             (key, v["name"]))
                exprs.append({"where": "%s variable %s" % (key, v["name"]), "expr": m.group(1)})
            if not rules:
                sys.exit("prom_check.py: dashboard %s has no expressions" % key)
            name = "dashboard-%s-%s.yml" % (o["metadata"]["name"], key.replace(".json", ""))
            with open(os.path.join(out, name), "w") as f:
                yaml.safe_dump({"groups": [{"name": "dashboard " + key, "rules": rules}]}, f,
                               sort_keys=False)
            ndash += 1
    if ndash == 0:
        sys.exit("prom_check.py: no ConfigMap labelled grafana_dashboard in %s" % args[0])
    with open(os.path.join(out, "exprs.json"), "w") as f:
        json.dump(exprs, f, indent=1)
    print("%d rule files, %d dashboards, %d expressions" % (nrules, ndash, len(exprs)))


main()

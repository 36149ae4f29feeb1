#!/usr/bin/env python3
"""Every flag and environment variable the manifests under k8s/ pass to a croupier binary exists
in that binary's --help, and every value they give parses (docs/deploy.md "The image").

  manifest_flags.py --source SRC --build BUILD            the build's binaries
  manifest_flags.py --source SRC --image IMAGE            the binaries inside the image
                                                          (scripts/image.sh podman run)

Each overlay is rendered with k8s/render.sh (kubectl kustomize). For every container of a
Deployment, StatefulSet, DaemonSet, Job or Pod whose command is a croupier binary
(/usr/local/bin/croupier-*):
  * the binary exists (in the build: one of meson's installed targets; in the image: the file);
  * each `--name[=value]` argument is a flag --help lists; no positional argument;
  * each variable CROUPIER_* of `env` is one --help lists ("env CROUPIER_..."); every other
    variable is read by something: a `$(NAME)` in the args, or the preStop script
    (k8s/prestop.sh, when the preStop hook runs it); no `envFrom` (it could not be checked);
  * the binary accepts the arguments and the environment as Kubernetes passes them ($(NAME)
    expanded from env, Service link and downward-API variables given sample values), followed
    by --help: config_parse() checks every value before it reaches --help (exit 0, else the
    binary's one-line error is shown).
Then a self-test: an unknown flag, an unknown CROUPIER_ variable, a variable nothing reads and a
bad value, each injected into a copy of the first container, must each be reported.
Exit 0 = all good, 1 = a problem (printed), 77 = skipped (no kubectl with kustomize v5).
"""
import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("manifest_flags: python3-yaml is missing (apt-get install python3-yaml)", file=sys.stderr)
    sys.exit(1)

KINDS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "Pod"}
BIN_DIR = "/usr/local/bin/"
# Values for what Kubernetes supplies itself: Service link variables (croupier-redis), the
# downward API (fieldRef), Secrets and ConfigMaps (valueFrom).
SAMPLE_FIELD = {"status.podIP": "10.1.2.3", "metadata.name": "croupier-pod-0",
                "metadata.namespace": "croupier", "spec.nodeName": "node-1"}


def fail(msg):
    print("manifest_flags: " + msg, file=sys.stderr)


class Binaries:
    """Runs the croupier binaries of the build or of the image; caches each one's --help."""

    def __init__(self, build=None, image=None, source=None):
        self.build, self.image, self.source = build, image, source
        self.help_cache = {}
        self.installed = {}
        if build:
            with open(os.path.join(build, "meson-info", "intro-installed.json")) as f:
                for built, dest in json.load(f).items():
                    if dest.startswith(BIN_DIR):
                        self.installed[dest] = built

    def exists(self, path):
        if self.build:
            return path in self.installed
        return self.run(["/bin/busybox", "test", "-x", path], {}).returncode == 0

    def run(self, argv, env):
        if self.build:
            exe = self.installed.get(argv[0], argv[0])
            return subprocess.run([exe] + argv[1:], env=env, capture_output=True, text=True,
                                  timeout=30)
        cmd = [os.path.join(self.source, "scripts", "image.sh"), "podman", "run", "--rm",
               "--network", "none"]
        for k, v in env.items():
            cmd += ["-e", "%s=%s" % (k, v)]
        return subprocess.run(cmd + [self.image] + argv, capture_output=True, text=True,
                              timeout=120)

    def help(self, path):
        if path not in self.help_cache:
            r = self.run([path, "--help"], {})
            text = r.stdout if r.returncode == 0 else ""
            flags = set(re.findall(r"^\s+--([a-z0-9][a-z0-9-]*)", text, re.M))
            envs = set(re.findall(r"\benv (CROUPIER_[A-Z0-9_]+)", text))
            self.help_cache[path] = (r.returncode, flags, envs, r.stderr.strip())
        return self.help_cache[path]


def expand(text, values):
    """Kubernetes' $(NAME) expansion: a defined NAME is replaced, $$ escapes, others stay."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else values.get(m.group(1), m.group(0)),
                  text)


def env_value(e):
    if "value" in e:
        return e["value"]
    vf = e.get("valueFrom", {})
    if "fieldRef" in vf:
        return SAMPLE_FIELD.get(vf["fieldRef"].get("fieldPath"), "x")
    return None  # a Secret or ConfigMap key: its value is not in the manifest


def check_container(bins, where, c, prestop_src, services):
    """Returns the problems of one container (a list of strings)."""
    problems = []
    cmd = c.get("command") or []
    if not cmd or not cmd[0].startswith(BIN_DIR + "croupier-"):
        return None
    exe = cmd[0]
    if not bins.exists(exe):
        return ["%s: %s is not a croupier binary of this build" % (where, exe)]
    rc, flags, envs, err = bins.help(exe)
    if rc != 0 or not flags:
        return ["%s: %s --help failed (status %d): %s" % (where, exe, rc, err)]
    args = list(cmd[1:]) + list(c.get("args") or [])
    if c.get("envFrom"):
        problems.append("%s: envFrom cannot be checked against %s --help" % (where, exe))
    env = c.get("env") or []
    prestop = ((c.get("lifecycle") or {}).get("preStop") or {}).get("exec", {}).get("command", [])
    prestop_reads = set()
    if any(a.endswith("prestop.sh") for a in prestop):
        prestop_reads = set(re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", prestop_src))
    referenced = set()
    for a in args:
        referenced |= set(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", a))
    for e in env:
        n = e["name"]
        if n.startswith("CROUPIER_"):
            if n not in envs:
                problems.append("%s: env %s is not a variable of %s (--help)" % (where, n, exe))
        elif n not in referenced and n not in prestop_reads:
            problems.append("%s: env %s is passed to %s but nothing reads it (no $(%s) in the "
                            "args, not read by the preStop script)" % (where, n, exe, n))
    for a in args:
        if not a.startswith("--"):
            problems.append("%s: positional argument %r: %s takes named flags only" %
                            (where, a, exe))
            continue
        name = a[2:].split("=", 1)[0]
        if name not in flags:
            problems.append("%s: flag --%s is not a flag of %s (--help)" % (where, name, exe))
    if problems:
        return problems
    # The arguments and variables as the container gets them, then --help.
    values = {}
    for s in services:
        up = s.upper().replace("-", "_")
        values[up + "_SERVICE_HOST"] = "10.0.0.10"
        values[up + "_SERVICE_PORT"] = "6379"
    penv = {}
    for e in env:
        v = env_value(e)
        if v is None:
            continue
        v = expand(v, values)
        values[e["name"]] = v
        penv[e["name"]] = v
    argv = [exe] + [expand(a, values) for a in args] + ["--help"]
    r = bins.run(argv, penv)
    if r.returncode != 0:
        problems.append("%s: %s refuses the manifest's arguments or environment (status %d): %s"
                        % (where, exe, r.returncode, (r.stderr or r.stdout).strip()[-300:]))
    return problems


def workloads(docs):
    for d in docs:
        if not d or d.get("kind") not in KINDS:
            continue
        spec = d["spec"] if d["kind"] == "Pod" else d["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            yield d, c


def check_docs(bins, env, docs, prestop_src):
    services = [d["metadata"]["name"] for d in docs if d and d.get("kind") == "Service"]
    problems, checked = [], 0
    for d, c in workloads(docs):
        where = "%s %s/%s container %s" % (env, d["kind"], d["metadata"]["name"], c["name"])
        p = check_container(bins, where, c, prestop_src, services)
        if p is None:
            continue
        checked += 1
        problems += p
        if not p:
            print("ok   %s: %s, %d args, %d env" % (where, c["command"][0],
                                                    len(c.get("args") or []),
                                                    len(c.get("env") or [])))
    return checked, problems


def self_test(bins, docs, prestop_src):
    """Each injected mistake must be caught."""
    target = None
    for d, c in workloads(docs):
        if (c.get("command") or [""])[0].startswith(BIN_DIR + "croupier-"):
            target = (d, c)
            break
    if target is None:
        return ["self-test: no croupier container to inject mistakes into"]
    injections = {
        "an unknown flag": lambda c: c.setdefault("args", []).append("--no-such-flag=1"),
        "an unknown CROUPIER_ variable":
            lambda c: c.setdefault("env", []).append({"name": "CROUPIER_NO_SUCH", "value": "1"}),
        "a variable nothing reads":
            lambda c: c.setdefault("env", []).append({"name": "UNREAD_VALUE", "value": "1"}),
        "a positional argument": lambda c: c.setdefault("args", []).append("stray"),
        "a bad value": lambda c: c.setdefault("args", []).append("--health-listen=localhost:80"),
    }
    problems = []
    services = [d["metadata"]["name"] for d in docs if d and d.get("kind") == "Service"]
    for what, inject in injections.items():
        c = copy.deepcopy(target[1])
        inject(c)
        p = check_container(bins, "self-test", c, prestop_src, services)
        if not p:
            problems.append("self-test: %s was not caught" % what)
        else:
            print("ok   self-test: %s is caught (%s)" % (what, p[0].split(": ", 1)[1][-110:]))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build")
    ap.add_argument("--image")
    o = ap.parse_args()
    if bool(o.build) == bool(o.image):
        ap.error("give --build or --image")
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("manifest_flags: SKIP: kubectl is missing (tests/k8s/run.sh installs it)")
        return 77
    v = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True).stdout
    m = re.search(r"Kustomize Version: v?(\d+)", v)
    if not m or int(m.group(1)) < 5:
        print("manifest_flags: SKIP: kubectl's kustomize is older than v5 (tests/k8s/run.sh)")
        return 77
    with open(os.path.join(o.source, "k8s", "prestop.sh")) as f:
        prestop_src = f.read()
    bins = Binaries(build=o.build, image=o.image, source=o.source)
    overlays = sorted(os.listdir(os.path.join(o.source, "k8s", "overlays")))
    problems, total, first_docs = [], 0, None
    for env in overlays:
        r = subprocess.run(["sh", os.path.join(o.source, "k8s", "render.sh"), env],
                           capture_output=True, text=True)
        if r.returncode != 0:
            problems.append("%s: k8s/render.sh failed: %s" % (env, r.stderr.strip()))
            continue
        docs = list(yaml.safe_load_all(r.stdout))
        first_docs = first_docs or docs
        n, p = check_docs(bins, env, docs, prestop_src)
        total += n
        problems += p
    if total == 0:
        problems.append("no container runs a croupier binary in any overlay")
    if first_docs:
        problems += self_test(bins, first_docs, prestop_src)
    for p in problems:
        fail(p)
    print("manifest_flags: %d containers in %d overlays checked against %s: %s" %
          (total, len(overlays), o.build or o.image, "OK" if not problems else
           "%d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

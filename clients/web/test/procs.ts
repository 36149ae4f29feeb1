// What the browser tests share besides the layout check (test/layout.ts): where things are, the
// processes they start and stop (a line awaited on a child's output, its exit, a game server's
// drain the way kubelet does it), and headless Chromium.
import { ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

import * as rig from "@croupier/client/dist/test/rig.js";
import puppeteer, { Browser } from "puppeteer-core";

export const SRC = join(import.meta.dirname, "..", "..", "..", "..");
export const WEB = join(SRC, "clients", "web");
export const SHOTS = join(rig.build, "web-test");
export const CHROMIUM = process.env.CROUPIER_CHROMIUM ?? "/usr/bin/chromium";
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/* The first match's group 1 of re in child's standard output, within ms. */
export function waitLine(child: ChildProcess, re: RegExp, ms: number): Promise<string> {
    return new Promise((res, rej) => {
        let buf = "";
        const t = setTimeout(() => rej(new Error(`no ${re} within ${ms} ms: ${buf}`)), ms);
        child.stdout?.on("data", (d) => {
            buf += d.toString();
            const m = re.exec(buf);
            if (m) {
                clearTimeout(t);
                res(m[1]);
            }
        });
    });
}

/* The child's exit code, or null when it has not exited within ms. */
export function exited(child: ChildProcess, ms: number): Promise<number | null> {
    if (child.exitCode !== null)
        return Promise.resolve(child.exitCode);
    return new Promise((res) => {
        const t = setTimeout(() => res(null), ms);
        child.once("exit", (code) => {
            clearTimeout(t);
            res(code);
        });
    });
}

/* The real preStop hook, then SIGTERM, as kubelet does (tests/e2e/lib.sh e2e_pod_terminate). */
export async function terminateGame(p: rig.Proc): Promise<number | null> {
    const hook = spawn("busybox", ["sh", join(SRC, "k8s", "prestop.sh")], { stdio: "ignore",
        env: { ...process.env, HEALTH_PORT: String(p.health), DRAIN_MAX_SECONDS: "20" } });
    await exited(hook, 25000);
    p.child.kill("SIGTERM");
    return rig.exited(p, 15000);
}

/* clients/web/serve.mjs on dist/ (the page), with its extra arguments; its base URL. */
export async function serveDist(children: ChildProcess[], extra: string[] = []): Promise<string> {
    const serve = spawn(process.execPath, [join(WEB, "serve.mjs"), "--listen", "127.0.0.1:0",
        "--root", join(WEB, "dist"), ...extra], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(serve);
    return waitLine(serve, /serving (http:\S+)/, 5000);
}

export function launchBrowser(): Promise<Browser> {
    return puppeteer.launch({
        executablePath: CHROMIUM, headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
}

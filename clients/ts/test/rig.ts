// The test rig: a real redis-server, real croupier-game, croupier-gate and croupier-director
// processes from the meson build ($CROUPIER_BUILD, default ../../build), all on loopback with free
// ports, stopped again by stopAll(); tournaments created with croupier-ctl. Nothing is mocked.
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const build = resolve(process.env.CROUPIER_BUILD ?? join(import.meta.dirname, "..", "..", "..", "..", "build"));
const gateBin = join(build, "gateway", "croupier-gate");
const gameBin = join(build, "engine", "process", "croupier-game");
const directorBin = join(build, "tournament", "croupier-director");
const ctlBin = join(build, "tools", "croupier-ctl");
const SECRET = "sdk-test-secret-0123456789";

export function checkBuild(): void {
    for (const b of [gateBin, gameBin])
        if (!existsSync(b))
            throw new Error(`${b} is missing: build croupier first (meson) or set CROUPIER_BUILD`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/* Whether port is free on 127.0.0.1 now (0: the kernel's pick); the port bound, or 0. */
function tryPort(port: number): Promise<number> {
    return new Promise((res) => {
        const s = createServer();
        s.once("error", () => res(0));
        s.listen(port, "127.0.0.1", () => {
            const a = s.address();
            s.close(() => res(typeof a === "object" && a !== null ? a.port : 0));
        });
    });
}

/* A port free a moment ago, picked at random below the kernel's ephemeral range: a port from
 * listen(0) comes from the range every outgoing connection draws its local port from, so a
 * client of a test running in parallel could take it before our server binds it (as
 * tests/support/support.c ts_free_port says). */
export async function freePort(): Promise<number> {
    let lo = 32768;
    try {
        lo = parseInt(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8"), 10) || lo;
    } catch {
        /* not Linux: the default range's start */
    }
    if (lo > 12000) {
        const from = Math.min(lo - 10000, 20000);
        for (let i = 0; i < 64; i++) {
            const port = await tryPort(from + Math.floor(Math.random() * (lo - from)));
            if (port > 0)
                return port;
        }
    }
    const port = await tryPort(0);
    if (port === 0)
        throw new Error("no free port on 127.0.0.1");
    return port;
}

/* One inline Redis command; the raw reply. */
export function redis(port: number, cmd: string): Promise<string> {
    return new Promise((res, rej) => {
        const c = createConnection(port, "127.0.0.1", () => c.write(cmd + "\r\n"));
        let buf = "";
        c.on("data", (d) => {
            buf += d.toString();
            if (buf.endsWith("\r\n")) {
                c.end();
                res(buf);
            }
        });
        c.on("error", rej);
    });
}

async function httpStatus(port: number, path: string): Promise<number> {
    try {
        const r = await fetch(`http://127.0.0.1:${port}${path}`);
        await r.text();
        return r.status;
    } catch {
        return 0;
    }
}

export interface Proc {
    child: ChildProcess;
    log: string[];
    port: number;
    health: number;
    ws: number;
}

const procs: Proc[] = [];
let dir = "";
let secretPath = "";
export let redisPort = 0;

function track(child: ChildProcess, p: Omit<Proc, "child" | "log">): Proc {
    const proc: Proc = { child, log: [], ...p };
    child.stdout?.on("data", (d) => proc.log.push(d.toString()));
    child.stderr?.on("data", (d) => proc.log.push(d.toString()));
    procs.push(proc);
    return proc;
}

async function ready(p: Proc, what: string): Promise<void> {
    const end = Date.now() + 10000;
    while (Date.now() < end) {
        if (p.child.exitCode !== null)
            break;
        if ((await httpStatus(p.health, "/readyz")) === 200)
            return;
        await sleep(50);
    }
    throw new Error(`${what} did not become ready:\n${p.log.join("")}`);
}

export async function startRedis(): Promise<void> {
    checkBuild();
    dir = mkdtempSync(join(tmpdir(), "croupier-sdk-"));
    secretPath = join(dir, "secret");
    writeFileSync(secretPath, SECRET + "\n");
    redisPort = await freePort();
    const child = spawn("redis-server", ["--port", String(redisPort), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--dir", dir], { stdio: ["ignore", "pipe", "pipe"] });
    track(child, { port: redisPort, health: 0, ws: 0 });
    const end = Date.now() + 5000;
    while (Date.now() < end) {
        try {
            if ((await redis(redisPort, "PING")).startsWith("+PONG"))
                return;
        } catch { /* not yet */ }
        await sleep(50);
    }
    throw new Error("redis-server did not start (is it installed?)");
}

export async function startGame(engine = "test", extra: string[] = []): Promise<Proc> {
    const port = await freePort(), health = await freePort();
    const child = spawn(gameBin, ["--engine", engine, ...extra, "--listen", `127.0.0.1:${port}`,
        "--advertise", `127.0.0.1:${port}`, "--health-listen", `127.0.0.1:${health}`,
        "--redis", `127.0.0.1:${redisPort}`, "--lease-ttl-ms", "900", "--drain-max-seconds", "20"],
        { stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, CROUPIER_TEST_ROUND_MS: "300", CROUPIER_TEST_GAP_MS: "20" } });
    const p = track(child, { port, health, ws: 0 });
    await ready(p, "croupier-game");
    return p;
}

export async function startGate(id: string): Promise<Proc> {
    const port = await freePort(), health = await freePort(), ws = await freePort();
    const child = spawn(gateBin, ["--listen", `127.0.0.1:${port}`, "--ws-listen", `127.0.0.1:${ws}`,
        "--health-listen", `127.0.0.1:${health}`, "--redis", `127.0.0.1:${redisPort}`,
        "--token-secret-file", secretPath, "--gate-id", id, "--drain-window-ms", "200",
        "--close-timeout-ms", "2000", "--goaway-spread-ms", "300", "--link-ping-ms", "200"],
        { stdio: ["ignore", "pipe", "pipe"] });
    const p = track(child, { port, health, ws });
    await ready(p, `croupier-gate ${id}`);
    return p;
}

/* A croupier-director (tournament/director_main.c) that scans for tournaments every 100 ms. */
export async function startDirector(id: string): Promise<Proc> {
    for (const b of [directorBin, ctlBin])
        if (!existsSync(b))
            throw new Error(`${b} is missing: build croupier first (meson) or set CROUPIER_BUILD`);
    const health = await freePort();
    const child = spawn(directorBin, ["--redis", `127.0.0.1:${redisPort}`,
        "--health-listen", `127.0.0.1:${health}`, "--director-id", id, "--scan-ms", "100",
        "--drain-max-seconds", "5"], { stdio: ["ignore", "pipe", "pipe"] });
    const p = track(child, { port: 0, health, ws: 0 });
    await ready(p, `croupier-director ${id}`);
    return p;
}

/* croupier-ctl against the rig's Redis (docs/ops.md); its standard output. */
export function ctl(...args: string[]): string {
    return execFileSync(ctlBin, ["--redis", `127.0.0.1:${redisPort}`, ...args]).toString();
}

/* A tournament created with `croupier-ctl tour create` (structure: docs/tournaments.md
 * "Configuration"; an MTT needs startInSeconds); its id, once a director owns it (requests are
 * answered only then). */
export async function createTournament(name: string, structure: object,
                                       startInSeconds?: number): Promise<number> {
    const file = join(dir, `tour-${name.replace(/\W/g, "_")}.json`);
    writeFileSync(file, JSON.stringify(structure));
    const args = ["--json", "tour", "create", "--structure", file, "--name", name];
    if (startInSeconds !== undefined)
        args.push("--start-in-seconds", String(startInSeconds));
    const id = Number((JSON.parse(ctl(...args)) as { id: number }).id);
    const end = Date.now() + 5000;
    while (Date.now() < end) {
        if ((await redis(redisPort, `EXISTS {croupier:tour:${id}}:owner`)).startsWith(":1"))
            return id;
        await sleep(20);
    }
    throw new Error(`no director claimed tournament ${id}`);
}

/* A wallet's balance (null when it has none). */
export async function wallet(player: number): Promise<number | null> {
    const r = await redis(redisPort, `GET {croupier:money}:wallet:${player}`);
    return r.startsWith("$-1") ? null : Number(r.split("\r\n")[1]);
}

/* The gateways' token secret file (for croupier-bot, which mints its own tokens). */
export function secretFile(): string {
    return secretPath;
}

/* A token for player (ttl in seconds; negative: already expired), minted by croupier-gate. */
export function token(player: number, ttl = 600): string {
    return execFileSync(gateBin, ["token", "--secret-file", secretPath, "--player", String(player),
        "--ttl", String(ttl)]).toString().trim();
}

export async function seedWallet(player: number): Promise<void> {
    await redis(redisPort, `SET {croupier:money}:wallet:${player} 1000000 NX`);
}

export function exited(p: Proc, ms: number): Promise<number | null> {
    if (p.child.exitCode !== null)
        return Promise.resolve(p.child.exitCode);
    return new Promise((res) => {
        const t = setTimeout(() => res(null), ms);
        p.child.once("exit", (code) => {
            clearTimeout(t);
            res(code);
        });
    });
}

/* SIGSTOP: the process is frozen (its kernel still accepts connections and data). */
export function freeze(p: Proc): void {
    p.child.kill("SIGSTOP");
}

export function thaw(p: Proc): void {
    if (p.child.exitCode === null)
        p.child.kill("SIGCONT");
}

export async function stopAll(): Promise<void> {
    for (const p of procs.reverse()) {
        if (p.child.exitCode === null) {
            p.child.kill("SIGCONT"); /* a frozen one could not take the SIGTERM */
            p.child.kill("SIGTERM");
            if ((await exited(p, 5000)) === null)
                p.child.kill("SIGKILL");
        }
    }
    procs.length = 0;
    if (dir !== "")
        rmSync(dir, { recursive: true, force: true });
}

export function url(p: Proc): string {
    return `ws://127.0.0.1:${p.ws}/`;
}

export async function drainGame(p: Proc): Promise<number> {
    return httpStatus(p.health, "/drain");
}

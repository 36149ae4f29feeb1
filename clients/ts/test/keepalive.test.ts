// The SDK's keepalive against fake gateways (no processes): the WebSocket is a stand-in that
// answers Login and, while its gateway is "alive", Ping; a "frozen" gateway answers the Login and
// then nothing, as a SIGSTOPped process whose kernel still takes the bytes
// (docs/protocol.md "Keepalive"). The real thing: gateway.test.ts, a gateway SIGSTOPped.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, croupier } from "../src/index.js";
import type { WebSocketLike } from "../src/index.js";

type Mode = "alive" | "frozen";

class FakeWs implements WebSocketLike {
    static all: FakeWs[] = [];
    static modes = new Map<string, Mode>();
    static withTerminate = true;
    static seated = false; /* LoginResult.seated; an alive gateway answers Resume */
    binaryType = "";
    readyState = 0;
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: unknown }) => void) | null = null;
    onclose: ((ev: { code: number; reason: string }) => void) | null = null;
    onerror: ((ev: unknown) => void) | null = null;
    readonly sent: croupier.ClientMessage[] = [];
    terminated = false;
    closedWith: number | null = null;
    terminate?: () => void;

    constructor(readonly url: string) {
        FakeWs.all.push(this);
        if (FakeWs.withTerminate)
            this.terminate = () => {
                this.terminated = true;
                this.readyState = 3;
                setTimeout(() => this.onclose?.({ code: 1006, reason: "" }), 1);
            };
        setTimeout(() => {
            this.readyState = 1;
            this.onopen?.({});
        }, 1);
    }

    pings(): number {
        return this.sent.filter((m) => m.ping).length;
    }

    push(m: croupier.IServerMessage): void {
        const data = croupier.ServerMessage.encode(m).finish();
        setTimeout(() => {
            if (this.readyState === 1)
                this.onmessage?.({ data });
        }, 1);
    }

    send(data: Uint8Array): void {
        const m = croupier.ClientMessage.decode(data);
        this.sent.push(m);
        const rid = m.requestId;
        if (m.login) {
            this.push({ requestId: rid, loginResult: { playerId: 9, sessionId: BigInt(FakeWs.all.length),
                                                       seated: FakeWs.seated } });
            return;
        }
        if ((FakeWs.modes.get(this.url) ?? "alive") === "frozen")
            return;
        if (m.ping)
            this.push({ requestId: rid, pong: { nonce: m.ping.nonce, serverTimeMs: Date.now() } });
        if (m.resume)
            this.push({ requestId: rid, snapshot: { deskId: 7n, yourSeat: 1,
                                                    engine: croupier.Engine.ENGINE_GAME,
                                                    game: "test", stake: 10 } });
    }

    close(code?: number): void {
        this.closedWith = code ?? 1000;
        this.readyState = 3; /* a frozen gateway never answers the close: no onclose */
    }
}

function fresh(modes: Record<string, Mode>, withTerminate = true, seated = false): void {
    FakeWs.all = [];
    FakeWs.modes = new Map(Object.entries(modes));
    FakeWs.withTerminate = withTerminate;
    FakeWs.seated = seated;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function client(urls: string[], idle: number, timeout: number): Client {
    return new Client({ urls, token: "t", WebSocket: FakeWs, keepaliveIdleMs: idle,
                        keepaliveTimeoutMs: timeout, connectTimeoutMs: 1000 });
}

test("a quiet live gateway gets a Ping after the idle time and is kept when it answers", async () => {
    fresh({ "ws://a/": "alive" });
    const c = client(["ws://a/", "ws://b/"], 50, 100);
    const silent: string[] = [];
    c.on("gatewaySilent", (s) => silent.push(s.url));
    try {
        await c.connect();
        await sleep(450);
        assert.equal(silent.length, 0);
        assert.equal(FakeWs.all.length, 1, "no other connection was opened");
        const n = FakeWs.all[0].pings();
        assert.ok(n >= 3 && n <= 12, `one probe per idle period (${n} in 450 ms at 50 ms)`);
    } finally {
        c.close();
    }
});

test("any frame counts: a gateway that pushes needs no probe, and is left once it stops", async () => {
    fresh({ "ws://a/": "frozen" }); /* answers no Ping */
    const c = client(["ws://a/", "ws://b/"], 200, 150);
    const silent: { url: string; silentMs: number }[] = [];
    c.on("gatewaySilent", (s) => silent.push(s));
    try {
        await c.connect();
        const ws = FakeWs.all[0];
        for (let i = 0; i < 20; i++) { /* a push every 20 ms for 400 ms */
            ws.push({ turn: { seat: 0, timeLeftMs: 1000 } });
            await sleep(20);
        }
        assert.equal(ws.pings(), 0, "no probe while frames arrive");
        assert.equal(silent.length, 0);
        await sleep(1000); /* pushes stop: idle 200 ms, then the probe, unanswered for 150 ms */
        assert.equal(ws.pings(), 1, "one probe");
        assert.equal(silent.length, 1);
        assert.equal(silent[0].url, "ws://a/");
        assert.ok(silent[0].silentMs >= 350, `silent for ${silent[0].silentMs} ms`);
    } finally {
        c.close();
    }
});

test("a frozen gateway is left for the next URL: gatewaySilent, then reconnected there, and a " +
     "request made meanwhile is answered", async () => {
    fresh({ "ws://a/": "frozen", "ws://b/": "alive" });
    const c = client(["ws://a/", "ws://b/"], 50, 100);
    const order: string[] = [];
    c.on("gatewaySilent", (s) => order.push(`silent ${s.url}`));
    c.on("disconnected", (d) => order.push(`disconnected ${d.code} ${d.reason}`));
    const back = new Promise<string>((res) => c.on("reconnected", (r) => res(r.url)));
    try {
        await c.connect();
        const t0 = Date.now();
        const during = c.ping(); /* unanswered on a, sent again on b with its id */
        assert.equal(await back, "ws://b/");
        const took = Date.now() - t0;
        assert.ok(took >= 150 && took < 3000, `left after ${took} ms (idle 50 + timeout 100)`);
        assert.deepEqual(order, ["silent ws://a/", "disconnected 4000 gateway silent"]);
        assert.ok(FakeWs.all[0].terminated, "the frozen socket is abandoned at once");
        assert.ok((await during) > 0, "the request waiting on the frozen gateway was answered");
        const pingA = FakeWs.all[0].sent.find((m) => m.ping && Number(m.requestId) > 1);
        const pingB = FakeWs.all[1].sent.filter((m) => m.ping);
        assert.ok(pingA !== undefined);
        assert.ok(pingB.some((m) => Number(m.requestId) === Number(pingA.requestId)),
                  "the same request id on the next gateway");
    } finally {
        c.close();
    }
});

test("a gateway that goes silent during the resume of a reconnect is left too, the seat kept",
     async () => {
    fresh({ "ws://a/": "frozen", "ws://b/": "frozen", "ws://c/": "alive" }, true, true);
    const c = client(["ws://a/", "ws://b/", "ws://c/"], 50, 100);
    const silent: string[] = [];
    c.on("gatewaySilent", (s) => silent.push(s.url));
    const back = new Promise<{ url: string; snapshot: croupier.ISnapshot | null }>(
        (res) => c.on("reconnected", (r) => res(r)));
    try {
        await c.connect();
        const r = await back;
        assert.equal(r.url, "ws://c/");
        assert.ok(r.snapshot !== null && Number(r.snapshot.deskId) === 7, "resumed at c");
        assert.deepEqual(silent, ["ws://a/", "ws://b/"]);
        assert.ok(FakeWs.all[1].sent.some((m) => m.resume), "b got the Resume it never answered");
    } finally {
        c.close();
    }
});

test("without terminate() (a browser's WebSocket) the socket is closed with 4000", async () => {
    fresh({ "ws://a/": "frozen", "ws://b/": "alive" }, false);
    const c = client(["ws://a/", "ws://b/"], 50, 100);
    const back = new Promise<string>((res) => c.on("reconnected", (r) => res(r.url)));
    try {
        await c.connect();
        assert.equal(await back, "ws://b/");
        assert.equal(FakeWs.all[0].closedWith, 4000);
    } finally {
        c.close();
    }
});

test("keepaliveIdleMs 0: no probe, the client stays on the frozen gateway", async () => {
    fresh({ "ws://a/": "frozen" });
    const c = client(["ws://a/", "ws://b/"], 0, 100);
    let silent = 0;
    c.on("gatewaySilent", () => silent++);
    try {
        await c.connect();
        await sleep(400);
        assert.equal(FakeWs.all[0].pings(), 0);
        assert.equal(silent, 0);
        assert.equal(FakeWs.all.length, 1);
    } finally {
        c.close();
    }
});

// The SDK against the real gateway and game servers (tests/rig.ts): login errors, a table
// played through, a gateway SIGTERM and a game-server drain while clients play.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, CroupierError, croupier } from "../src/index.js";
import * as rig from "./rig.js";

const ENGINE = croupier.Engine.ENGINE_TRADITIONAL;
const PASS: croupier.IAction = { shedding: { move: croupier.SheddingMove.SHEDDING_PASS } };

before(async () => {
    await rig.startRedis();
});
after(async () => {
    await rig.stopAll();
});

/* Acts until one action is played in a round (NO_ROUND between rounds). */
async function playOne(c: Client): Promise<number> {
    const end = Date.now() + 8000;
    while (Date.now() < end) {
        try {
            return (await c.act(PASS)).eventSeq;
        } catch (e) {
            if (!(e instanceof CroupierError) || e.code !== croupier.ErrorCode.NO_ROUND)
                throw e;
            await rig.sleep(20);
        }
    }
    throw new Error("no round started");
}

function nextEvent<T>(c: Client,
                      ev: "roundEnd" | "reconnected" | "moved" | "tableClosing" | "room" |
                          "gatewaySilent",
                      ms: number): Promise<T> {
    return new Promise((res, rej) => {
        const t = setTimeout(() => rej(new Error(`no ${ev} within ${ms} ms`)), ms);
        const fn = (arg: unknown) => {
            clearTimeout(t);
            c.off(ev, fn);
            res(arg as T);
        };
        c.on(ev, fn);
    });
}

async function player(gates: string[], id: number,
                      opts: { keepaliveIdleMs?: number; keepaliveTimeoutMs?: number } = {}):
    Promise<Client> {
    await rig.seedWallet(id);
    const c = new Client({ urls: gates, token: () => rig.token(id), ...opts });
    const login = await c.connect();
    assert.equal(Number(login.playerId), id);
    return c;
}

test("login errors reject with the protocol's code", async () => {
    const gate = await rig.startGate("sdk-login");
    const bad = new Client({ urls: [rig.url(gate)], token: "v1.1.9999999999.00" });
    await assert.rejects(bad.connect(), (e: unknown) =>
        e instanceof CroupierError && e.code === croupier.ErrorCode.TOKEN_INVALID);
    const old = new Client({ urls: [rig.url(gate)], token: rig.token(5, -60) });
    await assert.rejects(old.connect(), (e: unknown) =>
        e instanceof CroupierError && e.code === croupier.ErrorCode.TOKEN_EXPIRED);
    /* Before a seat: NOT_SEATED, typed. */
    const c = await player([rig.url(gate)], 6);
    await assert.rejects(c.act(PASS), (e: unknown) =>
        e instanceof CroupierError && e.codeName === "NOT_SEATED");
    c.close();
});

test("two players join, play and see the round end; the lobby lists tables", async () => {
    await rig.startGame();
    const gate = await rig.startGate("sdk-play");
    const a = await player([rig.url(gate)], 21), b = await player([rig.url(gate)], 22);
    const ja = await a.join(ENGINE, "test", 10), jb = await b.join(ENGINE, "test", 10);
    assert.ok(ja.joined && jb.joined);
    assert.equal(Number(ja.joined.deskId), Number(jb.joined.deskId));
    const ends = nextEvent<croupier.IRoundEnd>(a, "roundEnd", 8000);
    assert.ok((await playOne(a)) > 0);
    await ends;
    const tables = await a.listTables({ engine: ENGINE });
    assert.ok(Array.isArray(tables));
    await b.leave();
    a.close();
    b.close();
});

test("a gateway SIGTERM: the clients reconnect to the other gateway, resume and play on", async () => {
    const g1 = await rig.startGate("sdk-g1"), g2 = await rig.startGate("sdk-g2");
    const urls = [rig.url(g1), rig.url(g2)];
    const a = await player(urls, 31), b = await player(urls, 32);
    await a.join(ENGINE, "test", 10);
    await b.join(ENGINE, "test", 10);
    await playOne(a);
    let reconnects = 0;
    a.on("reconnected", () => reconnects++);
    const back = nextEvent<{ url: string; snapshot: croupier.ISnapshot | null }>(a, "reconnected",
                                                                               10000);
    const backB = nextEvent(b, "reconnected", 10000);
    g1.child.kill("SIGTERM");
    /* A request made while the gateway goes away is answered after the reconnect. */
    const during = a.ping();
    const r = await back;
    await backB;
    assert.equal(r.url, urls[1]);
    assert.ok(r.snapshot !== null, "the seat was resumed");
    assert.ok((await during) > 0);
    assert.equal(await rig.exited(g1, 5000), 0);
    assert.ok((await playOne(a)) > 0);
    await nextEvent(a, "roundEnd", 8000);
    assert.equal(reconnects, 1);
    a.close();
    b.close();
});

test("keepalive: a quiet live gateway answers the probes; a frozen one (SIGSTOP) is left for the other",
     async () => {
    await rig.startGame();
    const g1 = await rig.startGate("sdk-ka1"), g2 = await rig.startGate("sdk-ka2");
    const urls = [rig.url(g1), rig.url(g2)];
    const ka = { keepaliveIdleMs: 300, keepaliveTimeoutMs: 700 };
    /* Not seated: nothing is pushed, so only the probes' Pongs keep the connection alive. */
    const quiet = await player(urls, 71, ka);
    const a = await player(urls, 72, ka);
    const b = await player([urls[1]], 73); /* on the gateway that stays up */
    const events: string[] = [];
    for (const c of [quiet, a]) {
        c.on("gatewaySilent", (s) => events.push(`silent ${s.url}`));
        c.on("disconnected", (d) => events.push(`disconnected ${d.reason}`));
    }
    try {
        await rig.sleep(2500); /* several probe periods */
        assert.equal(events.length, 0, `no live gateway is taken for silent: ${events.join(", ")}`);
        assert.equal(quiet.url, urls[0]);
        await a.join(ENGINE, "test", 10);
        await b.join(ENGINE, "test", 10); /* a round needs two players */
        await playOne(a);
        const silent = nextEvent<{ url: string; silentMs: number }>(a, "gatewaySilent", 10000);
        const back = nextEvent<{ url: string; snapshot: croupier.ISnapshot | null }>(
            a, "reconnected", 15000);
        const t0 = Date.now();
        rig.freeze(g1);
        const s = await silent;
        const noticed = Date.now() - t0;
        assert.equal(s.url, urls[0]);
        assert.ok(s.silentMs >= ka.keepaliveIdleMs, `silent for ${s.silentMs} ms`);
        /* idle + timeout, with a generous margin for a loaded machine */
        assert.ok(noticed < 5000, `noticed ${noticed} ms after the freeze`);
        const r = await back;
        assert.equal(r.url, urls[1], "moved to the other gateway");
        assert.ok(r.snapshot !== null, "the seat was resumed");
        /* It plays on through the other gateway while the first one is still frozen. */
        const ends = nextEvent(a, "roundEnd", 10000);
        assert.ok((await playOne(a)) > 0);
        await ends;
        assert.ok(events.includes(`silent ${urls[0]}`));
    } finally {
        rig.thaw(g1);
        quiet.close();
        a.close();
        b.close();
    }
});

test("a game server drain: the table moves, the clients follow and finish a round", async () => {
    const games = [await rig.startGame(), await rig.startGame()];
    const gate = await rig.startGate("sdk-drain");
    const a = await player([rig.url(gate)], 41), b = await player([rig.url(gate)], 42);
    await a.join(ENGINE, "test", 10);
    await b.join(ENGINE, "test", 10);
    await playOne(a);
    /* The server holding the seat, from the seat record ("<server> <address> ..."). */
    const rec = await rig.redis(rig.redisPort, "GET {croupier:seat}:41");
    const address = rec.split("\r\n")[1].split(" ")[1];
    const holder = games.find((g) => address === `127.0.0.1:${g.port}`);
    assert.ok(holder !== undefined, `the seat is on ${address}, a server of this test`);
    const moved = nextEvent<croupier.IMoved>(a, "moved", 15000);
    assert.equal(await rig.drainGame(holder), 200);
    const m = await moved;
    assert.ok(m.to?.deskId !== undefined);
    /* The new table plays a round through. */
    const ends = nextEvent(a, "roundEnd", 10000);
    assert.ok((await playOne(a)) > 0);
    await ends;
    a.close();
    b.close();
});

/* A hold'em player the way an application would write one: it acts on its Turn (check with
 * nothing to call, else call), and after a reconnect on the Snapshot when the turn is its own. */
function holdemPlayer(c: Client, seat: () => number): { ends: croupier.IRoundEnd[] } {
    const st = { ends: [] as croupier.IRoundEnd[] };
    const act = (toCall: number) => {
        const move = toCall > 0 ? croupier.HoldemMove.HOLDEM_CALL : croupier.HoldemMove.HOLDEM_CHECK;
        c.act({ holdem: { move } }).catch((e: unknown) => {
            /* a turn already played (answered before the reconnect) or over: the next Turn or
             * Snapshot tells */
            if (!(e instanceof CroupierError))
                throw e;
        });
    };
    c.on("turn", (t) => {
        if (t.seat === seat())
            act(Number(t.toCall ?? 0));
    });
    c.on("snapshot", (s) => {
        if (s.turnSeat !== undefined && s.turnSeat !== null && s.turnSeat === s.yourSeat)
            act(Number(s.holdem?.toCall ?? 0));
    });
    c.on("roundEnd", (e) => st.ends.push(e));
    return st;
}

test("hold'em through a gateway SIGTERM during play: both players resume and the hands complete",
     async () => {
    await rig.startGame("holdem", ["--holdem-seats", "2", "--holdem-action-ms", "5000"]);
    const g1 = await rig.startGate("sdk-he1"), g2 = await rig.startGate("sdk-he2");
    const urls = [rig.url(g1), rig.url(g2)];
    const a = await player(urls, 51), b = await player(urls, 52);
    let seatA = -1, seatB = -1;
    const pa = holdemPlayer(a, () => seatA), pb = holdemPlayer(b, () => seatB);
    const HOLDEM = croupier.Engine.ENGINE_HOLDEM;
    const ja = await a.join(HOLDEM, "holdem", 10), jb = await b.join(HOLDEM, "holdem", 10);
    seatA = ja.joined?.seat ?? -1;
    seatB = jb.joined?.seat ?? -1;
    assert.ok(seatA >= 0 && seatB >= 0 && seatA !== seatB);
    /* A first hand ends, then the gateway goes away during the next one. */
    const end = Date.now() + 20000;
    while (pa.ends.length < 1 && Date.now() < end)
        await rig.sleep(20);
    assert.ok(pa.ends.length >= 1, "a first hand ended");
    const before = pa.ends.length;
    const back = Promise.all([nextEvent(a, "reconnected", 10000), nextEvent(b, "reconnected", 10000)]);
    g1.child.kill("SIGTERM");
    await back;
    while (pa.ends.length < before + 2 && Date.now() < end + 20000)
        await rig.sleep(20);
    assert.ok(pa.ends.length >= before + 2, "hands go on after the reconnect");
    const completed = pa.ends.filter((e) => e.outcome === croupier.RoundOutcome.OUTCOME_COMPLETED);
    assert.ok(completed.length >= 2, `completed hands: ${completed.length} of ${pa.ends.length}`);
    assert.ok(pb.ends.length >= 2);
    a.close();
    b.close();
});

test("a private room: created with a code, joined by it, two deals, the final scoreboard", async () => {
    await rig.startGame();
    const gate = await rig.startGate("sdk-room");
    const a = await player([rig.url(gate)], 61), b = await player([rig.url(gate)], 62);
    try {
        const ja = await a.createRoom(ENGINE, "test", 10, { deals: 2, seats: 2 });
        const code = ja.room?.code ?? "";
        assert.match(code, /^[0-9]{6}$/);
        assert.equal(ja.room?.state, croupier.RoomState.ROOM_WAITING);
        const other = String((Number(code) + 1) % 1000000).padStart(6, "0");
        await assert.rejects(b.joinRoom(other), (e: unknown) =>
            e instanceof CroupierError && e.code === croupier.ErrorCode.ROOM_NOT_FOUND);
        await assert.rejects(b.joinRoom("12ab56"), (e: unknown) =>
            e instanceof CroupierError && e.code === croupier.ErrorCode.BAD_REQUEST);
        await assert.rejects(b.disbandRoom(), (e: unknown) =>
            e instanceof CroupierError && e.code === croupier.ErrorCode.NOT_SEATED);
        const ended = new Promise<croupier.IRoomInfo>((res) => {
            a.on("room", (r: croupier.IRoomInfo) => {
                if (r.state === croupier.RoomState.ROOM_FINISHED)
                    res(r);
            });
        });
        const closing = nextEvent<croupier.ITableClosing>(b, "tableClosing", 20000);
        const jb = await b.joinRoom(code);
        assert.equal(Number(jb.deskId), Number(ja.deskId));
        await assert.rejects(a.createRoom(ENGINE, "test", 10, { deals: 2 }), (e: unknown) =>
            e instanceof CroupierError && e.code === croupier.ErrorCode.ALREADY_SEATED);
        /* Two deals: each ends when a player passes. */
        for (let deal = 0; deal < 2; deal++) {
            const end = nextEvent<croupier.IRoundEnd>(a, "roundEnd", 8000);
            await playOne(a);
            await end;
        }
        const fin = await ended;
        assert.equal(fin.dealsPlayed, 2);
        assert.equal(fin.roundIds?.length, 2);
        assert.equal((await closing).reason, croupier.ClosingReason.CLOSING_ROOM_ENDED);
        const read = await b.getRoom(code);
        assert.equal(read.state, croupier.RoomState.ROOM_FINISHED);
        assert.deepEqual(read.roundIds, fin.roundIds);
        await assert.rejects(b.joinRoom(code), (e: unknown) =>
            e instanceof CroupierError && e.code === croupier.ErrorCode.ROOM_ENDED);
    } finally {
        a.close(); /* a failed check must not leave clients reconnecting forever */
        b.close();
    }
});

test("the login's chips are the wallet's; a bet of 0 or a malformed move is refused at once", async () => {
    await rig.startGame("persistent", ["--bj-gap-ms", "100"]);
    const gate = await rig.startGate("sdk-amounts");
    await rig.redis(rig.redisPort, "SET {croupier:money}:wallet:81 999970");
    const c = new Client({ urls: [rig.url(gate)], token: () => rig.token(81) });
    try {
        const login = await c.connect();
        assert.equal(login.chips, 999970);
        assert.equal(typeof login.sessionId, "bigint");
        /* a player without a wallet yet: 0 chips, said */
        const none = new Client({ urls: [rig.url(gate)], token: rig.token(82) });
        assert.equal((await none.connect()).chips, 0);
        none.close();
        const j = await c.join(croupier.Engine.ENGINE_PERSISTENT, "blackjack", 10);
        assert.ok(j.joined !== undefined && typeof j.joined.deskId === "bigint");
        const BJ = croupier.BlackjackMove;
        for (const amount of [0, -5, 2.5]) {
            const t0 = Date.now();
            await assert.rejects(c.act({ blackjack: { move: BJ.BJ_BET, amount } }), (e: unknown) =>
                e instanceof CroupierError && e.code === croupier.ErrorCode.BAD_REQUEST &&
                !e.retriable && /blackjack\.amount/.test(e.message));
            assert.ok(Date.now() - t0 < 1000, `bet ${amount} refused in ${Date.now() - t0} ms`);
        }
        /* What the SDK does not check itself, the gateway refuses naming the request (its id in
         * the Error before the 1007 close): rejected at once, not retried into the budget. */
        let reconnected = 0;
        c.on("reconnected", () => reconnected++);
        const t0 = Date.now();
        await assert.rejects(c.act({ blackjack: { move: BJ.BJ_STAND, amount: 5 } }), (e: unknown) =>
            e instanceof CroupierError && e.code === croupier.ErrorCode.BAD_REQUEST &&
            /only with BET/.test(e.message));
        assert.ok(Date.now() - t0 < 2000, `refused in ${Date.now() - t0} ms`);
        /* the client reconnects (the gateway closed), keeps its seat and plays on */
        const end = Date.now() + 8000;
        while (reconnected === 0 && Date.now() < end)
            await rig.sleep(20);
        assert.equal(reconnected, 1);
        assert.ok((await c.ping()) > 0);
    } finally {
        c.close();
    }
});

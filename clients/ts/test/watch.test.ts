// Spectators through the SDK against real gateways and a test-engine server (tests/rig.ts;
// docs/spectators.md): two players play rounds at a test table; a spectator follows one of
// them through the first of two gateways, gets the public Snapshot and the table's events, is
// refused a Join while watching, watches on through the second gateway after the first is
// stopped (the SDK sends its Watch again after the reconnect), and gets no event after unwatch.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, CroupierError, croupier } from "../src/index.js";
import * as rig from "./rig.js";

before(async () => {
    await rig.startRedis();
});
after(async () => {
    await rig.stopAll();
});

async function client(urls: string[], id: number): Promise<Client> {
    await rig.seedWallet(id);
    const c = new Client({ urls, token: () => rig.token(id) });
    await c.connect();
    return c;
}

async function until(what: string, ok: () => boolean, ms = 10000): Promise<void> {
    const end = Date.now() + ms;
    while (!ok() && Date.now() < end)
        await rig.sleep(20);
    assert.ok(ok(), what);
}

test("a spectator follows a player, is refused a seat, watches on after a gateway stops", async () => {
    await rig.startGame("test");
    const g1 = await rig.startGate("sdk-watch-1"), g2 = await rig.startGate("sdk-watch-2");
    const a = await client([rig.url(g2)], 91), b = await client([rig.url(g2)], 92);
    const GAME = croupier.Engine.ENGINE_TRADITIONAL;
    const desk = (await a.join(GAME, "test", 10)).joined?.deskId;
    await b.join(GAME, "test", 10);
    /* The players make a move in every round: the spectator sees it as a Play. */
    for (const c of [a, b])
        c.on("roundEnd", () => {
            c.act({ shedding: { move: croupier.SheddingMove.SHEDDING_PASS } }).catch(() => undefined);
        });

    const s = await client([rig.url(g1), rig.url(g2)], 93);
    const snaps: croupier.ISnapshot[] = [];
    const ends: croupier.IRoundEnd[] = [];
    s.on("watchSnapshot", (x) => snaps.push(x));
    s.on("roundEnd", (e) => ends.push(e));
    const snap = await s.watch({ playerId: 91 });
    assert.equal(snap.spectator, true);
    assert.equal(String(snap.deskId), String(desk));
    assert.deepEqual(s.watching(), { playerId: 91 });
    await until("rounds seen by the spectator", () => ends.length >= 2);

    await assert.rejects(s.join(GAME, "test", 10),
        (e: unknown) => e instanceof CroupierError && e.code === croupier.ErrorCode.WATCHING);
    await assert.rejects(s.watch({ playerId: 424242 }),
        (e: unknown) => e instanceof CroupierError && e.code === croupier.ErrorCode.NOT_SEATED);
    /* A refused Watch ended the session at the gateway; watching again. */
    await s.watch({ playerId: 91 });

    /* The first gateway stops: the SDK reconnects to the second and watches again. */
    let reconnected = false;
    s.on("reconnected", () => { reconnected = true; });
    const before = snaps.length;
    g1.child.kill("SIGTERM");
    await until("reconnected", () => reconnected, 15000);
    await until("the table's Snapshot again", () => snaps.length > before);
    assert.equal(snaps[snaps.length - 1].spectator, true);
    const seen = ends.length;
    await until("rounds after the reconnect", () => ends.length >= seen + 2);

    await s.unwatch();
    assert.equal(s.watching(), null);
    await rig.sleep(400); /* what was on its way */
    const quiet = ends.length;
    await rig.sleep(1000);
    assert.equal(ends.length, quiet, "no event after unwatch");
    for (const c of [a, b, s])
        c.close();
});

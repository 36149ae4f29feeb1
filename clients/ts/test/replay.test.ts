// Replays through the SDK against the real gateway and a hold'em server (tests/rig.ts;
// docs/replays.md): two players play a hand, each replays it by round id and sees his own
// cards; a share code made by one replays for a third player, who is refused by round id; an
// unknown code and a malformed id are refused with their codes. Blackjack: a player checks a
// shoe from the replays of its rounds against the commitment and cards of his Deals, and the
// shoe his table retired when it closed between rounds from the same replays; a player who left
// before the round that retired a shoe, from the replay of his own round (the gateway finds the
// retiring round by the shoe index); a shoe that moved with its table to another server and was
// retired there, from a round dealt before the move (docs/fairness.md "Who can open it").
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, CroupierError, croupier, shoeRecordFromReplay, verifyDealCards, verifyShoe } from "../src/index.js";
import * as rig from "./rig.js";

before(async () => {
    await rig.startRedis();
});
after(async () => {
    await rig.stopAll();
});

/* The blackjack servers a test leaves running (a later test drains them first). */
const bjServers: rig.Proc[] = [];

async function player(url: string, id: number): Promise<Client> {
    await rig.seedWallet(id);
    const c = new Client({ urls: [url], token: () => rig.token(id) });
    await c.connect();
    return c;
}

async function rejects(p: Promise<unknown>, code: croupier.ErrorCode): Promise<void> {
    await assert.rejects(p, (e: unknown) => e instanceof CroupierError && e.code === code);
}

test("a hand replayed by its players, shared by code, refused to a stranger by id", async () => {
    await rig.startGame("holdem", ["--holdem-seats", "2", "--holdem-action-ms", "5000",
                                   "--holdem-gap-ms", "300"]);
    const g = await rig.startGate("sdk-replay");
    const a = await player(rig.url(g), 81), b = await player(rig.url(g), 82);
    const seats = new Map<Client, number>();
    const ends: croupier.IRoundEnd[] = [];
    for (const c of [a, b]) {
        c.on("turn", (t) => {
            if (t.seat !== seats.get(c))
                return;
            const move = Number(t.toCall ?? 0) > 0 ? croupier.HoldemMove.HOLDEM_CALL
                                                  : croupier.HoldemMove.HOLDEM_CHECK;
            c.act({ holdem: { move } }).catch(() => undefined);
        });
    }
    /* What each player's Deals carried: the commitment (per card, deckScheme 2) and the
     * cards dealt to him face up (his hole cards, the board), by round. */
    const commits = new Map<Client, Map<string, string>>(), seen = new Map<Client, Map<string, number[]>>();
    for (const c of [a, b]) {
        commits.set(c, new Map());
        seen.set(c, new Map());
        c.on("deal", (d) => {
            const round = String(d.roundId ?? "");
            assert.equal(d.deckScheme, 2, "hold'em deals under the per-card commitment");
            const hex = Buffer.from(d.deckCommitment!).toString("hex");
            assert.equal(commits.get(c)!.get(round) ?? hex, hex, "one commitment a round");
            commits.get(c)!.set(round, hex);
            seen.get(c)!.set(round, [...(seen.get(c)!.get(round) ?? []), ...(d.cards ?? [])]);
        });
    }
    a.on("roundEnd", (e) => ends.push(e));
    const HOLDEM = croupier.Engine.ENGINE_HOLDEM;
    seats.set(a, (await a.join(HOLDEM, "holdem", 10)).joined?.seat ?? -1);
    seats.set(b, (await b.join(HOLDEM, "holdem", 10)).joined?.seat ?? -1);
    const end = Date.now() + 20000;
    while (ends.length < 1 && Date.now() < end)
        await rig.sleep(20);
    assert.ok(ends.length >= 1, "a hand ended");
    const roundId = ends[0].roundId as string;

    for (const c of [a, b]) {
        const r = await c.getReplay({ roundId, game: "holdem" });
        assert.equal(r.roundId, roundId);
        assert.equal(r.yourSeat, seats.get(c));
        const mine = r.seats?.find((s) => s.seat === seats.get(c));
        assert.equal(mine?.cards?.length, 2, "his own two cards");
        assert.equal(r.policy, "showdown");
        assert.ok((r.events ?? []).some((e) => e.kind === croupier.ReplayEventKind.REPLAY_ACTION));
        assert.match(r.phh ?? "", /^variant = 'NT'$/m, "the hand as a PHH file");
        /* His own check (docs/fairness.md "The per-card commitment"): the replay's leaves give
         * the commitment his Deals carried, and every card he saw is opened at its position. */
        const v = await verifyDealCards(r, commits.get(c)!.get(roundId));
        assert.equal(v.ok, true, v.problem);
        const opened = new Set(v.checked.map((x) => x.card));
        const saw = seen.get(c)!.get(roundId) ?? [];
        assert.ok(saw.length >= 2, "his hole cards at least");
        for (const card of saw)
            assert.ok(opened.has(card), `card ${card} he saw is opened`);
    }
    const shared = await a.shareReplay(roundId, "holdem");
    assert.match(shared.code as string, /^[0-9]{8}$/);
    assert.equal((await a.shareReplay(roundId, "holdem")).code, shared.code, "the same code again");
    assert.ok(Number(shared.expiresUnixMs) > Date.now());

    const s = await player(rig.url(g), 83);
    await rejects(s.getReplay({ roundId, game: "holdem" }), croupier.ErrorCode.NOT_IN_ROUND);
    await rejects(s.shareReplay(roundId, "holdem"), croupier.ErrorCode.NOT_IN_ROUND);
    const r = await s.getReplay({ code: shared.code as string });
    assert.equal(r.roundId, roundId);
    assert.ok(!Object.hasOwn(r, "yourSeat") || r.yourSeat === null, "not his round");
    /* A stranger sees no hole card face up unless the table showed it. */
    const shown = new Set((ends[0].deltas ?? []).filter((d) => (d.shownCards?.length ?? 0) > 0)
        .map((d) => d.seat));
    for (const seat of r.seats ?? [])
        assert.equal((seat.cards?.length ?? 0) > 0, shown.has(seat.seat), `seat ${seat.seat}`);
    await rejects(s.getReplay({ code: "00000000" }), croupier.ErrorCode.REPLAY_CODE_UNKNOWN);
    await rejects(s.getReplay({ code: "123456" }), croupier.ErrorCode.BAD_REQUEST);
    await rejects(s.getReplay({ roundId: "nope", game: "holdem" }), croupier.ErrorCode.BAD_REQUEST);
    for (const c of [a, b, s])
        c.close();
});

test("blackjack: a player checks a shoe from the replays of its rounds, the shoe his table retired when it closed too, and one who left before the retiring round", async () => {
    /* --bj-idle-ms: the table closes 300 ms after its player left, and retires the shoe in use
     * in a shoe retirement record (docs/fairness.md "Blackjack's shoes") */
    bjServers.push(await rig.startGame("persistent", ["--bj-decks", "1", "--bj-gap-ms", "50",
        "--bj-action-ms", "3000", "--bj-bet-ms", "3000", "--bj-idle-ms", "300"]));
    const g = await rig.startGate("sdk-replay-bj");
    const c = await player(rig.url(g), 84);
    const BJ = croupier.BlackjackMove;
    const commits = new Map<number, string>();   /* shoe number -> the commitment the Deals carried */
    const seen = new Map<number, number>();      /* shoe 1: position -> the face-up card (wire code) */
    const rounds: string[] = [];
    let me = -1, shoe = 1;
    c.on("deal", (d) => {
        const n = Number(d.shoe ?? 0);
        assert.ok(n >= 1 && d.deckCommitment?.length === 32, "every Deal names its shoe and commitment");
        const hex = Buffer.from(d.deckCommitment!).toString("hex");
        if (!commits.has(n))
            commits.set(n, hex);
        assert.equal(commits.get(n), hex, "one commitment per shoe");
        shoe = Math.max(shoe, n);
        if (n === 1 && d.cards?.length === 1)
            seen.set(Number(d.shoePosition), d.cards[0]);
    });
    c.on("turn", (t) => {
        if (t.seat !== me)
            return;
        const stand = { blackjack: { move: BJ.BJ_STAND, hand: t.hand } };
        const act = t.minAmount ? c.act({ blackjack: { move: BJ.BJ_BET, amount: t.minAmount } })
            : c.act(stand).catch(() => c.act({ blackjack: { move: BJ.BJ_INSURANCE, insure: false } })
                .then(() => c.act(stand)));
        act.catch(() => undefined);
    });
    c.on("roundEnd", (e) => rounds.push(e.roundId as string));
    me = (await c.join(croupier.Engine.ENGINE_PERSISTENT, "blackjack", 10)).joined?.seat ?? -1;
    assert.ok(me >= 0);
    /* A second player at the same table plays the first round he is dealt into, then leaves:
     * long before the cut card retires shoe 1. */
    const a = await player(rig.url(g), 85);
    const aCommits = new Map<number, string>(), aRounds: string[] = [];
    let aSeat = -1, aLeaving = false, aLeft: Promise<unknown> | undefined;
    a.on("deal", (d) => {
        if (d.seat !== aSeat || aSeat < 0)
            return;
        aCommits.set(Number(d.shoe ?? 0), Buffer.from(d.deckCommitment!).toString("hex"));
        if (!aRounds.includes(String(d.roundId)))
            aRounds.push(String(d.roundId));
    });
    a.on("turn", (t) => {
        if (t.seat !== aSeat || aLeaving)
            return;
        const stand = { blackjack: { move: BJ.BJ_STAND, hand: t.hand } };
        const act = t.minAmount ? a.act({ blackjack: { move: BJ.BJ_BET, amount: t.minAmount } })
            : a.act(stand).catch(() => a.act({ blackjack: { move: BJ.BJ_INSURANCE, insure: false } })
                .then(() => a.act(stand)));
        act.catch(() => undefined);
    });
    a.on("roundEnd", (e) => {
        if (aRounds.includes(e.roundId as string) && !aLeaving) {
            aLeaving = true;
            aLeft = a.leave();
        }
    });
    const aJoined = (await a.join(croupier.Engine.ENGINE_PERSISTENT, "blackjack", 10)).joined;
    aSeat = aJoined?.seat ?? -1;
    assert.ok(aSeat >= 0 && aSeat !== me, "the second player sits at another seat");
    /* until the reshuffle: a Deal from shoe 2, and its round over (bounded) */
    const end = Date.now() + 60000;
    let shoe2From = -1;
    while (Date.now() < end && (shoe2From < 0 || rounds.length <= shoe2From)) {
        if (shoe >= 2 && shoe2From < 0)
            shoe2From = rounds.length;
        await rig.sleep(20);
    }
    assert.ok(shoe2From > 0 && rounds.length > shoe2From, `shoe 1 retired within 60 s (${rounds.length} rounds)`);
    assert.ok(aLeft !== undefined, "the second player played a round and left");
    await aLeft;
    await c.leave();
    /* the replays of every round played (the histories are written behind the rounds) */
    const replays: croupier.IReplay[] = [];
    for (const roundId of rounds) {
        for (let k = 0; ; k++) {
            try {
                replays.push(await c.getReplay({ roundId, game: "blackjack" }));
                break;
            } catch (e) {
                if (!(e instanceof CroupierError) || e.code !== croupier.ErrorCode.NO_SUCH_ROUND || k >= 100)
                    throw e;
                await rig.sleep(50);
            }
        }
    }
    const v = await verifyShoe(commits.get(1)!, replays.map(shoeRecordFromReplay));
    assert.equal(v.ok, true, v.problem);
    assert.ok(v.rounds >= 2, `shoe 1 dealt ${v.rounds} rounds`);
    /* every card the player saw face up is the revealed shoe's at its position */
    const bj = (w: number) => (w & 3) * 13 + ((w >> 2) === 14 ? 0 : (w >> 2) - 1);
    assert.ok(seen.size >= 2 * v.rounds);
    for (const [pos, card] of seen)
        assert.equal(v.shoe![pos], bj(card), `position ${pos}`);
    /* The player who left: the round that retired shoe 1 is not his (NOT_IN_ROUND to him), yet
     * the replay of his own round opens it (the shoe index names the retiring round's record),
     * and a changed reveal fails. */
    assert.deepEqual(aRounds.length, 1, "he was dealt into one round");
    assert.ok(rounds.includes(aRounds[0]), "at the same table");
    assert.equal(aCommits.get(1), commits.get(1), "from shoe 1");
    /* the last round dealt from shoe 1 retired it (the cut card) */
    const retiring = replays.filter((r) => (r.shoes ?? []).some((x) => x.shoe === 1)).at(-1)!.roundId as string;
    assert.ok(!aRounds.includes(retiring), "the retiring round is not his");
    await rejects(a.getReplay({ roundId: retiring, game: "blackjack" }), croupier.ErrorCode.NOT_IN_ROUND);
    const aReplays = [await a.getReplay({ roundId: aRounds[0], game: "blackjack" })];
    assert.ok((aReplays[0].shoeReveal ?? []).some((x) => x.shoe === 1 && x.commitment === aCommits.get(1)),
        "his own round's replay carries shoe 1's reveal");
    const va = await verifyShoe(aCommits.get(1)!, aReplays.map(shoeRecordFromReplay));
    assert.equal(va.ok, true, va.problem);
    assert.equal(va.rounds, 1);
    const forged = aReplays.map((r) => croupier.Replay.decode(croupier.Replay.encode(r).finish()));
    const rv = forged[0].shoeReveal.find((x) => x.shoe === 1)!;
    rv.deck = (rv.deck.startsWith("00") ? "01" : "00") + rv.deck.slice(2);
    assert.equal((await verifyShoe(aCommits.get(1)!, forged.map(shoeRecordFromReplay))).ok, false,
        "a changed reveal does not open the commitment");
    /* Shoe 2: no round retired it; the table, left empty, closed and retired it in a shoe
     * retirement record, which the replays of shoe 2's rounds carry once it is written (the
     * gateway finds it by the table's id). */
    const shoe2 = rounds.slice(shoe2From);
    let replays2: croupier.IReplay[] = [];
    for (const until = Date.now() + 15000; ;) {
        replays2 = [];
        for (const roundId of shoe2)
            replays2.push(await c.getReplay({ roundId, game: "blackjack" }));
        if (replays2.every((r) => (r.shoeReveal ?? []).some((x) => x.shoe === 2)) || Date.now() > until)
            break;
        await rig.sleep(100);
    }
    assert.ok(replays2.every((r) => (r.shoeReveal ?? []).some((x) => x.shoe === 2)),
        "every replay of shoe 2's rounds carries its reveal from the table's record");
    const v2 = await verifyShoe(commits.get(2)!, replays2.map(shoeRecordFromReplay));
    assert.equal(v2.ok, true, v2.problem);
    assert.equal(v2.rounds, shoe2.length);
    /* a share code of a round of shoe 2: its viewer gets the reveal too (a retired shoe is no
     * secret) */
    const shared = await c.shareReplay(shoe2[0], "blackjack");
    const byCode = await c.getReplay({ code: shared.code as string });
    assert.ok((byCode.shoeReveal ?? []).some((x) => x.shoe === 2), "the share code's replay carries it");
    assert.equal((await verifyShoe(commits.get(2)!, [shoeRecordFromReplay(byCode)])).ok, true);
    /* a changed card in one of them: refused */
    const bad = replays2.map((r) => croupier.Replay.decode(croupier.Replay.encode(r).finish()));
    const cards = bad[0].shoes.find((x) => x.shoe === 2)!.cards as Uint8Array;
    cards[0] = cards[0] === 8 ? 9 : 8;
    assert.equal((await verifyShoe(commits.get(2)!, bad.map(shoeRecordFromReplay))).ok, false);
    a.close();
    c.close();
});

test("blackjack: a shoe that moved with its table and was retired by the adopter opens from a round dealt before the move", async () => {
    /* The earlier test's blackjack server drains (it is no longer ready: it opens and adopts no
     * table), so that the table opens on A and moves to B. A long gap between rounds: the drain
     * lands in it (a betting window is a round, which would be A's last and retire the shoe). */
    for (const p of bjServers.splice(0))
        assert.equal(await rig.drainGame(p), 200);
    await rig.sleep(1000);
    const flags = ["--bj-decks", "6", "--bj-gap-ms", "2000", "--bj-action-ms", "3000",
                   "--bj-bet-ms", "3000", "--bj-idle-ms", "300"];
    const gameA = await rig.startGame("persistent", flags);
    const g = await rig.startGate("sdk-replay-bj-move");
    const c = await player(rig.url(g), 86);
    try {
        const BJ = croupier.BlackjackMove;
        const commits = new Map<number, string>(), dealt: { round: string; shoe: number }[] = [];
        let me = -1, betting = true;
        c.on("deal", (d) => {
            const n = Number(d.shoe ?? 0);
            commits.set(n, Buffer.from(d.deckCommitment!).toString("hex"));
            dealt.push({ round: String(d.roundId), shoe: n });
        });
        c.on("turn", (t) => {
            if (t.seat !== me)
                return;
            if (t.minAmount && !betting)
                return; /* between rounds: no bet, so that the drain finds the table between rounds */
            const stand = { blackjack: { move: BJ.BJ_STAND, hand: t.hand } };
            const act = t.minAmount ? c.act({ blackjack: { move: BJ.BJ_BET, amount: t.minAmount } })
                : c.act(stand).catch(() => c.act({ blackjack: { move: BJ.BJ_INSURANCE, insure: false } })
                    .then(() => c.act(stand)));
            act.catch(() => undefined);
        });
        const ends: string[] = [];
        c.on("roundEnd", (e) => {
            ends.push(e.roundId as string);
            betting = false; /* one round on A */
        });
        me = (await c.join(croupier.Engine.ENGINE_PERSISTENT, "blackjack", 10)).joined?.seat ?? -1;
        assert.ok(me >= 0);
        for (const end = Date.now() + 20000; ends.length < 1 && Date.now() < end;)
            await rig.sleep(20);
        assert.equal(ends.length, 1, "a round on A");
        const before = ends[0];
        assert.ok(dealt.some((x) => x.round === before && x.shoe === 1), "dealt from shoe 1 on A");
        /* A second server, then A drains: the table (between rounds, no bet) moves whole to B with
         * its shoe (docs/fairness.md "Blackjack's shoes", "Moved"). */
        await rig.startGame("persistent", flags);
        const moved = new Promise<croupier.IMoved>((res, rej) => {
            c.on("moved", res);
            setTimeout(() => rej(new Error("no Moved within 15 s")), 15000);
        });
        assert.equal(await rig.drainGame(gameA), 200);
        const m = await moved;
        assert.equal(m.wholeTable, true, "the table moved whole");
        /* One round on B from the same shoe, then the player leaves: the empty table closes on B
         * and retires the shoe in a shoe retirement record whose id names B, not A. */
        betting = true;
        const onB = ends.length;
        c.act({ blackjack: { move: BJ.BJ_BET, amount: 10 } }).catch(() => undefined);
        for (const end = Date.now() + 20000; ends.length <= onB && Date.now() < end;)
            await rig.sleep(20);
        assert.ok(ends.length > onB, "a round on B");
        betting = false;
        const after = ends[onB];
        assert.notEqual(after.split(":").slice(0, 4).join(":"), before.split(":").slice(0, 4).join(":"),
            "the round on B has B's id");
        assert.ok(dealt.some((x) => x.round === after && x.shoe === 1), "dealt from the same shoe 1 on B");
        assert.equal(new Set(dealt.filter((x) => x.shoe === 1).map((x) => commits.get(x.shoe))).size, 1);
        await c.leave();
        /* The round dealt on A before the move: its replay carries shoe 1's reveal from B's record
         * (found by the commitment), once that record is written. */
        let r: croupier.IReplay | undefined;
        for (const until = Date.now() + 15000; ;) {
            r = await c.getReplay({ roundId: before, game: "blackjack" });
            if ((r.shoeReveal ?? []).some((x) => x.shoe === 1) || Date.now() > until)
                break;
            await rig.sleep(100);
        }
        assert.ok((r!.shoeReveal ?? []).some((x) => x.shoe === 1 && x.commitment === commits.get(1)),
            "the replay of a round dealt before the move carries the shoe's reveal");
        const rB = await c.getReplay({ roundId: after, game: "blackjack" });
        const v = await verifyShoe(commits.get(1)!, [r!, rB].map(shoeRecordFromReplay));
        assert.equal(v.ok, true, v.problem);
        assert.equal(v.rounds, 2);
        const forged = croupier.Replay.decode(croupier.Replay.encode(r!).finish());
        const rv = forged.shoeReveal.find((x) => x.shoe === 1)!;
        rv.nonce = (rv.nonce.startsWith("00") ? "01" : "00") + rv.nonce.slice(2);
        assert.equal((await verifyShoe(commits.get(1)!, [shoeRecordFromReplay(forged)])).ok, false,
            "a changed reveal does not open the commitment");
    } finally {
        c.close(); /* also when an assertion failed: the test must not hang */
    }
});

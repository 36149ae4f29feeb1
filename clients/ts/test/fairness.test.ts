// Deal commitments (src/fairness.ts, docs/fairness.md "The commitment"): the SDK's check
// against an independent SHA-256 (node:crypto) and against croupier-rules verify-deal and
// verify-shoe, the server side's own implementation (tools/rules/rules_deck.c), on decks and
// blackjack shoes croupier-rules deals through the production path.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { cardLeaf, croupier, dealPosition, dealtAsSet, deckCardLeaves, deckCommitment, leavesCommitment, shoeCommitment, shoeRecordFromReplay, verifyDeal, verifyDealCards, verifyRecord, verifyShoe } from "../src/index.js";
import type { ShoeRecord } from "../src/index.js";
import { build } from "./rig.js";

const rules = join(build, "tools", "croupier-rules");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

function reference(deck: Uint8Array, nonce: Uint8Array, tag = "croupier-deck-v1"): string {
    const n = Buffer.from([deck.length >> 8, deck.length & 0xff]);
    return createHash("sha256").update(tag).update(n).update(deck).update(nonce).digest("hex");
}

/* Decks of a game as croupier-rules deals them (one hex deck a line). */
function deals(game: string, n: number): Uint8Array[] {
    const out = execFileSync(rules, ["deals", game, String(n)], { encoding: "utf8" });
    return out.trim().split("\n").map((l) => Uint8Array.from(Buffer.from(l.trim(), "hex")));
}

test("the commitment is SHA-256 over the documented bytes, for every game's deck", async () => {
    for (const game of ["holdem", "zhajinhua", "doudizhu", "guandan"]) {
        for (const deck of deals(game, 3)) {
            const nonce = randomBytes(32);
            assert.equal(hex(await deckCommitment(deck, nonce)), reference(deck, nonce));
            assert.equal(hex(await deckCommitment(hex(deck), hex(nonce))), reference(deck, nonce));
        }
    }
});

test("croupier-rules verify-deal and the SDK agree: the revealed deck opens it, a changed one does not", async () => {
    const [deck] = deals("holdem", 1);
    const nonce = randomBytes(32);
    const c = await deckCommitment(deck, nonce);
    assert.equal(await verifyDeal(c, deck, nonce), true);
    const ok = spawnSync(rules, ["verify-deal", hex(c), hex(deck), hex(nonce)], { encoding: "utf8" });
    assert.equal(ok.status, 0, ok.stderr);
    /* two cards swapped: the dealing order is what is committed */
    const swapped = Uint8Array.from(deck);
    [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
    assert.equal(await verifyDeal(c, swapped, nonce), false);
    const bad = spawnSync(rules, ["verify-deal", hex(c), hex(swapped), hex(nonce)], { encoding: "utf8" });
    assert.equal(bad.status, 1, bad.stderr);
    const other = Uint8Array.from(nonce);
    other[31] ^= 1;
    assert.equal(await verifyDeal(c, deck, other), false);
    /* a hand-history record, with and without the commitment the player received */
    const record = { deck_commitment: hex(c), deck: hex(deck), deck_nonce: hex(nonce) };
    assert.equal(await verifyRecord(record), true);
    assert.equal(await verifyRecord(record, c), true);
    assert.equal(await verifyRecord(record, new Uint8Array(32)), false);
});

test("bad input is refused with a reason, not taken for a mismatch", async () => {
    const nonce = new Uint8Array(32);
    await assert.rejects(deckCommitment("zz", nonce), /deck: not hex/);
    await assert.rejects(deckCommitment([], nonce), /deck: 0 cards/);
    await assert.rejects(deckCommitment([1, 2], new Uint8Array(31)), /nonce: 31 bytes, 32 expected/);
    await assert.rejects(verifyDeal(new Uint8Array(31), [1], nonce), /commitment: 31 bytes/);
    await assert.rejects(verifyRecord({ deck: "01" }), /no deck_commitment/);
});

test("blackjack shoes: verifyShoe and croupier-rules verify-shoe agree on a shoe and its rounds", async () => {
    const [shoe] = deals("blackjack:1", 1);
    const nonce = randomBytes(32);
    const c = await shoeCommitment(shoe, nonce);
    assert.equal(hex(c), reference(shoe, nonce, "croupier-shoe-v1"));
    assert.notEqual(hex(c), hex(await deckCommitment(shoe, nonce))); /* the tags keep them apart */
    const name = (b: number) => "A23456789TJQK"[b % 13] + "cdhs"[Math.floor(b / 13)];
    const round = (id: string, first: number, count: number, reveal = false): ShoeRecord => ({
        round: id,
        cards: [...shoe.slice(first, first + count)].map((b) => ({ seat: 0, card: name(b) })),
        shoes: [{ shoe: 1, commitment: hex(c), first, count }],
        ...(reveal ? { shoe_reveal: [{ shoe: 1, commitment: hex(c), deck: hex(shoe), nonce: hex(nonce) }] } : {}),
    });
    const records = [round("r1", 0, 5), round("r2", 5, 6), round("r3", 11, 4, true)];
    const v = await verifyShoe(c, records);
    assert.equal(v.ok, true, v.problem);
    assert.equal(v.rounds, 3);
    assert.equal(v.dealt, 15);
    assert.deepEqual(v.gaps, []);
    const dir = mkdtempSync(join(tmpdir(), "shoe-"));
    const run = (recs: ShoeRecord[]) => {
        const file = join(dir, "records.jsonl");
        writeFileSync(file, recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
        return spawnSync(rules, ["verify-shoe", file], { encoding: "utf8" });
    };
    try {
        assert.equal(run(records).status, 0);
        /* a card off its position */
        const bad = structuredClone(records);
        bad[1].cards![2].card = name((shoe[7] + 1) % 52);
        assert.equal((await verifyShoe(c, bad)).ok, false);
        assert.equal(run(bad).status, 1);
        /* a round missing: still checked, the gap named */
        const some = [records[0], records[2]];
        assert.deepEqual((await verifyShoe(c, some)).gaps, [[5, 10]]);
        assert.equal(run(some).status, 0);
        /* not revealed yet: nothing to open */
        const early = await verifyShoe(c, records.slice(0, 2));
        assert.equal(early.ok, false);
        assert.match(early.problem ?? "", /no record reveals/);
        assert.equal(run(records.slice(0, 2)).status, 2);
        /* another commitment (the player's Deals said something else) */
        assert.equal((await verifyShoe(new Uint8Array(32), records)).ok, false);
        /* the table closed between rounds: its shoe retirement record (docs/hand-history.md
         * "Table records") reveals the shoe and how many of its cards were dealt */
        const retirement = (dealt: number): ShoeRecord => ({
            round: "persistent:1:2:3:0", record: "shoe_retirement", cards: [], shoes: [],
            shoe_reveal: [{ shoe: 1, commitment: hex(c), deck: hex(shoe), nonce: hex(nonce), dealt }],
        });
        const closed = [round("r1", 0, 5), round("r2", 5, 6), retirement(11)];
        const vc = await verifyShoe(c, closed);
        assert.equal(vc.ok, true, vc.problem);
        assert.equal(vc.undealtFrom, 11);
        assert.deepEqual(vc.gaps, []);
        assert.equal(run(closed).status, 0);
        assert.match(run(closed).stdout, /positions 11\.\.51 never were/);
        /* a round missing before the close: the gap up to dealt is named */
        assert.deepEqual((await verifyShoe(c, [closed[0], closed[2]])).gaps, [[5, 10]]);
        /* a round that dealt past what the reveal says was dealt */
        const past = [round("r1", 0, 5), round("r2", 5, 6), retirement(10)];
        assert.match((await verifyShoe(c, past)).problem ?? "", /only 10 cards were dealt/);
        assert.equal(run(past).status, 1);
        await assert.rejects(verifyShoe(c, [retirement(53)]), /shoe_reveal\.dealt/);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("blackjack shoes from replays: shoeRecordFromReplay feeds verifyShoe what GetReplay answers", async () => {
    const [shoe] = deals("blackjack:1", 1);
    const nonce = randomBytes(32);
    const c = await shoeCommitment(shoe, nonce);
    /* blackjack's byte (suit x 13 + rank, ace 0) as the wire code (rank << 2 | suit, ace 14) */
    const wire = (b: number) => ((b % 13 === 0 ? 14 : (b % 13) + 1) << 2) | Math.floor(b / 13);
    const replay = (id: string, first: number, count: number, reveal = false): croupier.Replay =>
        croupier.Replay.decode(croupier.Replay.encode({
            roundId: id, game: "blackjack", policy: "all",
            shoes: [{ shoe: 1, commitment: hex(c), first, cards: Uint8Array.from(shoe.slice(first, first + count), wire) }],
            shoeReveal: reveal ? [{ shoe: 1, commitment: hex(c), deck: hex(shoe), nonce: hex(nonce), dealt: first + count }] : [],
        }).finish()); /* through the real codec: the field names are the generated ones */
    const replays = [replay("r1", 0, 5), replay("r2", 5, 6), replay("r3", 11, 4, true)];
    const v = await verifyShoe(c, replays.map(shoeRecordFromReplay));
    assert.equal(v.ok, true, v.problem);
    assert.equal(v.rounds, 3);
    assert.equal(v.dealt, 15);
    assert.equal(v.undealtFrom, 15);
    assert.deepEqual(v.gaps, []);
    /* a card changed in a replay: refused */
    const bad = replays.map((r) => croupier.Replay.decode(croupier.Replay.encode(r).finish()));
    const cards = bad[1].shoes[0].cards as Uint8Array;
    cards[2] = wire((shoe[7] + 1) % 52);
    assert.match((await verifyShoe(c, bad.map(shoeRecordFromReplay))).problem ?? "", /position 7/);
    /* the retiring round's replay missing: nothing opens the shoe */
    assert.match((await verifyShoe(c, replays.slice(0, 2).map(shoeRecordFromReplay))).problem ?? "",
        /no record reveals/);
    /* a card code that is no card */
    assert.throws(() => shoeRecordFromReplay({ shoes: [{ shoe: 1, commitment: hex(c), first: 0, cards: [0] }] }),
        /not a card/);
});

/* The per-card commitment (docs/fairness.md "The per-card commitment"), computed here with
 * node's HMAC and SHA-256: card nonce i = HMAC-SHA256(round nonce, "card" || i BE16); leaf i =
 * SHA-256("croupier-card-v2" || i BE16 || code || card nonce i); commitment = SHA-256(
 * "croupier-deck-v2" || n BE16 || leaves). */
function cardNonce(nonce: Uint8Array, i: number): Buffer {
    return createHmac("sha256", nonce).update(Buffer.from([..."card"].map((c) => c.charCodeAt(0))))
        .update(Buffer.from([i >> 8, i & 0xff])).digest();
}
function referenceLeaves(codes: Uint8Array, nonce: Uint8Array): Buffer {
    return Buffer.concat([...codes].map((c, i) => createHash("sha256").update("croupier-card-v2")
        .update(Buffer.from([i >> 8, i & 0xff, c])).update(cardNonce(nonce, i)).digest()));
}

test("the per-card commitment: its known answer, and the SDK's leaves and root against node's", async () => {
    const codes = Uint8Array.from({ length: 52 }, (_, i) => 8 + i);
    const nonce = Uint8Array.from({ length: 32 }, (_, i) => i);
    const leaves = referenceLeaves(codes, nonce);
    const root = createHash("sha256").update("croupier-deck-v2").update(Buffer.from([0, 52]))
        .update(leaves).digest("hex");
    assert.equal(root, "69d4f69b62af0c0db8d8218c3dc8d94452b8e33d6dfcf4eed2d1ed3c7b6d04f3");
    assert.equal(hex(await leavesCommitment(leaves)), root);
    assert.equal(hex(await deckCardLeaves(codes, nonce)), leaves.toString("hex"));
    for (const i of [0, 17, 51])
        assert.equal(hex(await cardLeaf(i, codes[i], cardNonce(nonce, i))),
            leaves.subarray(32 * i, 32 * i + 32).toString("hex"));
    /* hold'em, seats 1 3 4 7, button 3: the order 4 7 1 3, the board after a burn */
    assert.deepEqual([4, 7, 1, 3].map((s) => dealPosition("holdem", 3, [1, 3, 4, 7], s, 0)), [0, 1, 2, 3]);
    assert.equal(dealPosition("holdem", 3, [1, 3, 4, 7], 3, 1), 7);
    assert.deepEqual([0, 1, 2, 3, 4].map((k) => dealPosition("holdem", 3, [1, 3, 4, 7], -1, k)), [9, 10, 11, 13, 15]);
    assert.equal(dealPosition("zhajinhua", 3, [1, 3, 4, 7], 3, 2), 11);
    assert.equal(dealPosition("doudizhu", 3, [1, 3, 4, 7], 3, 0), -1);
    /* the shedding games: from seat 0 whatever the button, the table's cards last; as sets */
    assert.equal(dealtAsSet("guandan"), true);
    assert.equal(dealtAsSet("holdem"), false);
    assert.deepEqual([0, 16].map((k) => dealPosition("doudizhu", 2, [2, 0, 1], 1, k)), [1, 49]);
    assert.deepEqual([0, 2, 3].map((k) => dealPosition("doudizhu", -1, [0, 1, 2], -1, k)), [51, 53, -1]);
    assert.equal(dealPosition("guandan", 0, [0, 1, 2, 3], 3, 26), 107);
    assert.equal(dealPosition("guandan", 0, [0, 1, 2], 0, 0), -1);
});

test("a duplicate Dou Dizhu deal: verifyDealCards, verifyRecord and croupier-rules agree; a card at another seat's position, a changed card or leaf fails", async () => {
    /* docs/fairness.md "Duplicate deals": the codes 08..3b then the jokers 3c 3d under the nonce
     * 00..1f; seat s is dealt positions s, s+3, ..., s+48, the bottom 51..53. Each hand is
     * recorded as a set, here in reverse dealing order. */
    const codes = Uint8Array.from([...Array.from({ length: 52 }, (_, i) => 8 + i), 60, 61]);
    const nonce = Uint8Array.from({ length: 32 }, (_, i) => i);
    const commitment = createHash("sha256").update("croupier-deck-v2").update(Buffer.from([0, 54]))
        .update(referenceLeaves(codes, nonce)).digest("hex");
    assert.equal(commitment, "3d1f03828bfe665e2ee086ac90bb1a8a6d337270bb45e6ee7413e292a8ae2267");
    const text = (c: number) => c >> 2 === 15 ? (c & 1 ? "Xr" : "Xb") : "23456789TJQKA"[(c >> 2) - 2] + "cdhs"[c & 3];
    const hand = (s: number) => Array.from({ length: 17 }, (_, k) => codes[k * 3 + s]).reverse();
    const cards = [
        ...[51, 52, 53].map((p) => ({ seat: -1, card: text(codes[p]) })),
        ...[0, 1, 2].flatMap((seat) => hand(seat).map((c) => ({ seat, card: text(c) }))),
    ];
    const rec = {
        round: "traditional:1:1:1:1", game: "doudizhu", engine: "traditional", ts: 1, button: 2,
        match: { id: 7, stage: 1, round: 1, deal: 1, seed: "99" },
        seats: [0, 1, 2].map((seat) => ({ seat, player: String(1001 + seat), stack: 100 })),
        cards, actions: [], results: [0, 1, 2].map((seat) => ({ seat, delta: 0 })),
        outcome: "completed", rake: 0, deck_scheme: 2, deck_commitment: commitment,
        deck: hex(codes), deck_codes: hex(codes), deck_nonce: hex(nonce),
    };
    const dir = mkdtempSync(join(tmpdir(), "dup-"));
    try {
        const file = join(dir, "record.json");
        writeFileSync(file, JSON.stringify(rec));
        assert.equal(await verifyRecord(rec, commitment), true);
        assert.equal(spawnSync(rules, ["verify-deal", "--record", file], { encoding: "utf8" }).status, 0);
        /* seat 0's 2c and seat 1's 2d swapped: committed cards, at the other seat's positions */
        const swapped = structuredClone(rec);
        const a = swapped.cards.find((c) => c.card === "2c")!, b = swapped.cards.find((c) => c.card === "2d")!;
        [a.card, b.card] = [b.card, a.card];
        assert.equal(await verifyRecord(swapped), false);
        writeFileSync(join(dir, "swapped.json"), JSON.stringify(swapped));
        assert.equal(spawnSync(rules, ["verify-deal", "--record", join(dir, "swapped.json")], { encoding: "utf8" }).status, 1);

        const bin = join(dir, "replay.bin");
        const check = (r: croupier.Replay) => {
            writeFileSync(bin, croupier.Replay.encode(r).finish());
            return spawnSync(rules, ["verify-deal", "--replay", bin, commitment], { encoding: "utf8" }).status;
        };
        const replay = () => croupier.Replay.decode(execFileSync(rules, ["replay", "--record", file, "--viewer", "1002"]));
        const r = replay();
        assert.equal(r.policy, "own");
        assert.equal(r.deckScheme, 2);
        assert.deepEqual(r.openings.map((o) => o.position),
            [...Array.from({ length: 17 }, (_, k) => 3 * k + 1), 51, 52, 53]);
        const v = await verifyDealCards(r, commitment);
        assert.equal(v.ok, true, v.problem);
        assert.equal(v.checked.length, 20);
        assert.equal(check(r), 0);
        /* a changed card */
        const card = replay();
        (card.seats.find((s) => s.seat === 1)!.cards as Uint8Array)[3] ^= 1;
        assert.match((await verifyDealCards(card, commitment)).problem ?? "", /seat 1's card/);
        assert.equal(check(card), 1);
        /* a changed leaf */
        const leaf = replay();
        leaf.deckLeaves[32 * 4] ^= 1;
        assert.match((await verifyDealCards(leaf, commitment)).problem ?? "", /leaves do not give/);
        assert.equal(check(leaf), 1);
        /* the hand claimed at seat 0's positions, every opening true to its leaf */
        const pos = replay();
        const mine = pos.seats.find((s) => s.seat === 1)!.cards as Uint8Array;
        let k = 0;
        for (const o of pos.openings) {
            if (o.position >= 51)
                continue;
            o.position -= 1;
            o.card = codes[o.position];
            o.nonce = cardNonce(nonce, o.position);
            mine[k++] = o.card;
        }
        assert.equal((await verifyDealCards(pos, commitment)).ok, false);
        assert.match((await verifyDealCards(pos, commitment)).problem ?? "", /seat 1's card/);
        assert.equal(check(pos), 1);
        /* a share code's view: the bottom opened, nobody's hand */
        const code = croupier.Replay.decode(execFileSync(rules, ["replay", "--record", file, "--viewer", "0"]));
        assert.equal(code.openings.length, 3);
        assert.equal((await verifyDealCards(code, commitment)).ok, true);
        assert.equal(check(code), 0);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("verifyDealCards and croupier-rules verify-deal --replay agree on a player's replay; a changed card, leaf or position fails", async () => {
    /* A Zha Jin Hua record under the known answer (codes 08..3b, nonce 00..1f), button 0, seats
     * 0 1 2: the deal goes 1 2 0 three times round, seat 1's cards at positions 0 3 6. */
    const codes = Uint8Array.from({ length: 52 }, (_, i) => 8 + i);
    const nonce = Uint8Array.from({ length: 32 }, (_, i) => i);
    const text = (c: number) => "23456789TJQKA"[(c >> 2) - 2] + "cdhs"[c & 3];
    const order = [1, 2, 0];
    const cards = [0, 1, 2].flatMap((seat) => [0, 1, 2].map((k) =>
        ({ seat, card: text(codes[k * 3 + order.indexOf(seat)]) })));
    const commitment = "69d4f69b62af0c0db8d8218c3dc8d94452b8e33d6dfcf4eed2d1ed3c7b6d04f3";
    const rec = {
        round: "zhajinhua:1:1:1:1", game: "zhajinhua", engine: "zhajinhua", ts: 1, button: 0,
        seats: [0, 1, 2].map((seat) => ({ seat, player: String(1001 + seat), stack: 100 })),
        cards, actions: [{ seat: 1, action: "ante", amount: 1 }],
        results: [0, 1, 2].map((seat) => ({ seat, delta: 0 })), outcome: "completed", rake: 0,
        deck_scheme: 2, deck_commitment: commitment, deck: hex(codes), deck_codes: hex(codes),
        deck_nonce: hex(nonce),
    };
    const dir = mkdtempSync(join(tmpdir(), "cards-"));
    try {
        const file = join(dir, "record.json");
        writeFileSync(file, JSON.stringify(rec));
        const bin = join(dir, "replay.bin");
        /* The Replay the player of seat 1 gets (replay_build, what the gateway sends). */
        writeFileSync(bin, execFileSync(rules, ["replay", "--record", file, "--viewer", "1002"]));
        const check = (r: croupier.Replay) => {
            writeFileSync(bin, croupier.Replay.encode(r).finish());
            return spawnSync(rules, ["verify-deal", "--replay", bin, commitment], { encoding: "utf8" }).status;
        };
        const replay = () => croupier.Replay.decode(execFileSync(rules, ["replay", "--record", file, "--viewer", "1002"]));
        /* The record itself: verifyRecord and croupier-rules verify-deal --record agree. */
        assert.equal(await verifyRecord(rec, commitment), true);
        assert.equal(spawnSync(rules, ["verify-deal", "--record", file], { encoding: "utf8" }).status, 0);
        const moved = structuredClone(rec);
        [moved.cards[0].card, moved.cards[1].card] = [moved.cards[1].card, moved.cards[0].card];
        assert.equal(await verifyRecord(moved), false, "a card recorded at another position");
        writeFileSync(join(dir, "moved.json"), JSON.stringify(moved));
        assert.equal(spawnSync(rules, ["verify-deal", "--record", join(dir, "moved.json")], { encoding: "utf8" }).status, 1);
        assert.equal(await verifyRecord({ ...rec, deck_nonce: hex(new Uint8Array(32)) }), false);
        const r = replay();
        assert.equal(r.deckScheme, 2);
        assert.deepEqual(r.openings.map((o) => o.position), [0, 3, 6]);
        const v = await verifyDealCards(r, commitment);
        assert.equal(v.ok, true, v.problem);
        assert.deepEqual(v.checked.map((c) => [c.position, c.card, c.seat]), [[0, 8, 1], [3, 11, 1], [6, 14, 1]]);
        assert.equal(check(r), 0);
        /* against another commitment than the Deals carried */
        assert.equal((await verifyDealCards(r, new Uint8Array(32))).ok, false);
        /* a changed card: the opening no longer gives its leaf */
        const card = replay();
        card.openings[1].card ^= 1;
        assert.match((await verifyDealCards(card, commitment)).problem ?? "", /does not give its leaf/);
        assert.equal(check(card), 1);
        /* a changed leaf: the leaves no longer give the commitment */
        const leaf = replay();
        leaf.deckLeaves[100] ^= 1;
        assert.match((await verifyDealCards(leaf, commitment)).problem ?? "", /leaves do not give/);
        assert.equal(check(leaf), 1);
        /* a card claimed at the wrong position: the seat's first two cards swapped, so each is
         * opened where the dealing rule puts the other */
        const pos = replay();
        const mine = pos.seats.find((s) => s.seat === 1)!.cards as Uint8Array;
        [mine[0], mine[1]] = [mine[1], mine[0]];
        assert.match((await verifyDealCards(pos, commitment)).problem ?? "", /not opened at position 0/);
        assert.equal(check(pos), 1);
        /* a share code's view: the leaves, nothing opened, and the check holds */
        const code = croupier.Replay.decode(execFileSync(rules, ["replay", "--record", file, "--viewer", "0"]));
        assert.equal(code.openings.length, 0);
        assert.equal((await verifyDealCards(code, commitment)).ok, true);
        /* an opening the replay does not show (the card of a hidden hand) */
        code.openings.push(r.openings[0]);
        assert.match((await verifyDealCards(code, commitment)).problem ?? "", /does not show/);
        assert.equal(check(code), 1);
        /* not a per-card replay */
        await assert.rejects(verifyDealCards(croupier.Replay.decode(croupier.Replay.encode({ roundId: "x", game: "doudizhu" }).finish())),
            /not a round under the per-card commitment/);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

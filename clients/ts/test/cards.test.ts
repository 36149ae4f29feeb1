// The card decoder against the encodings the documents give (docs/protocol.md "Cards",
// docs/rules/<game>.md): no server needed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { BLACK_JOKER, RED_JOKER, cardCode, decodeCard, decodeCards, encodeCards, gameDeals } from "../src/index.js";

const docs = join(import.meta.dirname, "..", "..", "..", "..", "docs");

test("the jokers' codes are the ones docs/protocol.md gives", () => {
    const cards = readFileSync(join(docs, "protocol.md"), "utf8").split("## Cards")[1];
    const black = /black \(little\) joker = 15 << 2 \| 0 = (\d+)/.exec(cards);
    const red = /red \(big\) joker = 15 << 2 \| 1 = (\d+)/.exec(cards);
    assert.ok(black && red, "docs/protocol.md still names the jokers' codes");
    assert.equal(Number(black[1]), BLACK_JOKER);
    assert.equal(Number(red[1]), RED_JOKER);
    assert.deepEqual(decodeCard(Number(black[1]), "doudizhu"),
        { code: 60, rank: 15, suit: null, joker: "black", text: "black joker", short: "Xb" });
    assert.deepEqual(decodeCard(Number(red[1]), "guandan"),
        { code: 61, rank: 15, suit: null, joker: "red", text: "red joker", short: "Xr" });
});

test("code = rank << 2 | suit: every rank and suit", () => {
    const suits = ["clubs", "diamonds", "hearts", "spades"] as const;
    const text = ["", "", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
    for (let rank = 2; rank <= 14; rank++)
        for (let s = 0; s < 4; s++) {
            const c = decodeCard(rank * 4 + s);
            assert.equal(c.rank, rank);
            assert.equal(c.suit, suits[s]);
            assert.equal(c.joker, null);
            assert.equal(c.text, text[rank] + "♣♦♥♠"[s]);
            assert.equal(cardCode(rank, suits[s]), rank * 4 + s);
        }
    /* docs/rules/zhajinhua.md "Cards": the text form "AsKd2c" */
    assert.equal(decodeCards("zhajinhua", [59, 53, 8]).map((c) => c.short).join(""), "AsKd2c");
    assert.equal(decodeCard(42).text, "10♥");
    assert.equal(decodeCard(42).short, "Th");
});

test("no card: codes outside the 54 are refused", () => {
    for (const bad of [0, 1, 7, 62, 63, 64, 255, -1, 2.5])
        assert.throws(() => decodeCard(bad), RangeError, `code ${bad}`);
    assert.throws(() => cardCode(15, "spades"), RangeError);
    assert.throws(() => encodeCards([62]), RangeError);
});

test("each game's deck, from its rules", () => {
    const all = Array.from({ length: 256 }, (_, i) => i);
    const deck = (game: string) => all.filter((c) => { try { decodeCard(c, game); return true; } catch { return false; } });
    /* doudizhu.md: 54 cards with both jokers; guandan.md: two such decks (codes repeat) */
    assert.equal(deck("doudizhu").length, 54);
    assert.equal(deck("guandan").length, 54);
    /* bigtwo.md, zhajinhua.md, holdem, blackjack: 52-card decks, no jokers */
    for (const g of ["bigtwo", "zhajinhua", "holdem", "blackjack"]) {
        assert.equal(deck(g).length, 52, g);
        assert.ok(!gameDeals(g, BLACK_JOKER) && !gameDeals(g, RED_JOKER), g);
    }
    /* runfast.md: 48 cards, one 2 (hearts), no ace of spades */
    const rf = deck("runfast");
    assert.equal(rf.length, 48);
    assert.deepEqual(rf.filter((c) => c >> 2 === 2), [cardCode(2, "hearts")]);
    assert.ok(!rf.includes(cardCode(14, "spades")));
    assert.throws(() => decodeCards("runfast", [cardCode(2, "spades")]), /of runfast/);
    /* a game without a list here (table-kit, test): any of the 54 */
    assert.equal(deck("test").length, 54);
    /* two decks: both copies kept */
    assert.deepEqual(decodeCards("guandan", Uint8Array.from([61, 61])).map((c) => c.code), [61, 61]);
    assert.deepEqual(Array.from(encodeCards(decodeCards("doudizhu", [8, 60]))), [8, 60]);
    assert.deepEqual(decodeCards("holdem", null), []);
});

// The page's pure parts without a browser: card names and orders (src/cards.ts), the tournament
// tab's texts (src/tournaments.ts), Zha Jin Hua's messages (src/zjh.ts, games/zhajinhua/zhajinhua.proto)
// and Niu Niu's (src/niuniu.ts, games/niuniu/niuniu.proto), written and read by the SDK's
// generated protobufjs code, against bytes written by hand from protobuf's encoding rules (varint
// keys field << 3 | wire type), malformed ones refused with a RangeError that says what is wrong
// (src/gamebody.ts), a Niu Niu round through the table's state (src/table.ts), a spectator's
// table (no seat, no turn), and the replay viewer's stepping (src/replay.ts) and the watch
// mode's texts (src/watch.ts).
import assert from "node:assert/strict";
import { test } from "node:test";

import { CroupierError, cardCode, croupier } from "@croupier/client";

import { blackjackTotal, cardName, cardsText, guandanOrder, guandanWild, sheddingOrder } from "../src/cards.js";
import { buyInText, clockText, eventText, formatText, itemPrizeText, levelText, ordinal, payoutText, refusalText,
         startText, statusText } from "../src/tournaments.js";
import * as niu from "../src/niuniu.js";
import { codeOf, parseAction, policyText, replayRefusalText, replayState } from "../src/replay.js";
import { Table } from "../src/table.js";
import { playerIdOf, watchEndedText, watchRefusalText } from "../src/watch.js";
import { decodeAction, decodeEvent, decodeState, encodeAction, ZjhMove } from "../src/zjh.js";

test("card names: ranks, suits and the jokers by name", () => {
    assert.equal(cardName(cardCode(10, "hearts")), "10♥");
    assert.equal(cardName(cardCode(14, "spades")), "A♠");
    assert.equal(cardName(61), "Big Joker");
    assert.equal(cardName(60), "Little Joker");
    assert.equal(cardsText([cardCode(3, "clubs"), 61]), "3♣ Big Joker");
    assert.equal(cardName(62), "card 62"); /* no card of the protocol */
});

test("the shedding order: 3 low ... A, 2, the little joker, the big joker", () => {
    const hand = [61, cardCode(2, "spades"), cardCode(3, "hearts"), 60, cardCode(14, "clubs")];
    assert.deepEqual(hand.sort((a, b) => sheddingOrder(a) - sheddingOrder(b)).map(cardName),
                     ["3♥", "A♣", "2♠", "Little Joker", "Big Joker"]);
});

test("Guandan's order at level 5: 2 low, the level cards above the aces, the wild hearts last of them", () => {
    const level = 5;
    const hand = [60, cardCode(5, "hearts"), cardCode(14, "spades"), cardCode(5, "spades"), cardCode(2, "clubs"),
                  cardCode(6, "diamonds")];
    assert.deepEqual(hand.sort((a, b) => guandanOrder(a, level) - guandanOrder(b, level)).map(cardName),
                     ["2♣", "6♦", "A♠", "5♠", "5♥", "Little Joker"]);
    assert.ok(guandanWild(cardCode(5, "hearts"), level));
    assert.ok(!guandanWild(cardCode(5, "spades"), level));
});

test("blackjack totals: soft and hard", () => {
    assert.deepEqual(blackjackTotal([cardCode(14, "spades"), cardCode(6, "hearts")]), { total: 17, soft: true });
    assert.deepEqual(blackjackTotal([cardCode(14, "spades"), cardCode(6, "hearts"), cardCode(13, "clubs")]),
                     { total: 17, soft: false });
});

test("ZjhAction: written as protobuf does, read back", () => {
    const raise = encodeAction({ move: ZjhMove.RAISE, unit: 300 });
    assert.deepEqual([...raise], [0x08, 0x03, 0x10, 0xac, 0x02]);
    assert.deepEqual(decodeAction(raise), { move: ZjhMove.RAISE, unit: 300 });
    const compare = encodeAction({ move: ZjhMove.COMPARE, target: 2 });
    assert.deepEqual([...compare], [0x08, 0x05, 0x18, 0x02]);
    assert.deepEqual(decodeAction(compare), { move: ZjhMove.COMPARE, target: 2 });
    assert.throws(() => encodeAction({ move: ZjhMove.RAISE, unit: -1 }), RangeError);
    assert.throws(() => encodeAction({ move: ZjhMove.RAISE, unit: 2.5 }), /zjh: unit 2.5 cannot be encoded/);
    assert.throws(() => encodeAction({ move: ZjhMove.COMPARE, target: 2 ** 32 }), RangeError); /* a uint32 */
    assert.throws(() => decodeAction(Uint8Array.from([0x08, 0x09])), RangeError); /* no such move */
    assert.throws(() => decodeAction(Uint8Array.from([0x10, 0x01])),
                  /zjh: a malformed ZjhAction \(missing required 'move'\)/);
});

test("ZjhState: every field the page draws", () => {
    const own = [cardCode(14, "spades"), cardCode(13, "spades"), cardCode(12, "spades")];
    const seat = [0x08, 0x01, 0x10, 0xf4, 0x03, 0x18, 0x28, 0x20, 0x01]; /* seat 1, stack 500, put in 40, looked */
    const body = Uint8Array.from([0x08, 0x01, 0x10, 0x02, 0x18, 0x14, 0x20, 0x64, 0x28, 0x01, 0x30, 0x0a,
        0x38, 0x64, 0x40, 0x04, 0x4a, 0x03, ...own, 0x52, seat.length, ...seat, 0x58, 0x28, 0x60, 0x01]);
    assert.deepEqual(decodeState(body), {
        inHand: true, bettingRound: 2, unit: 20, pot: 100, dealerSeat: 1, ante: 10, maxUnit: 100, maxRounds: 4,
        ownCards: own, seats: [{ seat: 1, stack: 500, putIn: 40, looked: true, folded: false, allIn: false }],
        toCall: 40, canCompare: true,
    });
    /* absent: numbers 0, the dealer seat and the amount to call null, no seat, no cards */
    assert.deepEqual(decodeState(Uint8Array.from([0x08, 0x00])), {
        inHand: false, bettingRound: 0, unit: 0, pot: 0, dealerSeat: null, ante: 0, maxUnit: 0, maxRounds: 0,
        ownCards: [], seats: [], toCall: null, canCompare: false,
    });
    assert.throws(() => decodeState(Uint8Array.from([0x08, 0x01, 0x4a, 0x05, 0x01])), /* cut short */
                  (e: unknown) => e instanceof RangeError && e.cause instanceof Error &&
                                  /^zjh: a malformed ZjhState \(index out of range/.test(e.message));
    assert.throws(() => decodeState(Uint8Array.from([0x52, 0x02, 0x10, 0x01, 0x08, 0x01])),
                  /zjh: a malformed ZjhState \(ZjhSeat: missing required 'seat'\)/);
    assert.throws(() => decodeState(Uint8Array.from([0x08, 0x01, 0x6f])), /* field 13, wire type 7 */
                  /zjh: a malformed ZjhState \(invalid wire type 7/);
});

test("ZjhEvent: a compare with both hands, a look, a round", () => {
    const a = [cardCode(2, "clubs"), cardCode(3, "diamonds"), cardCode(5, "hearts")];
    const b = [cardCode(13, "spades"), cardCode(13, "hearts"), cardCode(13, "clubs")];
    const compared = [0x08, 0x00, 0x10, 0x01, 0x18, 0x01, 0x22, 0x03, ...a, 0x2a, 0x03, ...b];
    assert.deepEqual(decodeEvent(Uint8Array.from([0x1a, compared.length, ...compared])), {
        kind: "compared", asker: 0, target: 1, loser: 1, askerCards: a, targetCards: b, allIn: false });
    assert.deepEqual(decodeEvent(Uint8Array.from([0x0a, 0x02, 0x08, 0x03])), { kind: "looked", seat: 3 });
    assert.deepEqual(decodeEvent(Uint8Array.from([0x2a, 0x02, 0x08, 0x04])), { kind: "round", bettingRound: 4 });
    assert.throws(() => decodeEvent(Uint8Array.from([])), /zjh: an event of no known kind/);
    assert.throws(() => decodeEvent(Uint8Array.from([0x1a, 0x02, 0x08, 0x00])),
                  /zjh: a malformed ZjhEvent \(ZjhCompared: missing required 'target'\)/);
});

test("the tournament tab's texts: places, payouts, clocks, levels, buy-ins", () => {
    assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal),
                     ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]);
    assert.equal(payoutText({ placeFrom: 1, placeTo: 1, amount: 1234 }), "1st: 1,234");
    assert.equal(payoutText({ placeFrom: 4, placeTo: 6, amount: 50 }), "4th–6th: 50 each");
    assert.equal(itemPrizeText({ place: 1, item: "trophy:gold" }), "1st: trophy:gold");
    assert.equal(clockText(0), "0:00");
    assert.equal(clockText(-5), "0:00");
    assert.equal(clockText(59001), "1:00"); /* rounded up: never 0:00 while time is left */
    assert.equal(clockText(600000), "10:00");
    assert.equal(clockText(3723000), "1:02:03");
    assert.equal(buyInText({ buyIn: 100000, fee: 5000 }), "100,000 + 5,000");
    const T = croupier.TournamentFormat;
    assert.equal(levelText({ id: 1, name: "x", format: T.TOUR_SNG, status: 2 }), "", "before the start");
    assert.equal(levelText({ id: 1, name: "x", format: T.TOUR_SNG, status: 2, levelNumber: 3, smallBlind: 50,
                             bigBlind: 100, ante: 10 }), "Level 3 · blinds 50/100, ante 10");
    assert.equal(levelText({ id: 1, name: "x", format: T.TOUR_SNG, status: 2, levelNumber: 3, smallBlind: 50,
                             bigBlind: 100, ante: 100, bigBlindAnte: true }), "Level 3 · blinds 50/100, big blind ante 100");
    assert.equal(levelText({ id: 1, name: "x", format: T.TOUR_SNG, status: 2, levelNumber: 4, onBreak: true }),
                 "Break after level 4");
    assert.equal(startText({ id: 1, name: "x", format: T.TOUR_SNG, status: 1 }), "When full");
    assert.equal(formatText(T.TOUR_MTT), "Multi-table");
    assert.equal(statusText(croupier.TournamentStatus.TOUR_CANCELLED), "Cancelled");
});

test("every tournament refusal has its own sentence", () => {
    const E = croupier.ErrorCode;
    const codes = [E.ALREADY_REGISTERED, E.NOT_REGISTERED, E.TOURNAMENT_FULL, E.REGISTRATION_CLOSED,
                   E.INSUFFICIENT_FUNDS, E.NO_REENTRY, E.TOURNAMENT_OVER, E.NO_SUCH_TOURNAMENT, E.UNAVAILABLE];
    const texts = codes.map((c) => refusalText(new CroupierError(c, "x", false), "register", { buyIn: 100, fee: 10 }));
    assert.equal(new Set(texts).size, codes.length, texts.join("\n"));
    assert.ok(texts.every((t) => !t.startsWith("Refused")), texts.join("\n"));
    assert.equal(texts[4], "Your wallet does not cover the buy-in and fee (100 + 10). Nothing was taken.");
    assert.equal(refusalText(new CroupierError(E.REGISTRATION_CLOSED, "x", false), "unregister"),
                 "Too late to unregister: the tournament has started.");
    assert.equal(refusalText(new CroupierError(E.INTERNAL, "boom", false), "register"), "Refused: INTERNAL: boom");
    const ev = { tournament: 7, kind: croupier.TournamentEventKind.TOUR_EVENT_ELIMINATED, player: 5, place: 3, prize: 40 };
    assert.equal(eventText(ev, "Daily", 5), "Daily: you are out in 3rd place, prize 40");
    assert.equal(eventText(ev, "Daily", 6), "Daily: player 5 is out in 3rd place, prize 40");
    assert.equal(eventText({ ...ev, item: "ticket:final-2027" }, "Daily", 5),
                 "Daily: you are out in 3rd place, prize 40, item ticket:final-2027");
});

test("NiuAction: written as protobuf does, read back; bad moves and bodies refused", () => {
    const bid = niu.encodeAction({ move: niu.NiuMove.BID, amount: 3 });
    assert.deepEqual([...bid], [0x08, 0x01, 0x10, 0x03]);
    assert.deepEqual(niu.decodeAction(bid), { move: niu.NiuMove.BID, amount: 3 });
    assert.deepEqual([...niu.encodeAction({ move: niu.NiuMove.SHOW })], [0x08, 0x03]);
    assert.deepEqual(niu.decodeAction(Uint8Array.from([0x08, 0x02, 0x10, 0x05])), { move: niu.NiuMove.BET, amount: 5 });
    assert.throws(() => niu.encodeAction({ move: niu.NiuMove.BET, amount: -1 }), RangeError);
    assert.throws(() => niu.encodeAction({ move: 7 as niu.NiuMove }), RangeError);
    assert.throws(() => niu.decodeAction(Uint8Array.from([0x08, 0x09])), RangeError); /* no such move */
    assert.throws(() => niu.decodeAction(Uint8Array.from([0x10, 0x01])), RangeError); /* no move */
    assert.throws(() => niu.decodeAction(Uint8Array.from([0x08, 0x81])), RangeError); /* cut short */
});

test("NiuState: phase, multiplier, every seat's bid, bet and shown cards, own cards, max bid", () => {
    const own = [cardCode(13, "spades"), cardCode(12, "hearts"), cardCode(10, "clubs"), cardCode(9, "diamonds")];
    const shown = [cardCode(2, "clubs"), cardCode(3, "clubs"), cardCode(5, "hearts"), cardCode(10, "spades"),
                   cardCode(11, "hearts")];
    const s0 = [0x08, 0x00, 0x10, 0x02];                                   /* seat 0, bid 2 */
    const s2 = [0x08, 0x02, 0x10, 0x00, 0x18, 0x04, 0x22, 0x05, ...shown]; /* seat 2, no bid, bet 4, shown */
    const body = Uint8Array.from([0x08, 0x02, 0x10, 0x02, 0x1a, s0.length, ...s0, 0x1a, s2.length, ...s2,
        0x22, 0x04, ...own, 0x28, 0x04]);
    assert.deepEqual(niu.decodeState(body), {
        phase: niu.NiuPhase.BETTING, mult: 2, ownCards: own, maxBid: 4,
        seats: [{ seat: 0, bid: 2, bet: null, shownCards: [] }, { seat: 2, bid: 0, bet: 4, shownCards: shown }],
    });
    /* between rounds: no phase, no seat */
    assert.deepEqual(niu.decodeState(Uint8Array.from([0x28, 0x04])),
                     { phase: null, mult: null, seats: [], ownCards: [], maxBid: 4 });
    assert.throws(() => niu.decodeState(Uint8Array.from([0x08, 0x01])),
                  /niuniu: a malformed NiuState \(missing required 'maxBid'\)/);
    assert.throws(() => niu.decodeState(Uint8Array.from([0x1a, 0x02, 0x10, 0x01, 0x28, 0x04])),
                  /niuniu: a malformed NiuState \(NiuSeat: missing required 'seat'\)/);
    assert.throws(() => niu.decodeState(Uint8Array.from([0x22, 0x05, 0x01])), RangeError); /* cut short */
});

test("NiuEvent: the banker and a hand shown; no other kind", () => {
    assert.deepEqual(niu.decodeEvent(Uint8Array.from([0x0a, 0x04, 0x08, 0x01, 0x10, 0x03])),
                     { kind: "banker", seat: 1, mult: 3 });
    const five = [cardCode(13, "spades"), cardCode(13, "hearts"), cardCode(12, "clubs"), cardCode(11, "clubs"),
                  cardCode(10, "diamonds")];
    const cat = [...new TextEncoder().encode("niu_niu")];
    const shown = [0x08, 0x02, 0x12, 0x05, ...five, 0x1a, cat.length, ...cat];
    assert.deepEqual(niu.decodeEvent(Uint8Array.from([0x12, shown.length, ...shown])),
                     { kind: "shown", seat: 2, cards: five, category: "niu_niu" });
    assert.throws(() => niu.decodeEvent(Uint8Array.from([])), /no known kind/);
    assert.throws(() => niu.decodeEvent(Uint8Array.from([0x0a, 0x02, 0x08, 0x01])),
                  /niuniu: a malformed NiuEvent \(NiuBanker: missing required 'mult'\)/);
});

test("Niu Niu's texts: categories, moves, the transfers of a round with the house's rake", () => {
    assert.deepEqual(["no_niu", "niu_7", "niu_niu", "five_faces", "bomb", "five_small"].map(niu.categoryText),
                     ["No niu", "Niu 7", "Niu niu", "Five faces", "Bomb", "Five small"]);
    assert.equal(niu.moveText({ move: niu.NiuMove.BID, amount: 0 }), "no bid");
    assert.equal(niu.moveText({ move: niu.NiuMove.BID, amount: 2 }), "bids ×2");
    assert.equal(niu.moveText({ move: niu.NiuMove.BET, amount: 5 }), "bets 5");
    const name = (s: number) => (s === 0 ? "You" : `Seat ${s + 1}`);
    assert.deepEqual(niu.transferLines([
        { from: 2, to: 0, amount: 60, reason: "niu_5" },
        { from: 0, to: 1, amount: 1200, reason: "niu_niu" },
        { from: 1, to: null, amount: 60, reason: "rake" },
    ], name), ["Seat 3 → You: 60 (Niu 5)", "You → Seat 2: 1,200 (Niu niu)", "Seat 2 → the house: 60 (rake)"]);
});

test("Niu Niu's choices: bids in the bid window, the Turn's bets for a punter, none for the banker", () => {
    const st: niu.NiuState = { phase: niu.NiuPhase.BIDDING, mult: null, maxBid: 4, ownCards: [],
                               seats: [{ seat: 0, bid: null, bet: null, shownCards: [] },
                                       { seat: 1, bid: null, bet: null, shownCards: [] }] };
    assert.deepEqual(niu.choices(st, 0, null, true, 0, 4).map((a) => a.amount), [0, 1, 2, 3, 4]);
    assert.deepEqual(niu.choices(st, 0, null, false, 0, 4), [], "decided: nothing more");
    assert.deepEqual(niu.choices(st, 5, null, true, 0, 4), [], "not dealt in");
    const bet = { ...st, phase: niu.NiuPhase.BETTING };
    assert.deepEqual(niu.choices(bet, 1, 0, true, 1, 5).map((a) => [a.move, a.amount]),
                     [1, 2, 3, 4, 5].map((b) => [niu.NiuMove.BET, b]));
    assert.deepEqual(niu.choices(bet, 0, 0, true, 1, 5), [], "the banker does not bet");
    assert.deepEqual(niu.choices({ ...st, phase: niu.NiuPhase.SHOWING }, 0, 0, true, null, null),
                     [{ move: niu.NiuMove.SHOW }]);
});

test("a Niu Niu round through the table: window, banker, bets, shown hands, the transfers", () => {
    const E = croupier.Engine;
    const t = Table.fromJoined({ engine: E.ENGINE_GAME, game: "niuniu", stake: 10, seat: 1, deskId: 7n,
        seats: [{ seat: 0, playerId: 11, chips: 4000 }, { seat: 1, playerId: 12, chips: 4000 }] });
    const four = [cardCode(13, "spades"), cardCode(12, "hearts"), cardCode(10, "clubs"), cardCode(9, "diamonds")];
    t.onDeal({ seat: 0, count: 4, roundId: "s:0:1:7:1" });
    t.onDeal({ seat: 1, cards: Uint8Array.from(four), roundId: "s:0:1:7:1" });
    assert.deepEqual(t.niu?.ownCards, four);
    assert.deepEqual(t.niu?.seats.map((s) => s.seat), [0, 1]);
    t.onTurn({ seat: 1, timeLeftMs: 8000, minAmount: 0, maxAmount: 4, windowSeats: [0, 1] });
    assert.ok(t.myTurn(), "in the bid window");
    t.onPlay({ seat: 1, action: { game: { body: niu.encodeAction({ move: niu.NiuMove.BID, amount: 2 }) } } });
    assert.ok(!t.myTurn(), "decided");
    assert.equal(t.niuSeat(1)?.bid, 2);
    t.onGameEvent(Uint8Array.from([0x0a, 0x04, 0x08, 0x01, 0x10, 0x02])); /* banker seat 1 at x2 */
    assert.equal(t.banker, 1);
    assert.equal(t.niu?.mult, 2);
    assert.equal(t.niu?.phase, niu.NiuPhase.BETTING);
    t.onTurn({ seat: 0, timeLeftMs: 8000, minAmount: 1, maxAmount: 5, windowSeats: [0] });
    assert.ok(!t.myTurn(), "the banker is not in the bet window");
    t.onPlay({ seat: 0, action: { game: { body: niu.encodeAction({ move: niu.NiuMove.BET, amount: 3 }) } } });
    assert.equal(t.niuSeat(0)?.bet, 3);
    const cat = [...new TextEncoder().encode("niu_8")];
    const five = [...four, cardCode(14, "spades")];
    const shown = [0x08, 0x01, 0x12, 0x05, ...five, 0x1a, cat.length, ...cat];
    t.onGameEvent(Uint8Array.from([0x12, shown.length, ...shown]));
    assert.deepEqual(t.niuShown.get(1), { cards: five, category: "niu_8" });
    t.onRoundEnd({ roundId: "s:0:1:7:1", outcome: croupier.RoundOutcome.OUTCOME_COMPLETED,
        deltas: [{ seat: 0, playerId: 11, delta: -60 }, { seat: 1, playerId: 12, delta: 57 }], rake: 3,
        transfers: [{ fromSeat: 0, toSeat: 1, amount: 60, reason: "niu_8" }, { fromSeat: 1, amount: 3, reason: "rake" }] });
    assert.deepEqual(t.transfers(), [{ from: 0, to: 1, amount: 60, reason: "niu_8" },
                                     { from: 1, to: null, amount: 3, reason: "rake" }]);
    assert.ok(!t.myTurn());
});

/* A Replay as it comes off the wire (absent fields absent): written and read by the SDK. */
const wireReplay = (r: croupier.IReplay): croupier.IReplay => croupier.Replay.decode(croupier.Replay.encode(r).finish());
const RK = croupier.ReplayEventKind;

test("replay: the record's card text read back as cards, other actions left alone", () => {
    assert.deepEqual(parseAction("play 3d4d"), { verb: "play", cards: [cardCode(3, "diamonds"), cardCode(4, "diamonds")] });
    assert.deepEqual(parseAction("landlord XbXrTs"), { verb: "landlord", cards: [60, 61, cardCode(10, "spades")] });
    assert.deepEqual(parseAction("play(auto) Ah"), { verb: "play(auto)", cards: [cardCode(14, "hearts")] });
    assert.deepEqual(parseAction("bid"), { verb: "bid", cards: null });
    assert.deepEqual(parseAction("play Zz"), { verb: "play Zz", cards: null });
    assert.deepEqual(parseAction("play 3d4"), { verb: "play 3d4", cards: null });
});

test("replay: a Dou Dizhu deal stepped forward and back, every hand face up (policy all), the results at the end", () => {
    const h0 = [cardCode(3, "clubs"), cardCode(4, "clubs")], h1 = [cardCode(5, "hearts")], h2 = [cardCode(9, "spades")];
    const bottom = [60, cardCode(2, "spades")];
    const r = wireReplay({ roundId: "s:0:1:7:3", game: "doudizhu", stake: 10, policy: "all",
        outcome: croupier.RoundOutcome.OUTCOME_COMPLETED, yourSeat: 1, rake: 2,
        seats: [{ seat: 0, playerId: 11, stack: 0, delta: 40 }, { seat: 1, playerId: 12, delta: -20 },
                { seat: 2, bot: true, delta: -22 }],
        events: [
            { kind: RK.REPLAY_DEAL, seat: 0, cards: Uint8Array.from(h0) },
            { kind: RK.REPLAY_DEAL, seat: 1, cards: Uint8Array.from(h1) },
            { kind: RK.REPLAY_DEAL, seat: 2, cards: Uint8Array.from(h2) },
            { kind: RK.REPLAY_DEAL, cards: Uint8Array.from(bottom) },
            { kind: RK.REPLAY_ACTION, seat: 0, action: "bid", amount: 3 },
            { kind: RK.REPLAY_ACTION, seat: 0, action: "landlord Xb2s", amount: 3 },
            { kind: RK.REPLAY_ACTION, seat: 0, action: "play 3c", amount: 1 },
            { kind: RK.REPLAY_ACTION, seat: 1, action: "pass", amount: 0 },
        ] });
    const start = replayState(r, 0);
    assert.equal(start.total, 8);
    assert.equal(start.text, "");
    assert.equal(start.ended, false);
    assert.deepEqual(start.seats.map((s) => [s.name, s.cards.length, s.hidden]),
                     [["Player 11", 0, 0], ["You", 0, 0], ["Bot 3", 0, 0]]);
    const dealt = replayState(r, 4);
    assert.deepEqual(dealt.seats[0].cards, h0);
    assert.deepEqual(dealt.table, bottom);
    assert.equal(dealt.text, "Table: Little Joker 2♠");
    const played = replayState(r, 7);
    assert.deepEqual(played.seats[0].cards, [cardCode(4, "clubs"), 60, cardCode(2, "spades")], "the 3♣ left the hand");
    assert.deepEqual(played.seats[0].played, [cardCode(3, "clubs")]);
    assert.equal(played.text, "Player 11: play 3♣");
    assert.equal(played.seats[0].action, "play 3♣");
    assert.deepEqual(played.log, ["Player 11: dealt 3♣ 4♣", "You: dealt 5♥", "Bot 3: dealt 9♠", "Table: Little Joker 2♠",
        "Player 11: bid 3", "Player 11: takes the bottom cards Little Joker 2♠", "Player 11: play 3♣"]);
    /* a step back is the state computed again: the card is back in the hand */
    assert.deepEqual(replayState(r, 6).seats[0].cards, [...h0, 60, cardCode(2, "spades")]);
    assert.equal(replayState(r, 6).seats[0].played.length, 0);
    assert.deepEqual(played.result, [], "no result before the end");
    const end = replayState(r, 8);
    assert.equal(end.ended, true);
    assert.deepEqual(end.result, ["Round over", "Player 11: +40", "You: -20", "Bot 3: -22", "Rake: 2"]);
    assert.deepEqual(end.seats.map((s) => s.delta), [40, -20, -22]);
    /* out of range: clamped */
    assert.equal(replayState(r, -3).step, 0);
    assert.equal(replayState(r, 99).step, 8);
});

test("replay: a stranger's hold'em hand: hole cards as counts, the board between the actions, the showdown's hands", () => {
    const a = [cardCode(14, "spades"), cardCode(13, "spades")], flop = [cardCode(2, "clubs"), cardCode(7, "hearts"), cardCode(9, "diamonds")];
    const r = wireReplay({ roundId: "s:0:1:7:4", game: "holdem", stake: 10, policy: "showdown",
        outcome: croupier.RoundOutcome.OUTCOME_COMPLETED,
        seats: [{ seat: 0, playerId: 21, stack: 1000, delta: 20, cards: Uint8Array.from(a) },
                { seat: 1, playerId: 22, stack: 1000, delta: -20, hidden: 2 }],
        events: [
            { kind: RK.REPLAY_DEAL, seat: 0, count: 2 },
            { kind: RK.REPLAY_DEAL, seat: 1, count: 2 },
            { kind: RK.REPLAY_ACTION, seat: 0, action: "call", amount: 10 },
            { kind: RK.REPLAY_ACTION, seat: 1, action: "check", amount: 0 },
            { kind: RK.REPLAY_DEAL, cards: Uint8Array.from(flop) },
            { kind: RK.REPLAY_SHOW, seat: 0, cards: Uint8Array.from(a) },
        ] });
    const dealt = replayState(r, 2);
    assert.deepEqual(dealt.seats.map((s) => [s.cards.length, s.hidden]), [[0, 2], [0, 2]], "face down: counts only");
    assert.equal(dealt.text, "Player 22: dealt 2 cards face down");
    assert.equal(replayState(r, 3).seats[0].action, "call 10");
    const flopped = replayState(r, 5);
    assert.deepEqual(flopped.table, flop);
    assert.equal(flopped.text, "Board: 2♣ 7♥ 9♦");
    assert.deepEqual(flopped.seats.map((s) => s.stack), [1000, 1000]);
    const end = replayState(r, 6);
    assert.deepEqual(end.seats[0].cards, a, "the hand shown at the showdown");
    assert.equal(end.seats[0].hidden, 0);
    assert.deepEqual([end.seats[1].cards.length, end.seats[1].hidden], [0, 2], "the other stays a count");
    assert.equal(end.text, "Player 21: shows A♠ K♠");
    assert.deepEqual(end.result, ["Round over", "Player 21: +20", "Player 22: -20"]);
    const voided = replayState(wireReplay({ roundId: "s:0:1:7:5", game: "holdem",
        outcome: croupier.RoundOutcome.OUTCOME_VOIDED, voidReason: croupier.VoidReason.VOID_SERVER_CRASHED, seats: [], events: [] }), 0);
    assert.equal(voided.ended, true);
    assert.match(voided.result[0], /^Round voided \(server_crashed\): every stake refunded$/);
});

test("replay: share codes as typed, the policy and the refusals in words", () => {
    assert.equal(codeOf(" 1234 5678 "), "12345678");
    assert.equal(codeOf("1234-5678"), "12345678");
    assert.equal(codeOf("123456"), null, "a room's 6 digits");
    assert.equal(codeOf("abcdefgh"), null);
    assert.equal(codeOf(""), null);
    assert.equal(policyText("showdown"), "the hands shown at the showdown");
    assert.equal(policyText("all"), "every card");
    const unknown = new CroupierError(croupier.ErrorCode.REPLAY_CODE_UNKNOWN, "never made, or expired", false);
    assert.equal(replayRefusalText(unknown, "00000000"), "No replay has the code 00000000: it was never made, or it expired");
    assert.match(replayRefusalText(new CroupierError(croupier.ErrorCode.NOT_IN_ROUND, "", false)), /ask one of its players for a share code/);
});

test("watch: the WatchEnded reasons and the refusals in plain words, player ids as typed", () => {
    assert.equal(watchEndedText(croupier.ErrorCode.NO_SUCH_TABLE),
        "The watch ended: the table is gone: it closed, or moved to another server (follow a player to follow his table).");
    assert.equal(watchEndedText(croupier.ErrorCode.NOT_SEATED, "60 s"),
        "The watch ended: the player followed has sat at no table for a minute (60 s).");
    assert.match(watchEndedText(croupier.ErrorCode.NOT_WATCHABLE), /may not be watched any more/);
    assert.equal(watchRefusalText(new CroupierError(croupier.ErrorCode.NOT_SEATED, "", false), "player 7"),
        "Cannot watch player 7: he sits at no table now");
    assert.equal(watchRefusalText(new CroupierError(croupier.ErrorCode.ALREADY_SEATED, "", false), "player 7"),
        "You hold a seat at a table: leave it before watching one");
    assert.equal(playerIdOf(" 91001 "), 91001);
    for (const bad of ["", "0", "-3", "12a", "1.5", "99999999999999999999"])
        assert.equal(playerIdOf(bad), null, bad);
});

test("a spectator's table: no seat of its own, never its turn, no private card", () => {
    const t = Table.fromSnapshot({ deskId: 5n, yourSeat: 2, engine: croupier.Engine.ENGINE_HOLDEM, game: "holdem", stake: 10,
        spectator: true, roundId: "s:0:1:5:1", turnSeat: 0, timeLeftMs: 5000,
        seats: [{ seat: 0, playerId: 31, chips: 990 }, { seat: 1, playerId: 32, chips: 980 }],
        holdem: { street: croupier.HoldemStreet.HOLDEM_PREFLOP, pot: 30, players: [{ seat: 0, stack: 990, bet: 10 }, { seat: 1, stack: 980, bet: 20 }] } });
    assert.equal(t.spectator, true);
    assert.deepEqual(t.seatNumbers(), [0, 1], "no seat of the spectator's");
    assert.equal(t.myTurn(), false);
    t.onTurn({ seat: 2, timeLeftMs: 5000 });
    assert.equal(t.myTurn(), false, "never the spectator's turn");
    t.onDeal({ seat: 0, count: 2, roundId: "s:0:1:5:1" });
    assert.deepEqual(t.hole, []);
    t.onDeal({ roundId: "s:0:1:5:1", cards: Uint8Array.from([cardCode(2, "clubs"), cardCode(3, "clubs"), cardCode(4, "clubs")]) });
    assert.equal(t.board.length, 3);
    assert.deepEqual([...t.players.values()].map((p) => p.bet), [0, 0], "the bets went into the pot");
    t.onRoundEnd({ roundId: "s:0:1:5:1", outcome: croupier.RoundOutcome.OUTCOME_COMPLETED,
        deltas: [{ seat: 0, playerId: 31, delta: 20 }, { seat: 1, playerId: 32, delta: -20 }] });
    assert.deepEqual([...t.players.values()].map((p) => p.stack), [1010, 960], "the stacks moved by the results");
});

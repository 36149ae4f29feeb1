// Card codes (docs/protocol.md "Cards"): one byte per card, the same code in every game,
// code = rank << 2 | suit, rank 2..14 (J = 11, Q = 12, K = 13, A = 14), suit 0 clubs,
// 1 diamonds, 2 hearts, 3 spades; the black (little) joker is 15 << 2 | 0 = 60, the red (big)
// joker 15 << 2 | 1 = 61. Which codes a game deals is in its rules (docs/rules/<game>.md).

export type Suit = "clubs" | "diamonds" | "hearts" | "spades";
export type Joker = "black" | "red";

/** One decoded card. */
export interface Card {
    /** The wire code. */
    code: number;
    /** 2..14 (11 J, 12 Q, 13 K, 14 A); 15 for a joker. */
    rank: number;
    /** null for a joker. */
    suit: Suit | null;
    /** Which joker, else null. */
    joker: Joker | null;
    /** For people: "10♥", "A♠", "black joker", "red joker". */
    text: string;
    /** The compact text of the rules and hand histories (docs/rules/zhajinhua.md "Cards",
     * docs/rules/traditional-engine.md): "Th", "As", "Xb", "Xr". */
    short: string;
}

const SUITS: Suit[] = ["clubs", "diamonds", "hearts", "spades"];
const SUIT_SIGN = ["♣", "♦", "♥", "♠"];
const SUIT_LETTER = "cdhs";
const RANK_TEXT: Record<number, string> = { 10: "10", 11: "J", 12: "Q", 13: "K", 14: "A" };
const RANK_LETTER: Record<number, string> = { 10: "T", 11: "J", 12: "Q", 13: "K", 14: "A" };

export const BLACK_JOKER = 60;
export const RED_JOKER = 61;

/** The code of a card: rank 2..14 and a suit (a joker: cardCode(15, 0) black, (15, 1) red). */
export function cardCode(rank: number, suit: Suit | number): number {
    const s = typeof suit === "number" ? suit : SUITS.indexOf(suit);
    const code = (rank << 2) | s;
    if (!Number.isInteger(rank) || s < 0 || s > 3 || !validCode(code))
        throw new RangeError(`croupier: no card of rank ${rank} and suit ${String(suit)}`);
    return code;
}

/** One of the 54 codes of the protocol (frame_card_valid() in proto/frame.h). */
export function validCode(code: number): boolean {
    const r = code >> 2;
    return Number.isInteger(code) && ((r >= 2 && r <= 14) || code === BLACK_JOKER || code === RED_JOKER);
}

/* The codes each game deals, from its rules: the jokers only in Dou Dizhu and Guandan
 * (docs/rules/doudizhu.md, guandan.md); Run Fast's 48 cards have one 2 (hearts) and no ace of
 * spades (docs/rules/runfast.md "Cards and deal"); Big Two, hold'em, blackjack and Zha Jin Hua
 * one or more 52-card decks. A game not listed (a table-kit game, the test engine) may use any
 * of the 54. */
const STANDARD = (c: number) => validCode(c) && c >> 2 <= 14;
const GAME_CODES: Record<string, (c: number) => boolean> = {
    doudizhu: validCode,
    guandan: validCode,
    runfast: (c) => STANDARD(c) && (c >> 2 !== 2 || c === cardCode(2, "hearts")) && c !== cardCode(14, "spades"),
    bigtwo: STANDARD,
    holdem: STANDARD,
    blackjack: STANDARD,
    zhajinhua: STANDARD,
};

/** Whether game deals the card code (any of the 54 for a game without a list here). */
export function gameDeals(game: string, code: number): boolean {
    return (GAME_CODES[game] ?? validCode)(code);
}

/** Decodes one card code; a RangeError for a code that is no card (or none game deals). */
export function decodeCard(code: number, game?: string): Card {
    if (!validCode(code) || (game !== undefined && !gameDeals(game, code)))
        throw new RangeError(`croupier: ${code} is no card code${game !== undefined ? ` of ${game}` : ""}`);
    const rank = code >> 2, s = code & 3;
    if (rank === 15) {
        const joker: Joker = s === 0 ? "black" : "red";
        return { code, rank, suit: null, joker, text: `${joker} joker`, short: s === 0 ? "Xb" : "Xr" };
    }
    return {
        code, rank, suit: SUITS[s], joker: null,
        text: (RANK_TEXT[rank] ?? String(rank)) + SUIT_SIGN[s],
        short: (RANK_LETTER[rank] ?? String(rank)) + SUIT_LETTER[s],
    };
}

/** Decodes a card list (any `cards` / `*_cards` / `hand` / `board` bytes field of a message)
 * of the game (the `game` of its Joined / Snapshot). Two-deck games repeat codes: each is kept. */
export function decodeCards(game: string, bytes: Uint8Array | ArrayLike<number> | null | undefined): Card[] {
    return Array.from(bytes ?? [], (c) => decodeCard(c, game));
}

/** Encodes cards (codes or decoded cards) for a move, e.g. `shedding: { move: SHEDDING_PLAY,
 * cards: encodeCards(picked) }`. */
export function encodeCards(cards: Iterable<number | Card>): Uint8Array {
    return Uint8Array.from(cards, (c) => {
        const code = typeof c === "number" ? c : c.code;
        if (!validCode(code))
            throw new RangeError(`croupier: ${code} is no card code`);
        return code;
    });
}

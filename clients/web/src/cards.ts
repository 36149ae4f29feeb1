// Card codes of the protocol (docs/protocol.md "Cards"): code = rank << 2 | suit, rank 2..14
// (J=11, Q=12, K=13, A=14), suit 0 clubs, 1 diamonds, 2 hearts, 3 spades; jokers are rank 15,
// suit 0 the black (little) one, 1 the red (big) one.

const SUITS = ["♣", "♦", "♥", "♠"];
const RANKS: Record<number, string> = { 11: "J", 12: "Q", 13: "K", 14: "A" };

export const rankOf = (code: number): number => code >> 2;
export const suitOf = (code: number): number => code & 3;

/** "10♥", "A♠", "BJ" (black joker), "RJ" (red joker). */
export function cardLabel(code: number): string {
    const r = rankOf(code);
    if (r === 15)
        return suitOf(code) === 0 ? "BJ" : "RJ";
    return (RANKS[r] ?? String(r)) + SUITS[suitOf(code)];
}

/** Whether the card is drawn red: diamonds, hearts and the red joker. */
export function cardRed(code: number): boolean {
    const s = suitOf(code);
    return rankOf(code) === 15 ? s === 1 : s === 1 || s === 2;
}

/** The shedding games' order (docs/rules/doudizhu.md "Cards and deal"): 3 low ... A, 2, black
 * joker, red joker; suits break ties so a sorted hand is stable. */
export function sheddingOrder(code: number): number {
    const r = rankOf(code);
    const v = r === 15 ? 16 + suitOf(code) : r === 2 ? 15 : r;
    return v * 4 + suitOf(code);
}

/** Blackjack's value of a hand (docs/rules/blackjack.md §1): the best total and whether an ace
 * still counts 11 (soft). */
export function blackjackTotal(cards: number[]): { total: number; soft: boolean } {
    let total = 0, aces = 0;
    for (const c of cards) {
        const r = rankOf(c);
        if (r === 14) {
            aces++;
            total += 1;
        } else {
            total += r >= 10 ? 10 : r;
        }
    }
    const soft = aces > 0 && total + 10 <= 21;
    return { total: soft ? total + 10 : total, soft };
}

/** Blackjack's value of one card for a split (a king and a ten are a pair). */
export function blackjackValue(code: number): number {
    const r = rankOf(code);
    return r === 14 ? 11 : r >= 10 ? 10 : r;
}

/** One card as a DOM element; null draws the back of a face-down card. */
export function cardElement(code: number | null): HTMLElement {
    const el = document.createElement("span");
    el.className = "card";
    if (code === null) {
        el.classList.add("back");
        el.textContent = "🂠";
        return el;
    }
    el.textContent = cardLabel(code);
    el.dataset.code = String(code);
    if (cardRed(code))
        el.classList.add("red");
    return el;
}

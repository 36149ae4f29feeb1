// @croupier/client: the TypeScript SDK of croupier's client protocol (docs/protocol.md).
export { Client, CroupierError, TOURNAMENTS_FOLLOWED, croupier } from "./client.js";
export type { ClientOptions, ClientEvent, JoinResult, PlayTournamentOptions, ServerMessage, TournamentListResult, TournamentSeatEvent, WatchTarget, WebSocketCtor, WebSocketLike } from "./client.js";
export { BLACK_JOKER, RED_JOKER, cardCode, decodeCard, decodeCards, encodeCards, gameDeals, validCode } from "./cards.js";
export type { Card, Joker, Suit } from "./cards.js";
export { COMMITMENT_BYTES, LEAF_BYTES, MAX_DECK_CARDS, NONCE_BYTES, cardLeaf, dealPosition, dealtAsSet, deckCardLeaves, deckCommitment, leavesCommitment, shoeCommitment, shoeRecordFromReplay, verifyDeal, verifyDealCards, verifyRecord, verifyShoe } from "./fairness.js";
export type { CardsReplay, CardsVerdict, DeckRecord, ShoeRecord, ShoeReplay, ShoeVerdict } from "./fairness.js";

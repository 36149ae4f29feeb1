/*
 * deck -- the one source of shuffled decks for every game (docs/fairness.md).
 *
 * Every production deal of every engine (hold'em, blackjack, the shedding games, Zha Jin Hua)
 * takes its card order from deck_shuffle(); the games' rules modules keep taking a deck order
 * as input, and their seeded generators (bj_rng, shed_rng) stay for tests, replays and the
 * simulator only.
 *
 * The generator is OpenSSL's public DRBG (RAND_bytes: NIST SP 800-90A CTR_DRBG with AES-256,
 * 256-bit security strength, seeded and reseeded by OpenSSL from the kernel's getrandom()). Its
 * output is read in 4 KiB blocks per thread and used strictly in the order generated. Integers
 * in [0, bound) come from 32-bit draws by Lemire's multiply-shift with rejection (no modulo bias);
 * the shuffle is Fisher-Yates in its downward form. docs/fairness.md gives the details, the
 * entropy argument (52! < 2^226 against a 256-bit DRBG) and the tests.
 *
 * A generator failure (RAND_bytes reports an error, or a block repeats the previous one: the
 * continuous repetition test) is sticky: every later call fails with -EIO, deck_healthy()
 * turns false, one log line "rng_failed" is written, and the server that watches it turns
 * unready and starts no round (engine/gs.h gs_can_start_round). There is never a fallback to
 * another generator.
 *
 * Thread-safe: the buffers are per thread, the health state is atomic.
 */
#ifndef CROUPIER_DECK_H
#define CROUPIER_DECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest deck deck_shuffle() and the commitment take: an 8-deck blackjack shoe. */
#define DECK_MAX_CARDS 416
#define DECK_NONCE_LEN 32
#define DECK_COMMIT_LEN 32
/* The commitment's domain tag: the first 16 bytes hashed (docs/fairness.md). */
#define DECK_COMMIT_TAG "croupier-deck-v1"
/* The tag of a blackjack shoe's commitment (one per shoe, opened when the shoe is retired):
 * the same construction with its own 16-byte tag, so a shoe's opening is never a round's. */
#define DECK_SHOE_TAG "croupier-shoe-v1"
/* The per-card commitment (scheme 2, docs/fairness.md "The per-card commitment"): the round's
 * commitment is SHA-256 over DECK_COMMIT_TAG_V2, n and the n leaves; leaf i is SHA-256 over
 * DECK_LEAF_TAG, i, the card's code and the card's own nonce, derived from the round's nonce by
 * HMAC-SHA256 under DECK_CARD_NONCE_LABEL. Each tag is 16 bytes, the label 4. */
#define DECK_COMMIT_TAG_V2 "croupier-deck-v2"
#define DECK_LEAF_TAG "croupier-card-v2"
#define DECK_CARD_NONCE_LABEL "card"
#define DECK_LEAF_LEN 32
/* The schemes (Deal.deck_scheme, the record's deck_scheme): the whole deck at once, or per card. */
#define DECK_SCHEME_WHOLE 1
#define DECK_SCHEME_CARDS 2

/* Fills buf with n bytes of generator output (the stream the shuffles consume). 0 or -EIO. */
int deck_random_bytes(void *buf, size_t n);
/* A uniform integer in [0, bound) into *out; bound >= 1. 0, -EINVAL (bound 0) or -EIO. */
int deck_uniform(uint32_t bound, uint32_t *out);
/*
 * Shuffles cards[0..n) in place (Fisher-Yates: for i = n-1 down to 1, swap cards[i] with
 * cards[j], j uniform in [0, i]). Any n from 0 to 65535. 0, or -EIO (the generator failed:
 * the cards are left in an unspecified order and must not be dealt).
 */
int deck_shuffle(uint8_t *cards, size_t n);

/*
 * The periodic health check (croupier-game runs it every second): 32 bytes straight from the
 * generator into scratch memory, never used for a deal, checked like a block (an error, or the
 * same bytes as the previous check, is a failure). A generator that fails while the server is
 * idle is seen within a second, before the next deal. Returns 0 or -EIO.
 */
int deck_check(void);

/* Whether the generator is healthy (no failure since the process started). Any thread. */
bool deck_healthy(void);
/* Generator failures seen (the first one disables the generator). */
uint64_t deck_failures(void);
/*
 * Publishes the generator's health in reg: the gauge rng_healthy (1, 0 once failed) and the
 * counter rng_failures_total, kept current from then on. Call once at start (croupier-game does);
 * reg must outlive every later deck call.
 */
struct metrics_registry;
void deck_metrics_register(struct metrics_registry *reg);

/*
 * The commitment to a deal: SHA-256 over DECK_COMMIT_TAG (16 bytes), n as 2 bytes big-endian,
 * the n card bytes in deck order, then the 32-byte nonce (docs/fairness.md "The commitment").
 * n at most DECK_MAX_CARDS. Writes DECK_COMMIT_LEN bytes to out.
 */
void deck_commitment(const uint8_t *cards, size_t n, const uint8_t nonce[DECK_NONCE_LEN],
                     uint8_t out[DECK_COMMIT_LEN]);
/* The same construction under another 16-byte tag (DECK_SHOE_TAG: a blackjack shoe). */
void deck_commitment_tagged(const char tag[16], const uint8_t *cards, size_t n,
                            const uint8_t nonce[DECK_NONCE_LEN], uint8_t out[DECK_COMMIT_LEN]);

/*
 * The per-card commitment (scheme 2, docs/fairness.md "The per-card commitment"), in parts so
 * that a verifier can check one opened card without the others:
 *
 *   card_nonce[i] = HMAC-SHA256(key = the round's 32-byte nonce, "card" || i as 2 bytes BE)
 *   leaf[i]       = SHA-256("croupier-card-v2" || i as 2 bytes BE || code[i] || card_nonce[i])
 *   commitment    = SHA-256("croupier-deck-v2" || n as 2 bytes BE || leaf[0] || ... || leaf[n-1])
 *
 * code[i] is the protocol's code of the card at position i (docs/protocol.md "Cards"), the byte a
 * player finds in his Deal. Revealing card_nonce[i] (an opening: position, code, card nonce)
 * proves the card at i and reveals nothing of another card: the card nonces are outputs of a
 * PRF under the secret round nonce. i below 65536; n at most DECK_MAX_CARDS. Nothing can fail.
 */
void deck_card_nonce(const uint8_t nonce[DECK_NONCE_LEN], size_t i, uint8_t out[DECK_NONCE_LEN]);
void deck_card_leaf(size_t i, uint8_t code, const uint8_t card_nonce[DECK_NONCE_LEN],
                    uint8_t out[DECK_LEAF_LEN]);
/* All n leaves (n * DECK_LEAF_LEN bytes into leaves) of codes[0..n) under the round's nonce. */
void deck_card_leaves(const uint8_t *codes, size_t n, const uint8_t nonce[DECK_NONCE_LEN],
                      uint8_t *leaves);
/* The commitment of n leaves (n * DECK_LEAF_LEN bytes). */
void deck_leaves_commitment(const uint8_t *leaves, size_t n, uint8_t out[DECK_COMMIT_LEN]);
/* deck_card_leaves() then deck_leaves_commitment(): the round's scheme-2 commitment. */
void deck_commitment_cards(const uint8_t *codes, size_t n, const uint8_t nonce[DECK_NONCE_LEN],
                           uint8_t out[DECK_COMMIT_LEN]);

/* One round's deal: the deck order, its nonce and its commitment (docs/fairness.md). */
typedef struct {
    size_t n;
    uint8_t cards[DECK_MAX_CARDS];
    uint8_t nonce[DECK_NONCE_LEN];
    uint8_t commitment[DECK_COMMIT_LEN];
    int scheme;                    /* DECK_SCHEME_WHOLE, or DECK_SCHEME_CARDS once per card */
    uint8_t codes[DECK_MAX_CARDS]; /* scheme 2: the protocol code of cards[i] */
} deck_deal_t;

/*
 * The production path of a deal: shuffles cards[0..n) in place (deck_shuffle()), then draws a
 * fresh nonce from the same generator and computes the commitment; d gets copies of all three.
 * Returns 0, -EINVAL (n over DECK_MAX_CARDS) or -EIO (the generator failed: deal nothing).
 */
int deck_deal(deck_deal_t *d, uint8_t *cards, size_t n);

/*
 * A duplicate deal (docs/fairness.md "Duplicate deals"): the same Fisher-Yates with j uniform in
 * [0, i] by rejection, its 32-bit draws taken from HMAC-SHA256(key, counter) instead of the
 * generator, so every table given the same key deals the same order; *first (when not NULL)
 * gets a uniform seat in [0, seats) from the same stream (the deal's first seat). The nonce is
 * still fresh from the generator and the commitment computed as for any deal. key: 1..256 bytes.
 * Returns 0, -EINVAL, or -EIO (the generator failed).
 */
int deck_deal_keyed(deck_deal_t *d, uint8_t *cards, size_t n, const void *key, size_t keylen,
                    uint32_t seats, uint32_t *first);

/*
 * Turns a deal (deck_deal() or deck_deal_keyed()) into a per-card one: codes[i] = code(cards[i])
 * (the protocol's card code of the game's card byte), the commitment recomputed under scheme 2
 * (deck_commitment_cards()), scheme DECK_SCHEME_CARDS. Before the first card is dealt.
 */
void deck_deal_per_card(deck_deal_t *d, uint8_t (*code)(uint8_t card));

/* Lower-case hex of n bytes into out (2n + 1 bytes with the NUL). */
void deck_hex(const uint8_t *bytes, size_t n, char *out);
/* Parses hex (an even number of hex digits, at most 2 * max) into out; returns the byte count,
 * or -EINVAL. */
int deck_unhex(const char *hex, uint8_t *out, size_t max);

/*
 * For tests only (a server never calls these): gen replaces RAND_bytes (returns 1 on success,
 * as RAND_bytes does; NULL restores it) and drops this thread's buffered output;
 * deck_health_reset() clears the failure state.
 */
typedef int (*deck_gen_fn)(unsigned char *buf, int n);
void deck_set_generator(deck_gen_fn gen);
/* The production generator (RAND_bytes), for a test generator that wraps it. */
int deck_default_generator(unsigned char *buf, int n);
void deck_health_reset(void);

#endif

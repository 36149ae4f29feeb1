/*
 * cardtext -- the text form of cards in the project's wire code, shared by every game whose
 * rules use that code (Zha Jin Hua, Niu Niu) and by croupier-rules.
 *
 * The wire code (proto/frame.h FRAME_CARD): code = rank << 2 | suit, rank 2..14 (J 11, Q 12,
 * K 13, A 14), suit 0 clubs, 1 diamonds, 2 hearts, 3 spades. The text form of a card is a rank
 * character (2-9, T, J, Q, K, A) and a suit character (c, d, h, s): "As", "Td". A hand is
 * written without separators ("AsKd2c"); the parser also skips spaces between cards.
 * Jokers have no text form here (the shedding games have their own notation).
 *
 * Pure functions: no state, no allocation, thread-safe.
 */
#ifndef CROUPIER_CARDTEXT_H
#define CROUPIER_CARDTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CARDTEXT_CARD(rank, suit) ((uint8_t)(((rank) << 2) | (suit)))
#define CARDTEXT_RANK(code) ((code) >> 2)
#define CARDTEXT_SUIT(code) ((code)&3)

/* True for the 52 codes of a standard deck (rank 2..14, any suit): bytes 8..59. */
bool cardtext_valid(uint8_t code);
/* Parses exactly one card ("As", "Td"; nothing before or after); its code, or -EINVAL. */
int cardtext_parse_card(const char *s);
/*
 * Parses a string of cards ("AsKd2c", spaces between cards allowed) into out, at most max
 * codes. Returns the number of cards (0 for an empty string); -EINVAL if the text is not
 * well-formed or holds a card twice; -E2BIG if it holds more than max cards.
 */
int cardtext_parse(const char *s, uint8_t *out, int max);
/*
 * cardtext_parse() with the reason of a refusal, for a person: when err is not NULL it receives
 * (errlen bytes at most, NUL-terminated; "" on success) which card is wrong, counted from 1 with
 * its text, and why: "card 2 'Kx': 'x' is not a suit (c d h s)", "card 3 'X': 'X' is not a rank
 * (2-9 T J Q K A)", "card 5 'K': a rank without its suit", "card 4 'As': the same card as card
 * 1", "more than 3 cards", "no text". A character that is not printable is named by its byte
 * ("byte 0x07"). Returns as cardtext_parse().
 */
int cardtext_parse_why(const char *s, uint8_t *out, int max, char *err, size_t errlen);
/*
 * Parses a hand of exactly n distinct cards (croupier-rules' CARDS): 0, or -EINVAL with the
 * reason in err as cardtext_parse_why() writes it, or "4 cards, 5 needed" / "more than 5 cards"
 * for a hand of another size.
 */
int cardtext_parse_hand(const char *s, uint8_t *out, int n, char *err, size_t errlen);
/*
 * Writes the text form of n cards ("AsKd2c") to buf, NUL-terminated: needs 2 * n + 1 bytes.
 * Returns the length written, or -EINVAL if buf is too small or a code is not valid (buf then
 * holds an empty string when len > 0).
 */
int cardtext_format(const uint8_t *cards, int n, char *buf, size_t len);

#endif

/*
 * croupier-rules commands of the kit's deck source (common/deck.h, docs/fairness.md):
 *   verify-deal COMMITMENT DECK NONCE   opens a round's commitment with the revealed deck/nonce
 *   verify-deal --record FILE           the same from a hand-history record (JSON; - = stdin);
 *                                       a per-card record (deck_scheme 2): its leaves, and each
 *                                       recorded card at its dealing position
 *   verify-deal --replay FILE [COMMIT]  a player's check of a per-card replay (a Replay message
 *                                       as GetReplay answered it, binary): replay_check_cards()
 *   replay --record FILE --viewer ID    the Replay a player (0: a share code) gets of a record,
 *                                       binary on stdout (replay_build(), what the gateway sends)
 *   verify-shoe FILE...                 blackjack: opens every retired shoe the records reveal
 *                                       and checks each round's cards against its positions
 *   rng-raw N                           N raw generator bytes to stdout (binary)
 *   deals GAME N                        N final deck orders through the production path
 * Bad input: one line on stderr, exit code 2. verify-deal: exit 0 when the commitment opens,
 * 1 when it does not.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cardtext.h"
#include "deck.h"
#include "holdem_eval.h"
#include "niuniu.h"
#include "replay.h"
#include "rules_cmds.h"
#include "shed_game.h"
#include "shed_rules.h"
#include "zjh.h"

/* Parses a count: decimal, 1..max. Prints the error and returns false otherwise. */
static bool rules_deck_count(const char *cmd, const char *text, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v == 0 || v > max) {
        fprintf(stderr, "croupier-rules %s: '%s' is not a count from 1 to %" PRIu64 "\n", cmd, text,
                max);
        return false;
    }
    *out = v;
    return true;
}

/* ---- verify-deal ---------------------------------------------------------------------------- */

static int rules_verify_usage(void)
{
    fprintf(stderr, "usage: croupier-rules verify-deal COMMITMENT DECK NONCE   (hex, as in the "
                    "hand history)\n"
                    "       croupier-rules verify-deal --record FILE   (a hand-history record, "
                    "- for stdin)\n"
                    "       croupier-rules verify-deal --replay FILE [COMMITMENT]   (a Replay "
                    "message under the per-card commitment, binary, - for stdin)\n");
    return 2;
}

/* Checks hex texts; prints the verdict. 0 opens, 1 does not, 2 bad input. */
static int rules_verify(const char *chex, const char *dhex, const char *nhex)
{
    uint8_t commit[DECK_COMMIT_LEN], deck[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN],
        got[DECK_COMMIT_LEN];
    if (deck_unhex(chex, commit, sizeof commit) != DECK_COMMIT_LEN) {
        fprintf(stderr, "croupier-rules verify-deal: the commitment is not 64 hex digits\n");
        return 2;
    }
    int n = deck_unhex(dhex, deck, sizeof deck);
    if (n <= 0) {
        fprintf(stderr,
                "croupier-rules verify-deal: the deck is not 1 to %d cards of hex (two "
                "digits a card)\n",
                DECK_MAX_CARDS);
        return 2;
    }
    if (deck_unhex(nhex, nonce, sizeof nonce) != DECK_NONCE_LEN) {
        fprintf(stderr, "croupier-rules verify-deal: the nonce is not 64 hex digits\n");
        return 2;
    }
    deck_commitment(deck, (size_t)n, nonce, got);
    if (memcmp(got, commit, sizeof got) != 0) {
        char hex[2 * DECK_COMMIT_LEN + 1];
        deck_hex(got, sizeof got, hex);
        printf("MISMATCH: the deck and nonce give %s, not the commitment %s: this is not the "
               "deck the players were committed to\n",
               hex, chex);
        return 1;
    }
    printf("ok: the %d-card deck and the nonce open the commitment: the deck order was fixed "
           "before the first card (docs/fairness.md says what this does not prove)\n",
           n);
    return 0;
}

/*
 * A record under the per-card commitment (deck_scheme 2, docs/fairness.md "The per-card
 * commitment"): the leaves of deck_codes under deck_nonce give the commitment, and every card
 * the record says was dealt (its seats' cards in order, the table's) is deck_codes' card at the
 * position the game's dealing rule gives it. 0, 1 (a mismatch) or 2 (bad input).
 */
static int rules_verify_record_cards(const json_t *rec, const char *path)
{
    const char *c = json_string_value(json_object_get(rec, "deck_commitment"));
    const char *d = json_string_value(json_object_get(rec, "deck_codes"));
    const char *nh = json_string_value(json_object_get(rec, "deck_nonce"));
    const char *game = json_string_value(json_object_get(rec, "game"));
    uint8_t commit[DECK_COMMIT_LEN], codes[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN],
        got[DECK_COMMIT_LEN];
    int n = d != NULL ? deck_unhex(d, codes, sizeof codes) : -EINVAL;
    if (c == NULL || nh == NULL || game == NULL || n <= 0 ||
        deck_unhex(c, commit, sizeof commit) != DECK_COMMIT_LEN ||
        deck_unhex(nh, nonce, sizeof nonce) != DECK_NONCE_LEN) {
        fprintf(stderr,
                "croupier-rules verify-deal: %s: a per-card record needs game, deck_commitment, "
                "deck_codes and deck_nonce (hex)\n",
                path);
        return 2;
    }
    deck_commitment_cards(codes, (size_t)n, nonce, got);
    if (memcmp(got, commit, sizeof got) != 0) {
        printf("MISMATCH: the leaves of deck_codes under the nonce do not give the commitment %s: "
               "this is not the deck the players were committed to\n",
               c);
        return 1;
    }
    /* The dealing order: the seats dealt in, the button (a tournament hand's is the
     * director's, docs/hand-history.md). */
    uint32_t seats[64];
    size_t nseats = 0, i;
    const json_t *v;
    json_array_foreach(json_object_get(rec, "seats"), i, v)
    {
        json_int_t s = json_integer_value(json_object_get(v, "seat"));
        if (nseats < 64 && s >= 0 && s < 256)
            seats[nseats++] = (uint32_t)s;
    }
    const json_t *tour = json_object_get(rec, "tournament");
    const json_t *bt = json_object_get(json_is_object(tour) ? tour : rec, "button");
    int button = json_is_integer(bt) ? (int)json_integer_value(bt) : -1;
    size_t per[256] = {0}, board = 0, checked = 0;
    /* The shedding games record each hand as a set (replay_deal_as_set()): a card is the
     * committed card at one of the positions the deal gave its seat, each position once. */
    bool as_set = replay_deal_as_set(game), used[DECK_MAX_CARDS] = {false};
    json_array_foreach(json_object_get(rec, "cards"), i, v)
    {
        json_int_t s = json_integer_value(json_object_get(v, "seat"));
        int code = replay_card_code(json_string_value(json_object_get(v, "card")));
        if (code < 0 || s < -1 || s >= 256) {
            fprintf(stderr, "croupier-rules verify-deal: %s: cards[%zu] is no card\n", path, i);
            return 2;
        }
        size_t k = s < 0 ? board++ : per[s]++;
        int pos = replay_deal_position(game, button, seats, nseats, (int)s, k);
        for (size_t j = 0; as_set && pos >= 0; j++) {
            /* The first free position of the seat holding the card (else the k-th: a mismatch). */
            int p = replay_deal_position(game, button, seats, nseats, (int)s, j);
            if (p < 0)
                break;
            if (p < n && !used[p] && codes[p] == code) {
                pos = p;
                break;
            }
        }
        if (as_set && pos >= 0 && pos < n) {
            if (used[pos]) {
                printf("MISMATCH: cards[%zu] (seat %d, %s) is not among the committed cards of "
                       "its seat's dealing positions\n",
                       i, (int)s, json_string_value(json_object_get(v, "card")));
                return 1;
            }
            used[pos] = true;
        }
        if (pos < 0) {
            fprintf(stderr,
                    "croupier-rules verify-deal: %s: cards[%zu]: %s has no dealing position for "
                    "it (docs/fairness.md \"Where each card was dealt\")\n",
                    path, i, game);
            return 2;
        }
        if (pos >= n || codes[pos] != code) {
            printf("MISMATCH: cards[%zu] (seat %d, %s) is not the committed card at position "
                   "%d\n",
                   i, (int)s, json_string_value(json_object_get(v, "card")), pos);
            return 1;
        }
        checked++;
    }
    printf("ok: the %d leaves open the per-card commitment, and the %zu recorded cards are the "
           "committed cards at their dealing positions (docs/fairness.md says what this does not "
           "prove)\n",
           n, checked);
    return 0;
}

static int rules_verify_record(const char *path)
{
    json_error_t jerr;
    json_t *rec =
        strcmp(path, "-") == 0 ? json_loadf(stdin, 0, &jerr) : json_load_file(path, 0, &jerr);
    if (rec == NULL) {
        fprintf(stderr, "croupier-rules verify-deal: %s: not JSON (%s, line %d)\n", path, jerr.text,
                jerr.line);
        return 2;
    }
    if (json_integer_value(json_object_get(rec, "deck_scheme")) == DECK_SCHEME_CARDS) {
        int rc = rules_verify_record_cards(rec, path);
        json_decref(rec);
        return rc;
    }
    const char *c = json_string_value(json_object_get(rec, "deck_commitment"));
    const char *d = json_string_value(json_object_get(rec, "deck"));
    const char *n = json_string_value(json_object_get(rec, "deck_nonce"));
    int rc;
    if (c == NULL || d == NULL || n == NULL) {
        fprintf(stderr,
                "croupier-rules verify-deal: %s: the record has no deck_commitment, deck "
                "and deck_nonce (a round dealt before the commitment existed, or not from "
                "the kit's deck)\n",
                path);
        rc = 2;
    } else {
        rc = rules_verify(c, d, n);
    }
    json_decref(rec);
    return rc;
}

/* The whole of a file (- = stdin) into *out (malloc'd), at most max bytes. 0 or 2 (said). */
static int rules_read_all(const char *cmd, const char *path, size_t max, uint8_t **out, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "croupier-rules %s: %s: %s\n", cmd, path, strerror(errno));
        return 2;
    }
    uint8_t *buf = malloc(max + 1);
    size_t n = buf != NULL ? fread(buf, 1, max + 1, f) : 0;
    if (f != stdin)
        fclose(f);
    if (buf == NULL || n > max) {
        free(buf);
        fprintf(stderr, "croupier-rules %s: %s: more than %zu bytes\n", cmd, path, max);
        return 2;
    }
    *out = buf;
    *len = n;
    return 0;
}

/* A player's check of a Replay under the per-card commitment (replay_check_cards()). */
static int rules_verify_replay(const char *path, const char *chex)
{
    uint8_t commit[DECK_COMMIT_LEN];
    if (chex != NULL && deck_unhex(chex, commit, sizeof commit) != DECK_COMMIT_LEN) {
        fprintf(stderr, "croupier-rules verify-deal: the commitment is not 64 hex digits\n");
        return 2;
    }
    uint8_t *buf;
    size_t len;
    if (rules_read_all("verify-deal", path, 1u << 20, &buf, &len) != 0)
        return 2;
    Croupier__Replay *r = croupier__replay__unpack(NULL, len, buf);
    free(buf);
    if (r == NULL) {
        fprintf(stderr, "croupier-rules verify-deal: %s: not a Replay message\n", path);
        return 2;
    }
    char err[300];
    int rc = replay_check_cards(r, chex != NULL ? commit : NULL, err, sizeof err);
    if (rc == -EINVAL) {
        fprintf(stderr, "croupier-rules verify-deal: %s: %s\n", path, err);
        croupier__replay__free_unpacked(r, NULL);
        return 2;
    }
    if (rc != 0) {
        printf("MISMATCH: %s\n", err);
        croupier__replay__free_unpacked(r, NULL);
        return 1;
    }
    printf("ok: the %zu leaves give the commitment%s; %zu cards opened, each the card shown at its "
           "dealing position:",
           r->deck_leaves.len / DECK_LEAF_LEN, chex != NULL ? " the Deals carried" : "",
           r->n_openings);
    for (size_t i = 0; i < r->n_openings; i++) {
        uint8_t code = (uint8_t)r->openings[i]->card;
        printf(" %u=%c%c", r->openings[i]->position, "??23456789TJQKAX"[code >> 2 & 15],
               (code >> 2) == 15 ? "br??"[code & 3] : "cdhs"[code & 3]); /* jokers Xb, Xr */
    }
    printf("\n");
    croupier__replay__free_unpacked(r, NULL);
    return 0;
}

static int rules_verify_deal(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--record"))
        return rules_verify_record(argv[2]);
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "--replay"))
        return rules_verify_replay(argv[2], argc == 4 ? argv[3] : NULL);
    if (argc == 4)
        return rules_verify(argv[1], argv[2], argv[3]);
    return rules_verify_usage();
}

/* ---- verify-shoe ---------------------------------------------------------------------------- */

/* Hand-history records from a file (- = stdin): a JSON array of records, one record, or JSON
 * Lines (one record a line), appended to recs. 0, or 2 (bad input, said on stderr). */
static int rules_shoe_load(const char *path, json_t *recs)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "croupier-rules verify-shoe: %s: %s\n", path, strerror(errno));
        return 2;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    char chunk[65536];
    size_t k;
    while (mem != NULL && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, k, mem);
    if (f != stdin)
        fclose(f);
    if (mem == NULL || fclose(mem) != 0) {
        free(buf);
        fprintf(stderr, "croupier-rules verify-shoe: %s: out of memory\n", path);
        return 2;
    }
    json_error_t jerr;
    json_t *all = json_loads(buf, 0, &jerr);
    int rc = 0;
    if (json_is_array(all)) {
        json_array_extend(recs, all);
    } else if (json_is_object(all)) {
        json_array_append(recs, all);
    } else {
        int line = 0;
        for (char *p = buf, *nl; p != NULL && *p != '\0'; p = nl != NULL ? nl + 1 : NULL) {
            nl = strchr(p, '\n');
            if (nl != NULL)
                *nl = '\0';
            line++;
            if (strspn(p, " \t\r") == strlen(p))
                continue;
            json_t *r = json_loads(p, 0, &jerr);
            if (!json_is_object(r)) {
                fprintf(stderr, "croupier-rules verify-shoe: %s:%d: not a JSON record (%s)\n", path,
                        line, jerr.text);
                json_decref(r);
                rc = 2;
                break;
            }
            json_array_append_new(recs, r);
        }
    }
    json_decref(all);
    free(buf);
    return rc;
}

/* A hand-history card ("As", "Td") as blackjack's card byte (suit x 13 + rank, ace 0); -1. */
static int rules_shoe_card(const char *text)
{
    static const char ranks[] = "A23456789TJQK", suits[] = "cdhs";
    if (text == NULL || text[0] == '\0' || text[1] == '\0' || text[2] != '\0')
        return -1;
    const char *r = strchr(ranks, text[0]), *u = strchr(suits, text[1]);
    return r == NULL || u == NULL ? -1 : (int)((u - suits) * 13 + (r - ranks));
}

typedef struct {
    const char *round;
    int first, count;
} rules_seg_t;

static int rules_seg_cmp(const void *a, const void *b)
{
    const rules_seg_t *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* One revealed shoe: opens it, then checks every round of it among recs (none past the
 * reveal's "dealt", when it has one: the cards from there on were never dealt). 0, 1 or 2. */
static int rules_shoe_check(const json_t *reveal, const json_t *recs)
{
    const char *chex = json_string_value(json_object_get(reveal, "commitment"));
    const char *dhex = json_string_value(json_object_get(reveal, "deck"));
    const char *nhex = json_string_value(json_object_get(reveal, "nonce"));
    json_int_t id = json_integer_value(json_object_get(reveal, "shoe"));
    uint8_t commit[DECK_COMMIT_LEN], deck[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN],
        got[DECK_COMMIT_LEN];
    int n = dhex != NULL ? deck_unhex(dhex, deck, sizeof deck) : -1;
    if (chex == NULL || deck_unhex(chex, commit, sizeof commit) != DECK_COMMIT_LEN || n <= 0 ||
        nhex == NULL || deck_unhex(nhex, nonce, sizeof nonce) != DECK_NONCE_LEN) {
        fprintf(stderr, "croupier-rules verify-shoe: a shoe_reveal without a commitment, deck "
                        "and nonce in hex\n");
        return 2;
    }
    const json_t *jdealt = json_object_get(reveal, "dealt");
    json_int_t dealt_max = jdealt != NULL ? json_integer_value(jdealt) : n;
    if (jdealt != NULL && (!json_is_integer(jdealt) || dealt_max < 0 || dealt_max > n)) {
        fprintf(stderr,
                "croupier-rules verify-shoe: shoe %lld: \"dealt\" is not a count of "
                "0 to %d cards\n",
                (long long)id, n);
        return 2;
    }
    deck_commitment_tagged(DECK_SHOE_TAG, deck, (size_t)n, nonce, got);
    if (memcmp(got, commit, sizeof got) != 0) {
        printf("MISMATCH: shoe %lld: the deck and nonce do not open the commitment %s: this is "
               "not the shoe the players were committed to\n",
               (long long)id, chex);
        return 1;
    }
    size_t nrecs = json_array_size(recs), nsegs = 0;
    rules_seg_t *segs = calloc(nrecs * 2 + 1, sizeof *segs);
    int rc = 0;
    for (size_t i = 0; i < nrecs && rc == 0; i++) {
        const json_t *rec = json_array_get(recs, i);
        const json_t *shoes = json_object_get(rec, "shoes"), *cards = json_object_get(rec, "cards");
        const char *round = json_string_value(json_object_get(rec, "round"));
        size_t at = 0, j;
        const json_t *sh;
        json_array_foreach(shoes, j, sh)
        {
            int first = (int)json_integer_value(json_object_get(sh, "first"));
            int count = (int)json_integer_value(json_object_get(sh, "count"));
            const char *c = json_string_value(json_object_get(sh, "commitment"));
            if (c == NULL || strcasecmp(c, chex) != 0) {
                at += (size_t)count;
                continue;
            }
            if (first < 0 || count < 1 || first + count > n ||
                at + (size_t)count > json_array_size(cards)) {
                printf("MISMATCH: round %s: shoe %lld positions %d..%d are not in the %d-card "
                       "shoe or not in the record's cards\n",
                       round ? round : "?", (long long)id, first, first + count - 1, n);
                rc = 1;
                break;
            }
            if (first + count > dealt_max) {
                printf("MISMATCH: round %s: shoe %lld positions %d..%d, but the reveal says only "
                       "%lld card(s) of it were dealt\n",
                       round ? round : "?", (long long)id, first, first + count - 1,
                       (long long)dealt_max);
                rc = 1;
                break;
            }
            for (int k = 0; k < count && rc == 0; k++) {
                const char *text =
                    json_string_value(json_object_get(json_array_get(cards, at + k), "card"));
                int card = rules_shoe_card(text);
                if (card != deck[first + k]) {
                    printf("MISMATCH: round %s: card %s at shoe %lld position %d, but the shoe "
                           "holds %02x there: not the committed order\n",
                           round ? round : "?", text ? text : "?", (long long)id, first + k,
                           deck[first + k]);
                    rc = 1;
                }
            }
            segs[nsegs++] = (rules_seg_t){round, first, count};
            at += (size_t)count;
        }
    }
    qsort(segs, nsegs, sizeof *segs, rules_seg_cmp);
    int next = 0, dealt = 0;
    for (size_t i = 0; i < nsegs && rc == 0; i++) {
        if (segs[i].first < next) {
            printf("MISMATCH: shoe %lld: round %s deals positions from %d again (dealt up to %d "
                   "already)\n",
                   (long long)id, segs[i].round ? segs[i].round : "?", segs[i].first, next - 1);
            rc = 1;
        } else if (segs[i].first > next) {
            printf("note: shoe %lld: positions %d..%d are in no record given\n", (long long)id,
                   next, segs[i].first - 1);
        }
        next = segs[i].first + segs[i].count;
        dealt += segs[i].count;
    }
    if (rc == 0 && jdealt != NULL && next < dealt_max)
        printf("note: shoe %lld: positions %d..%lld are in no record given\n", (long long)id, next,
               (long long)dealt_max - 1);
    if (rc == 0 && jdealt != NULL && dealt_max < n)
        printf("note: shoe %lld: %lld of its %d cards were dealt; positions %lld..%d never were\n",
               (long long)id, (long long)dealt_max, n, (long long)dealt_max, n - 1);
    if (rc == 0)
        printf("ok: shoe %lld: the %d-card order and the nonce open its commitment, and the %zu "
               "round(s) given dealt exactly its cards at their positions (%d cards, up to "
               "position %d)\n",
               (long long)id, n, nsegs, dealt, next - 1);
    free(segs);
    return rc;
}

static int rules_verify_shoe(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: croupier-rules verify-shoe FILE...   (blackjack hand-history "
                        "records: JSON Lines, an array or one record; - for stdin)\n");
        return 2;
    }
    json_t *recs = json_array();
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++)
        rc = rules_shoe_load(argv[i], recs);
    size_t i, j, reveals = 0;
    json_t *rec, *rev;
    json_array_foreach(recs, i, rec)
    {
        json_array_foreach(json_object_get(rec, "shoe_reveal"), j, rev)
        {
            if (rc == 2)
                break;
            reveals++;
            int r = rules_shoe_check(rev, recs);
            if (r > rc)
                rc = r;
        }
    }
    if (rc == 0 && reveals == 0) {
        fprintf(stderr, "croupier-rules verify-shoe: no record reveals a shoe (shoe_reveal): "
                        "include the record of the round that retired it\n");
        rc = 2;
    }
    json_decref(recs);
    return rc;
}

/* ---- rng-raw ----------------------------------------------------------------------------------
 */

/* At most 1 TiB in one run: large enough for any battery, small enough to catch a typo. */
#define RULES_RNG_RAW_MAX (UINT64_C(1) << 40)

static int rules_rng_raw(int argc, char **argv)
{
    uint64_t n;
    if (argc != 2) {
        fprintf(stderr, "usage: croupier-rules rng-raw N   (N raw generator bytes to stdout)\n");
        return 2;
    }
    if (!rules_deck_count("rng-raw", argv[1], RULES_RNG_RAW_MAX, &n))
        return 2;
    static uint8_t buf[1 << 16];
    signal(SIGPIPE, SIG_IGN); /* a reader that stops early (dieharder) ends the run: EPIPE */
    while (n > 0) {
        size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
        if (deck_random_bytes(buf, k) != 0) {
            fprintf(stderr, "croupier-rules rng-raw: the generator failed\n");
            return 1;
        }
        if (fwrite(buf, 1, k, stdout) != k) {
            if (errno == EPIPE)
                return 0; /* the reader had enough (dieharder stops reading) */
            perror("croupier-rules rng-raw: stdout");
            return 1;
        }
        n -= k;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- deals ---------------------------------------------------------------------------------- */

/*
 * The unshuffled deck of a game, as its engine builds it before tk_deal_shuffle() (the
 * production path: games/holdem/holdem_engine.c, games/zhajinhua/zjh_engine.c,
 * games/niuniu/niuniu_engine.c,
 * games/traditional/trad_engine.c through shed_game_deck(), blackjack's shoe in
 * games/persistent/blackjack.c). Returns the count, or -1 for an unknown game.
 */
static int rules_game_deck(const char *game, uint8_t *out, bool *shoe)
{
    *shoe = false;
    if (!strcmp(game, "holdem")) {
        for (int i = 0; i < HOLDEM_CARDS; i++)
            out[i] = (uint8_t)i;
        return HOLDEM_CARDS;
    }
    if (!strcmp(game, "zhajinhua")) {
        for (int i = 0; i < ZJH_DECK_CARDS; i++)
            out[i] = ZJH_CARD(2 + i / 4, i % 4);
        return ZJH_DECK_CARDS;
    }
    if (!strcmp(game, "niuniu")) {
        for (int i = 0; i < NIUNIU_DECK_CARDS; i++)
            out[i] = CARDTEXT_CARD(2 + i / 4, i % 4);
        return NIUNIU_DECK_CARDS;
    }
    if (!strncmp(game, "blackjack", 9)) {
        /* blackjack (6 decks, croupier-game's --bj-decks default) or blackjack:D, D 1..8 */
        int decks = 6;
        if (game[9] == ':') {
            char *end;
            long d = strtol(game + 10, &end, 10);
            if (game[10] == '\0' || *end != '\0' || d < 1 || d > DECK_MAX_CARDS / 52)
                return -1;
            decks = (int)d;
        } else if (game[9] != '\0') {
            return -1;
        }
        for (int i = 0; i < decks * 52; i++)
            out[i] = (uint8_t)(i % 52);
        *shoe = true;
        return decks * 52;
    }
    const shed_rules_t *r = shed_rules_find(game);
    if (r == NULL)
        return -1;
    r->deck(out);
    return r->deck_size;
}

static int rules_deals(int argc, char **argv)
{
    uint64_t count;
    if (argc != 3) {
        fprintf(stderr, "usage: croupier-rules deals GAME N   (GAME: holdem zhajinhua niuniu "
                        "doudizhu runfast bigtwo guandan blackjack[:DECKS])\n");
        return 2;
    }
    uint8_t start[DECK_MAX_CARDS], cards[DECK_MAX_CARDS];
    bool shoe;
    int n = rules_game_deck(argv[1], start, &shoe);
    if (n < 0) {
        fprintf(stderr,
                "croupier-rules deals: unknown game '%s' (holdem zhajinhua niuniu doudizhu "
                "runfast bigtwo guandan blackjack[:DECKS], DECKS 1..8)\n",
                argv[1]);
        return 2;
    }
    if (!rules_deck_count("deals", argv[2], UINT64_C(1) << 40, &count))
        return 2;
    char line[2 * DECK_MAX_CARDS + 2];
    deck_deal_t deal;
    signal(SIGPIPE, SIG_IGN);
    for (uint64_t k = 0; k < count; k++) {
        memcpy(cards, start, (size_t)n);
        /* The kit's path (tk_deal_shuffle -> deck_deal); a blackjack shoe is shuffled alone. */
        int rc = shoe ? deck_shuffle(cards, (size_t)n) : deck_deal(&deal, cards, (size_t)n);
        if (rc != 0) {
            fprintf(stderr, "croupier-rules deals: the generator failed\n");
            return 1;
        }
        deck_hex(cards, (size_t)n, line);
        line[2 * n] = '\n';
        if (fwrite(line, 1, (size_t)(2 * n + 1), stdout) != (size_t)(2 * n + 1)) {
            if (errno == EPIPE)
                return 0;
            perror("croupier-rules deals: stdout");
            return 1;
        }
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- replay ------------------------------------------------------------------------------- */

/* The Replay of a record for a viewer, binary on stdout (what GetReplay answers). */
static int rules_replay(int argc, char **argv)
{
    if (argc != 5 || strcmp(argv[1], "--record") != 0 || strcmp(argv[3], "--viewer") != 0) {
        fprintf(stderr, "usage: croupier-rules replay --record FILE --viewer PLAYER_ID   (0: a "
                        "share code's view)\n");
        return 2;
    }
    char *end;
    errno = 0;
    unsigned long long viewer = strtoull(argv[4], &end, 10);
    if (argv[4][0] < '0' || argv[4][0] > '9' || *end != '\0' || errno != 0) {
        fprintf(stderr, "croupier-rules replay: '%s' is not a player id\n", argv[4]);
        return 2;
    }
    json_error_t jerr;
    json_t *rec =
        strcmp(argv[2], "-") == 0 ? json_loadf(stdin, 0, &jerr) : json_load_file(argv[2], 0, &jerr);
    if (rec == NULL) {
        fprintf(stderr, "croupier-rules replay: %s: not JSON (%s, line %d)\n", argv[2], jerr.text,
                jerr.line);
        return 2;
    }
    char err[300];
    Croupier__Replay *r = replay_build(rec, viewer, err, sizeof err);
    json_decref(rec);
    if (r == NULL) {
        fprintf(stderr, "croupier-rules replay: %s: %s\n", argv[2], err);
        return 2;
    }
    size_t len = croupier__replay__get_packed_size(r);
    uint8_t *buf = malloc(len ? len : 1);
    int rc = 0;
    if (buf == NULL || croupier__replay__pack(r, buf) != len ||
        fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
        perror("croupier-rules replay: stdout");
        rc = 1;
    }
    free(buf);
    croupier__replay__free_unpacked(r, NULL);
    return rc;
}

/* croupier-rules commands of this file (named in tools/meson.build: rules_commands). */
const rules_cmd_t rules_cmd_verify_deal = {
    "verify-deal",
    "verify-deal COMMITMENT DECK NONCE | --record FILE | --replay FILE [COMMITMENT]   open a "
    "round's deck commitment, or check the cards a per-card replay opens (docs/fairness.md)",
    rules_verify_deal};
const rules_cmd_t rules_cmd_replay = {
    "replay",
    "replay --record FILE --viewer PLAYER_ID   the Replay message a viewer gets of a hand "
    "history record (binary; docs/replays.md)",
    rules_replay};
const rules_cmd_t rules_cmd_verify_shoe = {
    "verify-shoe",
    "verify-shoe FILE...   open blackjack's retired shoes and check each round against its "
    "positions (docs/fairness.md)",
    rules_verify_shoe};
const rules_cmd_t rules_cmd_rng_raw = {
    "rng-raw", "rng-raw N   N raw bytes of the deck generator to stdout (binary)", rules_rng_raw};
const rules_cmd_t rules_cmd_deals = {
    "deals", "deals GAME N   N final deck orders (hex, a line each) through the production shuffle",
    rules_deals};

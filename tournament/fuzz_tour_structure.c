/*
 * libFuzzer driver: the tournament structure parser (tour_structure.h). Each input is a JSON
 * document as an operator would submit it. Corpus: fuzz/corpus/tour_structure (a few valid
 * structures and near misses). Invariants; breaking one aborts, which libFuzzer reports:
 *
 *   - a refusal is -EINVAL with a non-empty sentence and no structure;
 *   - an accepted structure keeps the documented bounds (seats 2..10, at least one level of
 *     play, no schedule ending with a break, min_entrants <= max_entrants), and its level clock
 *     and payout table work: the step at any time is in range, a hand never starts in a break,
 *     and the payout table for max_entrants sums to the pool exactly.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tour_payout.h"
#include "tour_structure.h"

static void fuzz_die(const char *what)
{
    fprintf(stderr, "fuzz invariant broken: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "";
    tour_structure_t *s = NULL;
    int rc = tour_structure_parse((const char *)data, size, &s, err, sizeof err);
    if (rc != 0) {
        if (rc != -EINVAL || err[0] == '\0' || s != NULL)
            fuzz_die("a refusal without -EINVAL and a reason");
        return 0;
    }
    bool match = s->format == TOUR_FORMAT_MATCH;
    if (s->seats_per_table < TOUR_MIN_SEATS || s->seats_per_table > TOUR_MAX_SEATS ||
        (match ? s->nlevels != 0 || s->match == NULL
               : s->nlevels == 0 || s->levels[s->nlevels - 1].is_break) ||
        s->min_entrants > s->max_entrants)
        fuzz_die("accepted structure out of bounds");
    if (match && s->min_entrants < s->seats_per_table)
        fuzz_die("a match of fewer players than a table");
    int64_t t = 0;
    for (size_t i = 0; i < s->nlevels; i++) {
        tour_clock_t c;
        tour_blinds_t b;
        if (tour_structure_level_at(s, t, &c) != 0 || c.index != i)
            fuzz_die("level clock");
        int hb = tour_structure_hand_blinds(s, t, &b);
        if ((hb == -EAGAIN) != s->levels[i].is_break)
            fuzz_die("hand blinds during a break");
        t += s->levels[i].duration_ms;
    }
    int64_t pool;
    if (tour_payout_pool(s->buy_in, s->max_entrants, s->guarantee, &pool) == 0) {
        size_t cap = tour_payout_places(&s->payouts, s->max_entrants), n;
        int64_t *prizes = malloc((cap ? cap : 1) * sizeof *prizes), sum = 0;
        if (prizes == NULL)
            abort();
        if (tour_payout_table(&s->payouts, s->max_entrants, pool, prizes, cap, &n) != 0)
            fuzz_die("payout table refused");
        for (size_t i = 0; i < n; i++)
            sum += prizes[i];
        if (sum != pool)
            fuzz_die("payout table does not sum to the pool");
        free(prizes);
    }
    tour_structure_destroy(s);
    return 0;
}

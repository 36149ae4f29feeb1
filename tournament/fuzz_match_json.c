/*
 * libFuzzer driver: a match stage loaded from JSON (match_json.h), the text the director keeps
 * in Redis. Corpus: tournament/fuzz_corpus/match_json (a stage of each format mid-play). The
 * invariants; breaking one aborts, which libFuzzer reports:
 *
 *   - a refusal is -EINVAL with a non-empty sentence and no stage;
 *   - an accepted stage saves to a text that loads again to the same text;
 *   - an accepted stage can be played on without a crash or a broken count: its standings list
 *     every player once, and the next step of its format (a pairing, a deal's end at the first
 *     table in play) either is refused with an error or keeps `remaining` equal to the players
 *     not out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "match_fixed.h"
#include "match_json.h"
#include "match_rising.h"
#include "match_swiss.h"

static void fuzz_die(const char *what)
{
    fprintf(stderr, "fuzz invariant broken: %s\n", what);
    abort();
}

static void check_counts(const match_stage_t *st)
{
    uint32_t in = 0;
    for (uint32_t i = 0; i < st->n; i++)
        in += st->players[i].state != MATCH_OUT;
    if (in != st->remaining)
        fuzz_die("remaining differs from the players not out");
}

/* The next step of the stage's format, with zero results (they always sum to 0). */
static void play_on(match_stage_t *st)
{
    uint64_t seed = 1;
    int64_t zero[MATCH_MAX_SEATS] = {0};
    size_t cap = (size_t)st->n + 1, nt, ng;
    match_new_table_t *t = calloc(cap, sizeof *t);
    uint64_t *ids = calloc(cap, sizeof *ids);
    if (t == NULL || ids == NULL)
        abort();
    uint32_t tab = 0;
    for (uint32_t k = 0; k < st->ntables && tab == 0; k++)
        if (st->tables[k].active)
            tab = k + 1;
    bool over;
    if (st->cfg.format == MATCH_RISING && !st->over) {
        if (tab != 0)
            (void)match_rising_deal_end(st, tab, st->tables[tab - 1].deal, zero, 1, ids, &ng);
        if (!st->over)
            (void)match_rising_pair(st, 2, tour_rng_splitmix64, &seed, t, cap, &nt, ids, cap, &ng);
    } else if (st->cfg.format == MATCH_FIXED) {
        if (tab != 0)
            (void)match_fixed_deal_end(st, tab, st->tables[tab - 1].deals_done + 1, zero, &over,
                                       ids, &ng);
        else
            (void)match_fixed_seat_round(st, tour_rng_splitmix64, &seed, t, cap, &nt);
    } else if (st->cfg.format == MATCH_SWISS) {
        if (tab != 0)
            (void)match_swiss_deal_end(st, tab, st->tables[tab - 1].deals_done + 1, zero, &over);
        else
            (void)match_swiss_seat_round(st, tour_rng_splitmix64, &seed, t, cap, &nt, ids, cap,
                                         &ng);
    }
    check_counts(st);
    free(t);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "";
    match_stage_t *st = NULL;
    int rc = match_stage_from_json((const char *)data, size, &st, err, sizeof err);
    if (rc != 0) {
        if (rc != -EINVAL || err[0] == '\0' || st != NULL)
            fuzz_die("a refusal without -EINVAL and a reason");
        return 0;
    }
    char *s1 = match_stage_to_json(st);
    match_stage_t *again = NULL;
    if (s1 == NULL || match_stage_from_json(s1, strlen(s1), &again, err, sizeof err) != 0)
        fuzz_die("a saved stage does not load");
    char *s2 = match_stage_to_json(again);
    if (s2 == NULL || strcmp(s1, s2) != 0)
        fuzz_die("a saved stage loads to another text");
    free(s1);
    free(s2);
    match_stage_destroy(again);
    check_counts(st);
    match_standing_t *sd = calloc(st->n, sizeof *sd);
    size_t n;
    if (sd == NULL)
        abort();
    if (match_stage_standings(st, 1, false, sd, st->n, &n) != 0 || n != st->n)
        fuzz_die("standings do not list every player");
    free(sd);
    play_on(st);
    match_stage_destroy(st);
    return 0;
}

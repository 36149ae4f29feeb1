/*
 * tour_structure -- the tournament's configuration from JSON and the level clock (see
 * tour_structure.h and docs/tournaments.md, "Configuration").
 */
#include "tour_structure.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfield.h"
#include "match_hall.h"
#include "xmalloc.h"

/* Largest amount accepted for any chip figure: far above any real stack, and small enough that
 * sums of many of them (a pool of TOUR_MAX_ENTRANTS buy-ins) stay inside int64_t. */
#define TOUR_MAX_AMOUNT (INT64_C(1) << 40)
#define TOUR_MAX_DURATION_MS (INT64_C(1) << 40)

static int parse_level(jfield_err_t *p, json_t *o, size_t i, tour_level_t *l,
                       tour_level_t *prev_play)
{
    char where[64];
    snprintf(where, sizeof where, "levels[%zu].", i);
    if (!json_is_object(o))
        return jfield_fail(p, "levels[%zu]: must be an object", i);
    static const char *const known[] = {"break",          "small_blind", "big_blind", "ante",
                                        "big_blind_ante", "duration_ms", NULL};
    int rc = jfield_only_known(p, o, where, known);
    if (rc == 0)
        rc = jfield_bool(p, o, where, "break", false, &l->is_break);
    if (rc == 0)
        rc = jfield_int(p, o, where, "duration_ms", true, 0, 1, TOUR_MAX_DURATION_MS,
                        &l->duration_ms);
    if (rc != 0)
        return rc;
    if (l->is_break) {
        if (json_object_size(o) != 2)
            return jfield_fail(p, "%s: a break has only \"break\" and \"duration_ms\"", where);
        return 0;
    }
    if (rc == 0)
        rc = jfield_int(p, o, where, "small_blind", true, 0, 0, TOUR_MAX_AMOUNT, &l->small_blind);
    if (rc == 0)
        rc = jfield_int(p, o, where, "big_blind", true, 0, 1, TOUR_MAX_AMOUNT, &l->big_blind);
    if (rc == 0)
        rc = jfield_int(p, o, where, "ante", false, 0, 0, TOUR_MAX_AMOUNT, &l->ante);
    if (rc == 0)
        rc = jfield_bool(p, o, where, "big_blind_ante", false, &l->big_blind_ante);
    if (rc != 0)
        return rc;
    if (l->big_blind < l->small_blind)
        return jfield_fail(p, "%sbig_blind: must be >= small_blind", where);
    if (l->big_blind_ante && l->ante == 0)
        return jfield_fail(p, "%sante: a big-blind ante needs an ante > 0", where);
    if (prev_play != NULL && l->big_blind < prev_play->big_blind)
        return jfield_fail(p, "%sbig_blind: lower than the previous level's", where);
    return 0;
}

static int parse_tier(jfield_err_t *p, json_t *o, size_t i, tour_payout_tier_t *t)
{
    char where[64];
    snprintf(where, sizeof where, "payouts.tiers[%zu].", i);
    if (!json_is_object(o))
        return jfield_fail(p, "payouts.tiers[%zu]: must be an object", i);
    static const char *const known[] = {"min_entrants", "max_entrants", "shares_bp", NULL};
    int64_t lo, hi;
    int rc = jfield_only_known(p, o, where, known);
    if (rc == 0)
        rc = jfield_int(p, o, where, "min_entrants", true, 0, 1, TOUR_MAX_ENTRANTS, &lo);
    if (rc == 0)
        rc = jfield_int(p, o, where, "max_entrants", true, 0, lo, TOUR_MAX_ENTRANTS, &hi);
    if (rc != 0)
        return rc;
    json_t *a = json_object_get(o, "shares_bp");
    if (!json_is_array(a) || json_array_size(a) == 0)
        return jfield_fail(p, "%sshares_bp: must be a non-empty array", where);
    size_t n = json_array_size(a);
    if (n > (size_t)lo)
        return jfield_fail(p, "%sshares_bp: %zu places paid but only %lld entrants", where, n,
                           (long long)lo);
    t->min_entrants = (uint32_t)lo;
    t->max_entrants = (uint32_t)hi;
    t->shares_bp = xcalloc(n, sizeof *t->shares_bp);
    t->nplaces = (uint32_t)n;
    int64_t sum = 0;
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(a, k);
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > TOUR_PAYOUT_BP)
            return jfield_fail(p, "%sshares_bp[%zu]: must be a whole number in 1..%d", where, k,
                               TOUR_PAYOUT_BP);
        t->shares_bp[k] = (uint32_t)json_integer_value(v);
        if (k > 0 && t->shares_bp[k] > t->shares_bp[k - 1])
            return jfield_fail(p, "%sshares_bp[%zu]: larger than the place above it", where, k);
        sum += t->shares_bp[k];
    }
    if (sum != TOUR_PAYOUT_BP)
        return jfield_fail(p, "%sshares_bp: sums to %lld, must sum to %d", where, (long long)sum,
                           TOUR_PAYOUT_BP);
    return 0;
}

/* payouts.items: [{"place": N, "item": "..."}, ...], places rising, one item each
 * (docs/tournaments.md "Payouts", "Items"). */
static int parse_items(jfield_err_t *p, json_t *a, tour_payout_config_t *c)
{
    if (!json_is_array(a))
        return jfield_fail(p, "payouts.items: must be an array");
    size_t n = json_array_size(a);
    if (n > TOUR_PAYOUT_MAX_ITEMS)
        return jfield_fail(p, "payouts.items: more than %d places given an item",
                           TOUR_PAYOUT_MAX_ITEMS);
    c->items = xcalloc(n ? n : 1, sizeof *c->items);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(a, i);
        char where[48];
        snprintf(where, sizeof where, "payouts.items[%zu].", i);
        if (!json_is_object(o))
            return jfield_fail(p, "payouts.items[%zu]: must be an object", i);
        static const char *const known[] = {"place", "item", NULL};
        int64_t place;
        int rc = jfield_only_known(p, o, where, known);
        if (rc == 0)
            rc = jfield_int(p, o, where, "place", true, 0, 1, TOUR_PAYOUT_MAX_PLACES, &place);
        if (rc != 0)
            return rc;
        json_t *it = json_object_get(o, "item");
        if (!json_is_string(it))
            return jfield_fail(p, "%sitem: must be a string", where);
        size_t len = json_string_length(it);
        const char *txt = json_string_value(it);
        if (len == 0 || len > TOUR_ITEM_MAX)
            return jfield_fail(p, "%sitem: %zu characters, must be 1..%d", where, len,
                               TOUR_ITEM_MAX);
        if (!tour_payout_item_valid(txt, len))
            return jfield_fail(p, "%sitem: only letters, digits and _ . : - are allowed", where);
        if (i > 0 && (uint32_t)place <= c->items[i - 1].place)
            return jfield_fail(p,
                               "%splace: must be above the previous item's place (one item a "
                               "place, places rising)",
                               where);
        c->items[i].place = (uint32_t)place;
        memcpy(c->items[i].item, txt, len);
        c->items[i].item[len] = '\0';
        c->nitems = i + 1;
    }
    return 0;
}

static int parse_payouts(jfield_err_t *p, json_t *o, tour_payout_config_t *c)
{
    *c = tour_payout_config_default();
    if (o == NULL)
        return 0;
    if (!json_is_object(o))
        return jfield_fail(p, "payouts: must be an object");
    static const char *const known[] = {"percent_paid", "min_paid", "tiers", "items", NULL};
    int64_t pct, minp;
    int rc = jfield_only_known(p, o, "payouts.", known);
    if (rc == 0 && json_object_get(o, "items") != NULL)
        rc = parse_items(p, json_object_get(o, "items"), c);
    if (rc == 0)
        rc = jfield_int(p, o, "payouts.", "percent_paid", false, 15, 1, 100, &pct);
    if (rc == 0)
        rc = jfield_int(p, o, "payouts.", "min_paid", false, 1, 1, TOUR_PAYOUT_MAX_PLACES, &minp);
    if (rc != 0)
        return rc;
    c->percent_paid = (uint32_t)pct;
    c->min_paid = (uint32_t)minp;
    json_t *tiers = json_object_get(o, "tiers");
    if (tiers == NULL)
        return 0;
    if (!json_is_array(tiers))
        return jfield_fail(p, "payouts.tiers: must be an array");
    c->ntiers = json_array_size(tiers);
    c->tiers = xcalloc(c->ntiers ? c->ntiers : 1, sizeof *c->tiers);
    for (size_t i = 0; i < c->ntiers; i++) {
        rc = parse_tier(p, json_array_get(tiers, i), i, &c->tiers[i]);
        if (rc != 0)
            return rc;
        if (i > 0 && c->tiers[i].min_entrants <= c->tiers[i - 1].max_entrants)
            return jfield_fail(p,
                               "payouts.tiers[%zu].min_entrants: must be above the previous tier's "
                               "max_entrants",
                               i);
    }
    return 0;
}

void tour_structure_destroy(tour_structure_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->payouts.ntiers; i++)
        free(s->payouts.tiers[i].shares_bp);
    free(s->payouts.tiers);
    free(s->payouts.items);
    free(s->levels);
    free(s->match);
    free(s);
}

/* A match (format "match"): the money and entrant fields as hold'em's, then the game and its
 * stages (match_hall.h); no levels, stacks, re-entry or late registration. */
static int parse_match_root(jfield_err_t *p, json_t *root, tour_structure_t *s)
{
    static const char *const known[] = {
        "format",       "game",      "buy_in",  "fee",    "min_entrants",
        "max_entrants", "guarantee", "payouts", "stages", NULL};
    int rc = jfield_only_known(p, root, "", known);
    int64_t mine = 0, maxe = 0;
    s->format = TOUR_FORMAT_MATCH;
    if (rc == 0)
        rc = jfield_int(p, root, "", "buy_in", true, 0, 0, TOUR_MAX_AMOUNT, &s->buy_in);
    if (rc == 0)
        rc = jfield_int(p, root, "", "fee", false, 0, 0, TOUR_MAX_AMOUNT, &s->fee);
    if (rc == 0)
        rc = jfield_int(p, root, "", "max_entrants", true, 0, 2, TOUR_MAX_ENTRANTS, &maxe);
    if (rc == 0)
        rc = jfield_int(p, root, "", "min_entrants", false, maxe, 2, maxe, &mine);
    if (rc == 0)
        rc = jfield_int(p, root, "", "guarantee", false, 0, 0, TOUR_MAX_AMOUNT * 1000,
                        &s->guarantee);
    if (rc != 0)
        return rc;
    s->min_entrants = (uint32_t)mine;
    s->max_entrants = (uint32_t)maxe;
    s->h4h_margin = 0;
    rc = match_hall_parse(p, root, s);
    if (rc != 0)
        return rc;
    rc = parse_payouts(p, json_object_get(root, "payouts"), &s->payouts);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < s->payouts.ntiers; i++)
        if (s->payouts.tiers[i].min_entrants < s->min_entrants &&
            s->payouts.tiers[i].max_entrants < s->min_entrants)
            return jfield_fail(p, "payouts.tiers[%zu]: below min_entrants, never used", i);
    return 0;
}

static int parse_root(jfield_err_t *p, json_t *root, tour_structure_t *s)
{
    if (!json_is_object(root))
        return jfield_fail(p, "the structure must be a JSON object");
    const char *fm = json_string_value(json_object_get(root, "format"));
    if (fm != NULL && strcmp(fm, "match") == 0)
        return parse_match_root(p, root, s);
    static const char *const known[] = {"format",
                                        "seats_per_table",
                                        "starting_stack",
                                        "buy_in",
                                        "fee",
                                        "reentry",
                                        "max_reentries",
                                        "late_registration_levels",
                                        "min_entrants",
                                        "max_entrants",
                                        "guarantee",
                                        "hand_for_hand_margin",
                                        "levels",
                                        "payouts",
                                        NULL};
    int rc = jfield_only_known(p, root, "", known);
    if (rc != 0)
        return rc;
    const char *f = json_string_value(json_object_get(root, "format"));
    if (f == NULL)
        return jfield_fail(p, "format: missing (\"sng\", \"mtt\" or \"match\")");
    if (strcmp(f, "sng") == 0)
        s->format = TOUR_FORMAT_SNG;
    else if (strcmp(f, "mtt") == 0)
        s->format = TOUR_FORMAT_MTT;
    else
        return jfield_fail(p, "format: \"%s\" is not \"sng\", \"mtt\" or \"match\"", f);
    int64_t seats, maxre, late, mine, maxe;
    rc =
        jfield_int(p, root, "", "seats_per_table", true, 0, TOUR_MIN_SEATS, TOUR_MAX_SEATS, &seats);
    if (rc == 0)
        rc = jfield_int(p, root, "", "starting_stack", true, 0, 1, TOUR_MAX_AMOUNT,
                        &s->starting_stack);
    if (rc == 0)
        rc = jfield_int(p, root, "", "buy_in", true, 0, 0, TOUR_MAX_AMOUNT, &s->buy_in);
    if (rc == 0)
        rc = jfield_int(p, root, "", "fee", false, 0, 0, TOUR_MAX_AMOUNT, &s->fee);
    if (rc == 0)
        rc = jfield_bool(p, root, "", "reentry", false, &s->reentry);
    if (rc == 0)
        rc = jfield_int(p, root, "", "max_reentries", false, 0, 0, 1000, &maxre);
    if (rc == 0)
        rc = jfield_int(p, root, "", "late_registration_levels", false, 0, 0, TOUR_MAX_LEVELS,
                        &late);
    if (rc == 0)
        rc = jfield_int(p, root, "", "max_entrants", true, 0, 2, TOUR_MAX_ENTRANTS, &maxe);
    if (rc == 0)
        rc = jfield_int(p, root, "", "min_entrants", false, s->format == TOUR_FORMAT_SNG ? maxe : 2,
                        2, maxe, &mine);
    if (rc == 0)
        rc = jfield_int(p, root, "", "guarantee", false, 0, 0, TOUR_MAX_AMOUNT * 1000,
                        &s->guarantee);
    int64_t h4h = 1;
    if (rc == 0)
        rc = jfield_int(p, root, "", "hand_for_hand_margin", false, 1, 0, 1000, &h4h);
    if (rc != 0)
        return rc;
    s->h4h_margin = (uint32_t)h4h;
    s->seats_per_table = (uint32_t)seats;
    s->max_reentries = (uint32_t)maxre;
    s->late_reg_levels = (uint32_t)late;
    s->min_entrants = (uint32_t)mine;
    s->max_entrants = (uint32_t)maxe;
    if (s->reentry && maxre == 0)
        return jfield_fail(p, "max_reentries: must be >= 1 when reentry is true");
    if (!s->reentry && maxre != 0)
        return jfield_fail(p, "max_reentries: set but reentry is false");
    if (s->reentry && late == 0)
        return jfield_fail(p, "reentry: needs late_registration_levels >= 1 (re-entry closes with "
                              "late registration)");
    if (s->format == TOUR_FORMAT_SNG) {
        if (s->reentry)
            return jfield_fail(p, "reentry: a sit & go has no re-entry");
        if (late != 0)
            return jfield_fail(p, "late_registration_levels: a sit & go has no late registration");
        if (mine != maxe)
            return jfield_fail(p, "min_entrants: a sit & go starts full (min_entrants == "
                                  "max_entrants)");
        if (maxe > (int64_t)seats * 10)
            return jfield_fail(p, "max_entrants: a sit & go of more than 10 tables is an mtt");
    }
    json_t *levels = json_object_get(root, "levels");
    if (!json_is_array(levels) || json_array_size(levels) == 0)
        return jfield_fail(p, "levels: must be a non-empty array");
    s->nlevels = json_array_size(levels);
    if (s->nlevels > TOUR_MAX_LEVELS)
        return jfield_fail(p, "levels: more than %d", TOUR_MAX_LEVELS);
    s->levels = xcalloc(s->nlevels, sizeof *s->levels);
    tour_level_t *prev_play = NULL;
    uint32_t number = 0;
    for (size_t i = 0; i < s->nlevels; i++) {
        rc = parse_level(p, json_array_get(levels, i), i, &s->levels[i], prev_play);
        if (rc != 0)
            return rc;
        if (!s->levels[i].is_break) {
            prev_play = &s->levels[i];
            number++;
        } else if (i > 0 && s->levels[i - 1].is_break) {
            return jfield_fail(p, "levels[%zu]: two breaks in a row", i);
        }
        s->levels[i].number = number;
    }
    if (number == 0)
        return jfield_fail(p, "levels: no level of play");
    if (s->levels[s->nlevels - 1].is_break)
        return jfield_fail(p, "levels[%zu]: the schedule cannot end with a break", s->nlevels - 1);
    if (late > number)
        return jfield_fail(p, "late_registration_levels: %lld but the schedule has %u levels",
                           (long long)late, number);
    rc = parse_payouts(p, json_object_get(root, "payouts"), &s->payouts);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < s->payouts.ntiers; i++)
        if (s->payouts.tiers[i].min_entrants < s->min_entrants &&
            s->payouts.tiers[i].max_entrants < s->min_entrants)
            return jfield_fail(p, "payouts.tiers[%zu]: below min_entrants, never used", i);
    return 0;
}

int tour_structure_parse(const char *json, size_t len, tour_structure_t **out, char *err,
                         size_t errlen)
{
    jfield_err_t p = {err, errlen};
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL)
        return jfield_fail(&p, "not valid JSON: %s (line %d, column %d)", je.text, je.line,
                           je.column);
    tour_structure_t *s = xcalloc(1, sizeof *s);
    int rc = parse_root(&p, root, s);
    json_decref(root);
    if (rc != 0) {
        tour_structure_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int tour_structure_level_at(const tour_structure_t *s, int64_t elapsed_ms, tour_clock_t *out)
{
    if (elapsed_ms < 0 || s->nlevels == 0)
        return -EINVAL; /* a match has no levels */
    int64_t start = 0;
    for (size_t i = 0; i < s->nlevels; i++) {
        int64_t end = start + s->levels[i].duration_ms;
        if (i + 1 == s->nlevels || elapsed_ms < end) {
            out->index = i;
            out->level = &s->levels[i];
            out->ms_to_next = i + 1 == s->nlevels ? -1 : end - elapsed_ms;
            return 0;
        }
        start = end;
    }
    return -EINVAL; /* not reached: nlevels >= 1 */
}

bool tour_structure_late_reg_open(const tour_structure_t *s, int64_t elapsed_ms)
{
    if (s->late_reg_levels == 0 || elapsed_ms < 0)
        return false;
    int64_t start = 0;
    for (size_t i = 0; i < s->nlevels; i++) {
        start += s->levels[i].duration_ms;
        if (!s->levels[i].is_break && s->levels[i].number == s->late_reg_levels)
            return elapsed_ms < start;
    }
    return false;
}

int tour_structure_hand_blinds(const tour_structure_t *s, int64_t hand_start_ms, tour_blinds_t *out)
{
    tour_clock_t c;
    int rc = tour_structure_level_at(s, hand_start_ms, &c);
    if (rc != 0)
        return rc;
    if (c.level->is_break)
        return -EAGAIN;
    *out = (tour_blinds_t){.level = c.level->number,
                           .small_blind = c.level->small_blind,
                           .big_blind = c.level->big_blind,
                           .ante = c.level->ante,
                           .big_blind_ante = c.level->big_blind_ante};
    return 0;
}

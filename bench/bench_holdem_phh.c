/*
 * bench_holdem_phh -- PHH replay speed through the real hold'em table on one core.
 *
 * Loads every *.phh under the oracle folder into memory, then (1) replays the parsed hands
 * again and again (a fresh table per hand: seats, blinds, deal, every action, pots, showdown)
 * and (2) parses and replays them from the in-memory text. Every replay is checked against the
 * file's finishing stacks, so a wrong result cannot hide behind a fast one.
 *
 * usage: bench_holdem_phh [PHH_DIR]   (default $CROUPIER_SHARED/oracles/phh, or
 *        ../shared/oracles/phh found upwards from the current folder)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "holdem_phh.h"
#include "xmalloc.h"

typedef struct {
    char **text;
    holdem_phh_t *parsed;
    size_t n, cap;
} corpus_t;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0, got;
    char *buf = xmalloc(cap + 1);
    while ((got = fread(buf + len, 1, cap - len, f)) > 0)
        if ((len += got) == cap)
            buf = xrealloc(buf, (cap *= 2) + 1);
    fclose(f);
    buf[len] = '\0';
    return buf;
}

static void load(corpus_t *c, const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        struct stat st;
        if (stat(sub, &st) != 0)
            continue;
        size_t len = strlen(sub);
        if (S_ISDIR(st.st_mode)) {
            load(c, sub);
        } else if (len > 4 && !strcmp(sub + len - 4, ".phh")) {
            if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 256;
                c->text = xreallocarray(c->text, c->cap, sizeof *c->text);
                c->parsed = xreallocarray(c->parsed, c->cap, sizeof *c->parsed);
            }
            char err[200];
            c->text[c->n] = read_all(sub);
            if (c->text[c->n] == NULL ||
                holdem_phh_parse(c->text[c->n], &c->parsed[c->n], err, sizeof err) != 0) {
                fprintf(stderr, "bench_holdem_phh: %s: cannot load\n", sub);
                exit(1);
            }
            c->n++;
        }
    }
    closedir(d);
}

/* Replays one parsed hand and checks it; exits on a mismatch. */
static void replay_checked(const holdem_phh_t *h)
{
    int64_t stacks[HOLDEM_MAX_SEATS];
    char err[200];
    if (holdem_phh_replay(h, stacks, err, sizeof err) != 0) {
        fprintf(stderr, "bench_holdem_phh: replay failed: %s\n", err);
        exit(1);
    }
    for (int s = 0; s < h->players; s++)
        if (fabs((double)stacks[s] - h->finishing[s]) > 0.5) {
            fprintf(stderr, "bench_holdem_phh: wrong finishing stack\n");
            exit(1);
        }
}

int main(int argc, char **argv)
{
    char dir[1024];
    const char *shared = getenv("CROUPIER_SHARED");
    struct stat st;
    if (argc > 1) {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    } else {
        snprintf(dir, sizeof dir, "%s/oracles/phh", shared ? shared : "../shared");
        const char *up[] = {"../../shared", "../../../shared", "../../../../shared"};
        for (size_t i = 0; stat(dir, &st) != 0 && i < sizeof up / sizeof up[0]; i++)
            snprintf(dir, sizeof dir, "%s/oracles/phh", up[i]);
    }
    corpus_t c = {0};
    load(&c, dir);
    if (c.n == 0) {
        fprintf(stderr, "bench_holdem_phh: no .phh files under %s\n", dir);
        return 1;
    }
    long rounds = 0;
    double w0 = wall_s(), t0 = cpu_s();
    do {
        for (size_t i = 0; i < c.n; i++)
            replay_checked(&c.parsed[i]);
        rounds++;
    } while (cpu_s() - t0 < 2.0);
    double cpu = cpu_s() - t0, wall = wall_s() - w0;
    double hands = (double)rounds * (double)c.n;
    printf("holdem_phh replay (parsed, real table): %.0f hands, %.3f s cpu = %.0f hands/s "
           "(wall %.0f hands/s)\n",
           hands, cpu, hands / cpu, hands / wall);

    holdem_phh_t *scratch = xmalloc(sizeof *scratch);
    rounds = 0;
    w0 = wall_s();
    t0 = cpu_s();
    do {
        for (size_t i = 0; i < c.n; i++) {
            char err[200];
            if (holdem_phh_parse(c.text[i], scratch, err, sizeof err) != 0)
                return 1;
            replay_checked(scratch);
        }
        rounds++;
    } while (cpu_s() - t0 < 2.0);
    cpu = cpu_s() - t0;
    wall = wall_s() - w0;
    hands = (double)rounds * (double)c.n;
    printf("holdem_phh parse + replay (from memory): %.0f hands, %.3f s cpu = %.0f hands/s "
           "(wall %.0f hands/s)\n",
           hands, cpu, hands / cpu, hands / wall);
    printf("files: %zu from %s\n", c.n, dir);
    for (size_t i = 0; i < c.n; i++)
        free(c.text[i]);
    free(c.text);
    free(c.parsed);
    free(scratch);
    return 0;
}

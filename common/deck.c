/*
 * deck -- the one source of shuffled decks (deck.h; docs/fairness.md).
 */
#include "deck.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "log.h"
#include "metrics.h"

/* Output is taken from the DRBG in blocks of this size, per thread, and used in order. */
#define DECK_BLOCK 4096
/* Bytes of each block compared with the previous block's (the repetition test). */
#define DECK_REPEAT_BYTES 32

static atomic_bool deck_failed;
static atomic_uint_fast64_t deck_nfailures;
/* Bumped by deck_set_generator(): every thread's buffered output is dropped. */
static atomic_uint deck_generation;
static _Atomic(deck_gen_fn) deck_gen;
static _Atomic(metrics_t *) deck_m_healthy;
static _Atomic(metrics_t *) deck_m_failures;

typedef struct {
    unsigned generation;
    size_t pos; /* next unused byte of block; DECK_BLOCK when empty */
    bool have_prev;
    uint8_t prev[DECK_REPEAT_BYTES];
    uint8_t block[DECK_BLOCK];
} deck_buf_t;

static _Thread_local deck_buf_t deck_tls = {.pos = DECK_BLOCK};

int deck_default_generator(unsigned char *buf, int n)
{
    return RAND_bytes(buf, n);
}

/* Records a generator failure: sticky, logged once, counted every time. */
static void deck_fail(const char *why)
{
    atomic_fetch_add(&deck_nfailures, 1);
    metrics_t *m = atomic_load(&deck_m_failures);
    if (m != NULL)
        metrics_add(m, 1);
    m = atomic_load(&deck_m_healthy);
    if (m != NULL)
        metrics_set(m, 0);
    if (!atomic_exchange(&deck_failed, true))
        log_emit(LOG_FATAL, "rng_failed", "{s:s,s:s}", "why", why, "msg",
                 "the deck generator failed: no new deal starts on this server until it is "
                 "restarted (docs/fairness.md)");
}

/*
 * Refills this thread's block from the generator. The first DECK_REPEAT_BYTES of every block
 * are compared with the previous block's: equal means a stuck generator (chance 2^-256 for a
 * working one). 0 or -EIO; after a failure the block is empty and stays unused.
 */
static int deck_refill(deck_buf_t *b)
{
    unsigned gen = atomic_load(&deck_generation);
    if (b->generation != gen) {
        b->generation = gen;
        b->have_prev = false;
    }
    b->pos = DECK_BLOCK;
    if (atomic_load(&deck_failed))
        return -EIO;
    deck_gen_fn fn = atomic_load(&deck_gen);
    if (fn == NULL)
        fn = deck_default_generator;
    if (fn(b->block, DECK_BLOCK) != 1) {
        explicit_bzero(b->block, sizeof b->block);
        deck_fail("the generator reported an error (RAND_bytes)");
        return -EIO;
    }
    if (b->have_prev && memcmp(b->prev, b->block, DECK_REPEAT_BYTES) == 0) {
        explicit_bzero(b->block, sizeof b->block);
        deck_fail("the generator repeated its output (continuous repetition test)");
        return -EIO;
    }
    memcpy(b->prev, b->block, DECK_REPEAT_BYTES);
    b->have_prev = true;
    b->pos = 0;
    return 0;
}

int deck_random_bytes(void *buf, size_t n)
{
    deck_buf_t *b = &deck_tls;
    uint8_t *out = buf;
    if (b->generation != atomic_load(&deck_generation))
        b->pos = DECK_BLOCK;
    while (n > 0) {
        if (atomic_load(&deck_failed))
            return -EIO;
        if (b->pos == DECK_BLOCK && deck_refill(b) != 0)
            return -EIO;
        size_t k = DECK_BLOCK - b->pos < n ? DECK_BLOCK - b->pos : n;
        memcpy(out, b->block + b->pos, k);
        explicit_bzero(b->block + b->pos, k); /* used output is not kept */
        b->pos += k;
        out += k;
        n -= k;
    }
    return 0;
}

/* The next 32 bits of the stream (little-endian), without the copy loop of the general case. */
static inline int deck_u32(uint32_t *x)
{
    deck_buf_t *b = &deck_tls;
    if (b->pos + 4 <= DECK_BLOCK &&
        b->generation == atomic_load_explicit(&deck_generation, memory_order_relaxed) &&
        !atomic_load_explicit(&deck_failed, memory_order_relaxed)) {
        const uint8_t *p = b->block + b->pos;
        *x = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        memset(b->block + b->pos, 0, 4);
        b->pos += 4;
        return 0;
    }
    uint8_t p[4];
    if (deck_random_bytes(p, 4) != 0)
        return -EIO;
    *x = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return 0;
}

/*
 * Lemire's multiply-shift with rejection: x * bound is a 64-bit number whose high 32 bits are
 * the candidate. Of the 2^32 values of x, every j in [0, bound) is hit either floor(2^32/bound)
 * or one more time; the surplus values are exactly those whose low 32 bits fall below
 * 2^32 mod bound, and they are rejected and drawn again, so every j has the same count of
 * accepted x. Rejection chance per draw is (2^32 mod bound) / 2^32 < bound / 2^32.
 */
int deck_uniform(uint32_t bound, uint32_t *out)
{
    if (bound == 0)
        return -EINVAL;
    uint32_t x;
    if (deck_u32(&x) != 0)
        return -EIO;
    uint64_t m = (uint64_t)x * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)-bound % bound; /* 2^32 mod bound */
        while (low < threshold) {
            if (deck_u32(&x) != 0)
                return -EIO;
            m = (uint64_t)x * bound;
            low = (uint32_t)m;
        }
    }
    *out = (uint32_t)(m >> 32);
    return 0;
}

int deck_shuffle(uint8_t *cards, size_t n)
{
    if (n > 65535)
        return -EINVAL;
    for (size_t i = n; i-- > 1;) {
        uint32_t j;
        if (deck_uniform((uint32_t)i + 1, &j) != 0)
            return -EIO;
        uint8_t c = cards[i];
        cards[i] = cards[j];
        cards[j] = c;
    }
    return 0;
}

int deck_deal(deck_deal_t *d, uint8_t *cards, size_t n)
{
    if (n > DECK_MAX_CARDS)
        return -EINVAL;
    if (deck_shuffle(cards, n) != 0 || deck_random_bytes(d->nonce, DECK_NONCE_LEN) != 0)
        return -EIO;
    d->n = n;
    d->scheme = DECK_SCHEME_WHOLE;
    memcpy(d->cards, cards, n);
    deck_commitment(cards, n, d->nonce, d->commitment);
    return 0;
}

/* The keyed stream of a duplicate deal: HMAC-SHA256(key, block counter), 8 words a block. */
typedef struct {
    const void *key;
    size_t keylen;
    uint64_t block;
    uint8_t buf[32];
    size_t used;
} deck_keyed_t;

static int deck_keyed_u32(deck_keyed_t *k, uint32_t *out)
{
    if (k->used == sizeof k->buf) {
        uint8_t ctr[8];
        for (int i = 0; i < 8; i++)
            ctr[i] = (uint8_t)(k->block >> (56 - 8 * i));
        unsigned len = 0;
        if (HMAC(EVP_sha256(), k->key, (int)k->keylen, ctr, sizeof ctr, k->buf, &len) == NULL ||
            len != sizeof k->buf)
            return -EIO;
        k->block++;
        k->used = 0;
    }
    *out = (uint32_t)k->buf[k->used] << 24 | (uint32_t)k->buf[k->used + 1] << 16 |
           (uint32_t)k->buf[k->used + 2] << 8 | k->buf[k->used + 3];
    k->used += 4;
    return 0;
}

/* Uniform in [0, bound) from the keyed stream, Lemire's method with rejection (deck_uniform's). */
static int deck_keyed_uniform(deck_keyed_t *k, uint32_t bound, uint32_t *out)
{
    uint32_t x;
    if (deck_keyed_u32(k, &x) != 0)
        return -EIO;
    uint64_t m = (uint64_t)x * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)-bound % bound;
        while (low < threshold) {
            if (deck_keyed_u32(k, &x) != 0)
                return -EIO;
            m = (uint64_t)x * bound;
            low = (uint32_t)m;
        }
    }
    *out = (uint32_t)(m >> 32);
    return 0;
}

int deck_deal_keyed(deck_deal_t *d, uint8_t *cards, size_t n, const void *key, size_t keylen,
                    uint32_t seats, uint32_t *first)
{
    if (n > DECK_MAX_CARDS || key == NULL || keylen == 0 || keylen > 256 ||
        (first != NULL && seats == 0))
        return -EINVAL;
    deck_keyed_t k = {.key = key, .keylen = keylen, .used = sizeof k.buf};
    for (size_t i = n; i-- > 1;) {
        uint32_t j;
        if (deck_keyed_uniform(&k, (uint32_t)i + 1, &j) != 0)
            return -EIO;
        uint8_t c = cards[i];
        cards[i] = cards[j];
        cards[j] = c;
    }
    if (first != NULL && deck_keyed_uniform(&k, seats, first) != 0)
        return -EIO;
    if (deck_random_bytes(d->nonce, DECK_NONCE_LEN) != 0)
        return -EIO;
    d->n = n;
    d->scheme = DECK_SCHEME_WHOLE;
    memcpy(d->cards, cards, n);
    deck_commitment(cards, n, d->nonce, d->commitment);
    return 0;
}

void deck_deal_per_card(deck_deal_t *d, uint8_t (*code)(uint8_t card))
{
    for (size_t i = 0; i < d->n; i++)
        d->codes[i] = code(d->cards[i]);
    d->scheme = DECK_SCHEME_CARDS;
    deck_commitment_cards(d->codes, d->n, d->nonce, d->commitment);
}

int deck_check(void)
{
    static _Thread_local uint8_t prev[DECK_REPEAT_BYTES];
    static _Thread_local bool have_prev;
    uint8_t now[DECK_REPEAT_BYTES];
    if (atomic_load(&deck_failed))
        return -EIO;
    deck_gen_fn fn = atomic_load(&deck_gen);
    if (fn == NULL)
        fn = deck_default_generator;
    if (fn(now, sizeof now) != 1) {
        deck_fail("the generator reported an error (RAND_bytes, periodic check)");
        return -EIO;
    }
    if (have_prev && memcmp(prev, now, sizeof now) == 0) {
        deck_fail("the generator repeated its output (periodic check)");
        return -EIO;
    }
    memcpy(prev, now, sizeof now);
    have_prev = true;
    explicit_bzero(now, sizeof now);
    return 0;
}

bool deck_healthy(void)
{
    return !atomic_load(&deck_failed);
}

uint64_t deck_failures(void)
{
    return atomic_load(&deck_nfailures);
}

void deck_metrics_register(metrics_registry_t *reg)
{
    metrics_t *h = metrics_gauge(reg, "rng_healthy", NULL,
                                 "1 while the deck generator is healthy, 0 once it failed (no new "
                                 "deals then; docs/fairness.md)");
    metrics_t *f = metrics_counter(reg, "rng_failures_total", NULL,
                                   "Deck generator failures (the first disables new deals)");
    if (h != NULL)
        metrics_set(h, deck_healthy() ? 1 : 0);
    if (f != NULL)
        metrics_add(f, (double)deck_failures());
    atomic_store(&deck_m_failures, f);
    atomic_store(&deck_m_healthy, h);
}

void deck_commitment(const uint8_t *cards, size_t n, const uint8_t nonce[DECK_NONCE_LEN],
                     uint8_t out[DECK_COMMIT_LEN])
{
    deck_commitment_tagged(DECK_COMMIT_TAG, cards, n, nonce, out);
}

void deck_commitment_tagged(const char tag[16], const uint8_t *cards, size_t n,
                            const uint8_t nonce[DECK_NONCE_LEN], uint8_t out[DECK_COMMIT_LEN])
{
    /* One buffer and the one-shot SHA256(): no allocation, nothing that can fail. */
    uint8_t buf[16 + 2 + DECK_MAX_CARDS + DECK_NONCE_LEN];
    if (n > DECK_MAX_CARDS)
        n = DECK_MAX_CARDS; /* documented bound (deck.h); callers never pass more */
    memcpy(buf, tag, 16);
    buf[16] = (uint8_t)(n >> 8);
    buf[17] = (uint8_t)n;
    memcpy(buf + 18, cards, n);
    memcpy(buf + 18 + n, nonce, DECK_NONCE_LEN);
    SHA256(buf, 18 + n + DECK_NONCE_LEN, out);
}

void deck_card_nonce(const uint8_t nonce[DECK_NONCE_LEN], size_t i, uint8_t out[DECK_NONCE_LEN])
{
    uint8_t msg[4 + 2];
    memcpy(msg, DECK_CARD_NONCE_LABEL, 4);
    msg[4] = (uint8_t)(i >> 8);
    msg[5] = (uint8_t)i;
    unsigned len = DECK_NONCE_LEN;
    /* HMAC-SHA256 over 6 bytes under a 32-byte key cannot fail short of memory exhaustion in
     * OpenSSL; a NULL then leaves out zeroed, which opens nothing (no leaf matches). */
    if (HMAC(EVP_sha256(), nonce, DECK_NONCE_LEN, msg, sizeof msg, out, &len) == NULL)
        memset(out, 0, DECK_NONCE_LEN);
}

void deck_card_leaf(size_t i, uint8_t code, const uint8_t card_nonce[DECK_NONCE_LEN],
                    uint8_t out[DECK_LEAF_LEN])
{
    uint8_t buf[16 + 2 + 1 + DECK_NONCE_LEN];
    memcpy(buf, DECK_LEAF_TAG, 16);
    buf[16] = (uint8_t)(i >> 8);
    buf[17] = (uint8_t)i;
    buf[18] = code;
    memcpy(buf + 19, card_nonce, DECK_NONCE_LEN);
    SHA256(buf, sizeof buf, out);
}

/*
 * The leaves with one HMAC context keyed once and one digest context (the one-shot HMAC() and
 * SHA256() fetch their algorithm on every call: about 1.5 µs a card nonce against 0.3 µs here;
 * BENCHMARKS.md "deck source"). Returns false when a context cannot be had; the caller then
 * takes the one-shot path, which gives the same bytes.
 */
static bool deck_card_leaves_fast(const uint8_t *codes, size_t n,
                                  const uint8_t nonce[DECK_NONCE_LEN], uint8_t *leaves)
{
    bool ok = false;
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *mc = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_MD_CTX *dc = EVP_MD_CTX_new();
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end()};
    uint8_t msg[4 + 2], buf[16 + 2 + 1 + DECK_NONCE_LEN];
    memcpy(msg, DECK_CARD_NONCE_LABEL, 4);
    memcpy(buf, DECK_LEAF_TAG, 16);
    if (mc == NULL || md == NULL || dc == NULL || !EVP_MAC_init(mc, nonce, DECK_NONCE_LEN, params))
        goto out;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        unsigned dlen = 0;
        msg[4] = buf[16] = (uint8_t)(i >> 8);
        msg[5] = buf[17] = (uint8_t)i;
        buf[18] = codes[i];
        /* A NULL key starts the next MAC under the same key. */
        if ((i > 0 && !EVP_MAC_init(mc, NULL, 0, NULL)) || !EVP_MAC_update(mc, msg, sizeof msg) ||
            !EVP_MAC_final(mc, buf + 19, &len, DECK_NONCE_LEN) || len != DECK_NONCE_LEN ||
            !EVP_DigestInit_ex(dc, md, NULL) || !EVP_DigestUpdate(dc, buf, sizeof buf) ||
            !EVP_DigestFinal_ex(dc, leaves + i * DECK_LEAF_LEN, &dlen) || dlen != DECK_LEAF_LEN)
            goto out;
    }
    ok = true;
out:
    explicit_bzero(buf, sizeof buf);
    EVP_MD_CTX_free(dc);
    EVP_MD_free(md);
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(mac);
    return ok;
}

void deck_card_leaves(const uint8_t *codes, size_t n, const uint8_t nonce[DECK_NONCE_LEN],
                      uint8_t *leaves)
{
    if (deck_card_leaves_fast(codes, n, nonce, leaves))
        return;
    uint8_t cn[DECK_NONCE_LEN];
    for (size_t i = 0; i < n; i++) {
        deck_card_nonce(nonce, i, cn);
        deck_card_leaf(i, codes[i], cn, leaves + i * DECK_LEAF_LEN);
    }
    explicit_bzero(cn, sizeof cn);
}

void deck_leaves_commitment(const uint8_t *leaves, size_t n, uint8_t out[DECK_COMMIT_LEN])
{
    /* One buffer and the one-shot SHA256(), as deck_commitment_tagged(). */
    uint8_t buf[16 + 2 + DECK_MAX_CARDS * DECK_LEAF_LEN];
    if (n > DECK_MAX_CARDS)
        n = DECK_MAX_CARDS; /* documented bound (deck.h) */
    memcpy(buf, DECK_COMMIT_TAG_V2, 16);
    buf[16] = (uint8_t)(n >> 8);
    buf[17] = (uint8_t)n;
    memcpy(buf + 18, leaves, n * DECK_LEAF_LEN);
    SHA256(buf, 18 + n * DECK_LEAF_LEN, out);
}

void deck_commitment_cards(const uint8_t *codes, size_t n, const uint8_t nonce[DECK_NONCE_LEN],
                           uint8_t out[DECK_COMMIT_LEN])
{
    uint8_t leaves[DECK_MAX_CARDS * DECK_LEAF_LEN];
    if (n > DECK_MAX_CARDS)
        n = DECK_MAX_CARDS;
    deck_card_leaves(codes, n, nonce, leaves);
    deck_leaves_commitment(leaves, n, out);
}

void deck_hex(const uint8_t *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

static int deck_nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int deck_unhex(const char *hex, uint8_t *out, size_t max)
{
    size_t len = strlen(hex);
    if (len % 2 != 0 || len / 2 > max)
        return -EINVAL;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = deck_nibble(hex[2 * i]), lo = deck_nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return (int)(len / 2);
}

void deck_set_generator(deck_gen_fn gen)
{
    atomic_store(&deck_gen, gen);
    atomic_fetch_add(&deck_generation, 1);
}

void deck_health_reset(void)
{
    atomic_store(&deck_failed, false);
    metrics_t *m = atomic_load(&deck_m_healthy);
    if (m != NULL)
        metrics_set(m, 1);
    atomic_fetch_add(&deck_generation, 1);
}

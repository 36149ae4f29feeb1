/*
 * frame -- framing, budgeted unpacking and checking of the croupier protocols. See frame.h.
 */
#include "frame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

const frame_limits_t frame_limits_default = {
    .max_frame = FRAME_DEFAULT_MAX,
    .budget_factor = FRAME_DEFAULT_BUDGET_FACTOR,
    .budget_floor = FRAME_DEFAULT_BUDGET_FLOOR,
    .max_string = FRAME_DEFAULT_MAX_STRING,
};

static const frame_limits_t *limits_or_default(const frame_limits_t *lim)
{
    return lim != NULL ? lim : &frame_limits_default;
}

/* Fills err (if any) with code and a printf-style detail. Returns -EINVAL for convenience. */
static int fail(frame_error_t *err, Croupier__ErrorCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(frame_error_t *err, Croupier__ErrorCode code, const char *fmt, ...)
{
    if (err != NULL) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->detail, sizeof err->detail, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static void error_reset(frame_error_t *err)
{
    if (err != NULL) {
        err->code = CROUPIER__ERROR_CODE__OK;
        err->alloc_bytes = 0;
        err->detail[0] = '\0';
    }
}

/*
 * Where a check stands inside a message: one node per nesting level, on the stack of the
 * recursive walks (the root names the message type). The dotted text ("ClientMessage.action.
 * holdem") is built only when a check fails, so a valid message costs no formatting at all.
 */
typedef struct path_node {
    const struct path_node *up;
    const char *name;
} path_node_t;

/* Longest path text kept (the walks used to build it level by level in buffers of this size). */
#define PATH_TEXT_MAX 256

/* Writes the dotted path of n into buf (at most PATH_TEXT_MAX - 1 characters, cut like the
 * level-by-level snprintf it replaces). */
static void path_text(const path_node_t *n, char buf[PATH_TEXT_MAX])
{
    const char *names[FRAME_MAX_DEPTH + 8];
    size_t k = 0;
    for (; n != NULL && k < sizeof names / sizeof names[0]; n = n->up)
        names[k++] = n->name;
    size_t used = 0;
    buf[0] = '\0';
    while (k > 0 && used < PATH_TEXT_MAX - 1) {
        const char *name = names[--k];
        if (used > 0)
            buf[used++] = '.';
        size_t len = strlen(name);
        if (len > PATH_TEXT_MAX - 1 - used)
            len = PATH_TEXT_MAX - 1 - used;
        memcpy(buf + used, name, len);
        used += len;
        buf[used] = '\0';
    }
    buf[used] = '\0';
}

/*
 * Like fail(), for a check inside a walk: the detail is the path of at, then the text of fmt
 * (which starts right after the path, e.g. ".%s: unspecified"). Returns -EINVAL.
 */
static int fail_at(frame_error_t *err, Croupier__ErrorCode code, const path_node_t *at,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail_at(frame_error_t *err, Croupier__ErrorCode code, const path_node_t *at,
                   const char *fmt, ...)
{
    if (err != NULL) {
        char path[PATH_TEXT_MAX];
        path_text(at, path);
        err->code = code;
        size_t n = strlen(path);
        if (n > sizeof err->detail - 1)
            n = sizeof err->detail - 1;
        memcpy(err->detail, path, n);
        err->detail[n] = '\0';
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->detail + n, sizeof err->detail - n, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

bool frame_card_valid(uint8_t code)
{
    unsigned rank = code >> 2, suit = code & 3u;
    if (rank >= 2 && rank <= 14)
        return true;
    return rank == 15 && suit <= 1;
}

/*
 * Strict UTF-8 (RFC 3629): shortest forms only, no UTF-16 surrogates, nothing above
 * U+10FFFF. NUL is refused too: protobuf-c hands strings out NUL-terminated, so a NUL inside
 * would silently cut the string short for every reader.
 */
bool frame_utf8_valid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            n = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (len - i - 1 < n)
            return false;
        for (size_t k = 1; k <= n; k++) {
            uint8_t cc = s[i + k];
            if ((cc & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

const char *frame_result_name(frame_result_t r)
{
    switch (r) {
    case FRAME_OK:
        return "ok";
    case FRAME_NEED_MORE:
        return "need_more";
    case FRAME_TOO_LARGE:
        return "too_large";
    case FRAME_MALFORMED:
        return "malformed";
    }
    return "unknown";
}

const char *frame_error_code_name(int code)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&croupier__error_code__descriptor, code);
    return v != NULL ? v->name : "UNKNOWN";
}

/* ---- the budget allocator --------------------------------------------------------------- */

/*
 * protobuf-c allocates everything an unpack makes (the message structs, repeated arrays,
 * strings, unknown fields, its own scratch slabs) through a ProtobufCAllocator. This one counts
 * the bytes handed out and refuses once the total would pass the budget; protobuf-c then frees
 * what it made and returns NULL. The count is cumulative (frees don't give budget back), which
 * is simpler and stricter.
 *
 * The memory comes from an arena: a chain of blocks handed out by bumping a pointer, where
 * frees do nothing and the whole chain is freed at once. protobuf-c (1.4.x) allocates the
 * message itself first, so it sits right after the first block's header, and frame_free(m)
 * finds the arena from m alone (unpack_checked checks that the message is where it should be).
 * A small message is one malloc and one free instead of one per sub-message and string, and
 * freeing it walks no descriptor.
 */
typedef struct arena_block {
    struct arena_block *next; /* the blocks after the first (first block: all others) */
    size_t cap, used;
    bool heap; /* from malloc (false: a caller's frame_scratch_t) */
    /* then the data, aligned for any type */
} arena_block_t;

#define ARENA_ALIGN 16
#define ARENA_HEADER ((sizeof(arena_block_t) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))
/* Data bytes of the first block (most frames of the protocol fit) and of later ones. */
#define ARENA_FIRST 512
#define ARENA_MORE 4096

typedef struct budget {
    size_t left;
    size_t used;
    bool exhausted;
    arena_block_t *first;     /* NULL until the first allocation */
    arena_block_t *cur;       /* the block allocations come from */
    frame_scratch_t *scratch; /* the first block's memory when not NULL */
} budget_t;

_Static_assert(sizeof(frame_scratch_t) > 256, "frame_scratch_t holds a first block");

static arena_block_t *arena_block_new(size_t data)
{
    arena_block_t *blk = malloc(ARENA_HEADER + data);
    if (blk == NULL)
        return NULL;
    blk->next = NULL;
    blk->cap = data;
    blk->used = 0;
    blk->heap = true;
    return blk;
}

/* The first block of an arena in a caller's scratch memory. */
static arena_block_t *arena_block_scratch(frame_scratch_t *s)
{
    arena_block_t *blk = (arena_block_t *)(void *)s->mem;
    blk->next = NULL;
    blk->cap = sizeof s->mem - ARENA_HEADER;
    blk->used = 0;
    blk->heap = false;
    return blk;
}

static void arena_release(arena_block_t *first)
{
    while (first != NULL) {
        arena_block_t *next = first->next;
        if (first->heap)
            free(first);
        first = next;
    }
}

static void *budget_alloc(void *data, size_t size)
{
    budget_t *b = data;
    if (size > b->left) {
        b->exhausted = true;
        return NULL;
    }
    size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need < size)
        return NULL;
    arena_block_t *blk = b->cur;
    if (blk == NULL || blk->cap - blk->used < need) {
        size_t cap = b->first == NULL ? ARENA_FIRST : ARENA_MORE;
        if (need > cap)
            cap = need;
        if (b->first == NULL && b->scratch != NULL && need <= sizeof b->scratch->mem - ARENA_HEADER)
            blk = arena_block_scratch(b->scratch);
        else
            blk = arena_block_new(cap);
        if (blk == NULL)
            return NULL;
        if (b->first == NULL) {
            b->first = blk;
        } else {
            blk->next = b->first->next;
            b->first->next = blk;
        }
        b->cur = blk;
    }
    void *p = (char *)blk + ARENA_HEADER + blk->used;
    blk->used += need;
    b->left -= size;
    b->used += size;
    return p;
}

/* Frees inside an arena are no-ops: the arena goes as a whole. */
static void budget_free(void *data, void *p)
{
    (void)data;
    (void)p;
}

/* Frees a message unpacked by unpack_checked (the arena whose first block it starts). */
static void arena_free_message(ProtobufCMessage *m)
{
    arena_release((arena_block_t *)(void *)((char *)m - ARENA_HEADER));
}

/* ---- the wire pass: strings ------------------------------------------------------------- */

/* Reads a varint at *pos; returns false if it runs past end or past 10 bytes. */
static bool wire_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*pos >= len)
            return false;
        uint8_t b = p[(*pos)++];
        v |= (uint64_t)(b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return true;
        }
    }
    return false;
}

/*
 * Walks the raw protobuf bytes of a message of type desc and checks every known string field
 * (valid UTF-8, no NUL, at most max_string bytes) and, recursively, every known sub-message,
 * before protobuf-c sees them: after unpack the length of a string with a NUL inside is lost.
 * Structure errors found on the way are reported as MALFORMED_FRAME; unknown fields are only
 * skipped (protobuf-c keeps them, inside the allocation budget).
 */
static int wire_check(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t len,
                      const path_node_t *at, unsigned depth, const frame_limits_t *lim,
                      frame_error_t *err)
{
    if (depth > FRAME_MAX_DEPTH)
        return fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at, ": nested too deep");
    size_t pos = 0;
    while (pos < len) {
        uint64_t tag, n;
        if (!wire_varint(p, len, &pos, &tag))
            return fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at, ": truncated tag");
        uint64_t id = tag >> 3;
        /* Field 0 and numbers above 2^29-1 don't exist; protobuf-c takes an overlong-encoded
         * tag 0 as an unknown field it then re-encodes as a tag it refuses itself. */
        if (id == 0 || id > 536870911u)
            return fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                           ": field number %" PRIu64 " out of range", id);
        switch (tag & 7) {
        case 0:
            if (!wire_varint(p, len, &pos, &n))
                return fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                               ": truncated varint");
            break;
        case 1:
        case 5: {
            size_t w = (tag & 7) == 1 ? 8 : 4;
            if (len - pos < w)
                return fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                               ": truncated fixed field");
            pos += w;
            break;
        }
        case 2: {
            if (!wire_varint(p, len, &pos, &n) || n > len - pos)
                return fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                               ": truncated length-delimited field");
            const ProtobufCFieldDescriptor *f =
                id <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)id)
                                 : NULL;
            if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING) {
                if (n > lim->max_string)
                    return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                   ".%s: string of %" PRIu64 " bytes, at most %zu", f->name, n,
                                   lim->max_string);
                if (!frame_utf8_valid(p + pos, (size_t)n))
                    return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                   ".%s: not valid UTF-8 (or holds NUL)", f->name);
            } else if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                path_node_t sub = {at, f->name};
                int rc = wire_check(f->descriptor, p + pos, (size_t)n, &sub, depth + 1, lim, err);
                if (rc < 0)
                    return rc;
            }
            pos += (size_t)n;
            break;
        }
        default:
            return fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                           ": unsupported wire type %u", (unsigned)(tag & 7));
        }
    }
    return 0;
}

/* ---- the descriptor walk: enums, oneofs, cards, pointers -------------------------------- */

/* True when the enum's zero value is a "not set" marker (FOO_UNSPECIFIED). */
static bool enum_zero_is_unspecified(const ProtobufCEnumDescriptor *ed)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(ed, 0);
    if (v == NULL)
        return false;
    size_t n = strlen(v->name);
    return n >= 11 && strcmp(v->name + n - 11, "UNSPECIFIED") == 0;
}

static int check_cards(const ProtobufCBinaryData *b, const path_node_t *at, const char *field,
                       frame_error_t *err)
{
    if (b->len > FRAME_MAX_CARDS)
        return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: %zu cards, at most %d",
                       field, b->len, FRAME_MAX_CARDS);
    if (b->len > 0 && b->data == NULL)
        return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: NULL data", field);
    for (size_t i = 0; i < b->len; i++)
        if (!frame_card_valid(b->data[i]))
            return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                           ".%s: byte %zu is not a card code (0x%02x)", field, i, b->data[i]);
    return 0;
}

/* True for the envelopes of table-kit games, whose bytes field is a game's message. */
static bool is_game_envelope(const ProtobufCMessageDescriptor *d)
{
    return d == &croupier__game_action__descriptor || d == &croupier__game_state__descriptor ||
           d == &croupier__game_event__descriptor;
}

/* The card-field convention of a game's own messages (frame.h): `cards` or `*_cards`. */
static bool is_card_field_name(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "cards") == 0 || (n > 6 && strcmp(name + n - 6, "_cards") == 0);
}

/* What a bytes field holds: a card list, an envelope's body (FRAME_GAME_BODY_MAX opaque bytes)
 * or, in a game's own message, opaque bytes of at most max_string. */
typedef enum { BYTES_CARDS, BYTES_GAME_BODY, BYTES_OPAQUE } bytes_kind_t;

/* In the protocol every bytes field is a card list but the envelopes' bodies; in a game's own
 * messages (game true) the fields named by the convention are. d is the field's message. */
static bytes_kind_t bytes_kind(const ProtobufCMessageDescriptor *d,
                               const ProtobufCFieldDescriptor *f, bool game)
{
    if (game)
        return is_card_field_name(f->name) ? BYTES_CARDS : BYTES_OPAQUE;
    return is_game_envelope(d) ? BYTES_GAME_BODY : BYTES_CARDS;
}

/* Checks a bytes field that is not a card list: data present, at most max bytes. */
static int check_opaque(const ProtobufCBinaryData *b, size_t max, const path_node_t *at,
                        const char *field, frame_error_t *err)
{
    if (b->len > max)
        return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: %zu bytes, at most %zu",
                       field, b->len, max);
    if (b->len > 0 && b->data == NULL)
        return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: NULL data", field);
    return 0;
}

/* What a walk needs besides the message: the limits, where errors go, whether the strings
 * were already checked on the wire (a message just unpacked: every string it holds passed the
 * wire pass under the same limits, so only the pointers are looked at again), and whether the
 * message is a game's own (its bytes fields follow the card-field convention of frame.h). */
typedef struct walk_ctx {
    const frame_limits_t *lim;
    frame_error_t *err;
    bool strings_checked;
    bool game;
} walk_ctx_t;

static int walk_message(const ProtobufCMessage *m, const path_node_t *at, unsigned depth,
                        const walk_ctx_t *w);

/* Checks one value of field f of a message of type d (element k of a repeated field, or the
 * single value). */
static int walk_value(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                      const void *elems, size_t k, const path_node_t *at, unsigned depth,
                      const walk_ctx_t *w)
{
    frame_error_t *err = w->err;
    switch (f->type) {
    case PROTOBUF_C_TYPE_ENUM: {
        int v = ((const int *)elems)[k];
        if (protobuf_c_enum_descriptor_get_value(f->descriptor, v) == NULL)
            return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: %d is not a %s value",
                           f->name, v,
                           ((const ProtobufCEnumDescriptor *)f->descriptor)->short_name);
        if (v == 0 && f->label == PROTOBUF_C_LABEL_REQUIRED &&
            enum_zero_is_unspecified(f->descriptor))
            return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: unspecified", f->name);
        return 0;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = ((char *const *)elems)[k];
        if (s == NULL)
            return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: NULL string", f->name);
        if (w->strings_checked)
            return 0;
        size_t n = strlen(s);
        if (n > w->lim->max_string)
            return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                           ".%s: string of %zu bytes, at most %zu", f->name, n, w->lim->max_string);
        if (!frame_utf8_valid((const uint8_t *)s, n))
            return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: not valid UTF-8",
                           f->name);
        return 0;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        /* Card lists, but for the envelopes' bodies and a game's opaque fields (bytes_kind). */
        const ProtobufCBinaryData *b = &((const ProtobufCBinaryData *)elems)[k];
        switch (bytes_kind(d, f, w->game)) {
        case BYTES_GAME_BODY:
            return check_opaque(b, FRAME_GAME_BODY_MAX, at, f->name, err);
        case BYTES_OPAQUE:
            return check_opaque(b, w->lim->max_string, at, f->name, err);
        default:
            return check_cards(b, at, f->name, err);
        }
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = ((ProtobufCMessage *const *)elems)[k];
        if (sub == NULL)
            return fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: missing", f->name);
        path_node_t node = {at, f->name};
        return walk_message(sub, &node, depth + 1, w);
    }
    default:
        return 0;
    }
}

/*
 * True when case `which` (not 0, not f's own id) names a field of the oneof that f belongs to
 * (the fields sharing f's case member). One lookup by number instead of a scan of every field.
 */
static bool oneof_case_known(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                             uint32_t which)
{
    const ProtobufCFieldDescriptor *g = protobuf_c_message_descriptor_get_field(d, which);
    return g != NULL && (g->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
           g->quantifier_offset == f->quantifier_offset;
}

/*
 * Generic checks of a message, driven by its descriptor: every enum value is defined (and
 * required enums are not *_UNSPECIFIED), every oneof case names one of its fields, strings are
 * UTF-8 and within max_string, bytes fields hold card codes, message and string pointers that
 * must be there are. Works the same on unpacked and hand-built messages.
 */
static int walk_message(const ProtobufCMessage *m, const path_node_t *at, unsigned depth,
                        const walk_ctx_t *w)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    if (d == NULL || d->magic != PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC)
        return fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ": not a message");
    if (depth > FRAME_MAX_DEPTH)
        return fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ": nested too deep");
    const char *base = (const char *)m;
    /* The oneofs whose case was already found valid (a message of the protocol has at most
     * two), so the case is looked up once per oneof, not once per member. */
    unsigned oneof_ok[2] = {0, 0}, n_oneof_ok = 0;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const void *member = base + f->offset;
        const void *elems = member;
        size_t count = 1;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            count = *(const size_t *)(base + f->quantifier_offset);
            elems = *(void *const *)member;
            if (count > 0 && elems == NULL)
                return fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: NULL array",
                               f->name);
        } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t which = *(const uint32_t *)(base + f->quantifier_offset);
            if (which != f->id) {
                if (which == 0 || (n_oneof_ok > 0 && oneof_ok[0] == f->quantifier_offset) ||
                    (n_oneof_ok > 1 && oneof_ok[1] == f->quantifier_offset))
                    continue;
                if (!oneof_case_known(d, f, which))
                    return fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                   ": oneof case %u is not a field", which);
                if (n_oneof_ok < 2)
                    oneof_ok[n_oneof_ok++] = f->quantifier_offset;
                continue;
            }
        } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
            if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING) {
                const void *ptr = *(void *const *)member;
                if (ptr == NULL || ptr == f->default_value)
                    continue;
            } else if (!*(const protobuf_c_boolean *)(base + f->quantifier_offset)) {
                continue;
            }
        }
        for (size_t k = 0; k < count; k++) {
            int rc = walk_value(d, f, elems, k, at, depth, w);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* ---- per-message rules ------------------------------------------------------------------ */

/*
 * The rules below name the field they refuse by a path given in two parts, path and sub,
 * printed one after the other ("RpcFrame.push" ".play.action"): nothing is formatted unless a
 * rule fails.
 */
static int check_game_name(const char *g, const char *path, const char *sub, frame_error_t *err)
{
    size_t n = strlen(g);
    if (n == 0 || n > 32)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.game: 1..32 bytes", path, sub);
    for (size_t i = 0; i < n; i++) {
        char c = g[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s%s.game: only a-z, 0-9, '_' and '-'", path, sub);
    }
    return 0;
}

static int check_join(const Croupier__Join *j, const char *path, const char *sub,
                      frame_error_t *err)
{
    int rc = check_game_name(j->game, path, sub, err);
    if (rc < 0)
        return rc;
    if (j->stake <= 0)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.stake: must be > 0", path, sub);
    return 0;
}

static int check_shedding(const Croupier__SheddingAction *a, const char *path, const char *sub,
                          frame_error_t *err)
{
    switch (a->move) {
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY:
        if (!a->has_cards || a->cards.len == 0)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s%s.shedding.cards: PLAY needs at least one card", path, sub);
        if (a->has_bid)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.shedding.bid: only with BID",
                        path, sub);
        return 0;
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PASS:
    case CROUPIER__SHEDDING_MOVE__SHEDDING_BID:
        if (a->has_cards)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s%s.shedding.cards: only with PLAY", path, sub);
        if ((a->move == CROUPIER__SHEDDING_MOVE__SHEDDING_BID) != (bool)a->has_bid)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s%s.shedding.bid: required with BID and only with BID", path, sub);
        return 0;
    default:
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.shedding.move: unspecified", path,
                    sub);
    }
}

static int check_holdem(const Croupier__HoldemAction *a, const char *path, const char *sub,
                        frame_error_t *err)
{
    bool sized = a->move == CROUPIER__HOLDEM_MOVE__HOLDEM_BET ||
                 a->move == CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE;
    if (sized && (!a->has_amount || a->amount <= 0))
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "%s%s.holdem.amount: required for BET/RAISE and > 0", path, sub);
    if (!sized && a->has_amount)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "%s%s.holdem.amount: only with BET/RAISE", path, sub);
    return 0;
}

static int check_blackjack(const Croupier__BlackjackAction *a, const char *path, const char *sub,
                           frame_error_t *err)
{
    bool bet = a->move == CROUPIER__BLACKJACK_MOVE__BJ_BET;
    bool ins = a->move == CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE;
    if (bet && (!a->has_amount || a->amount <= 0))
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "%s%s.blackjack.amount: required for BET and > 0", path, sub);
    if (!bet && a->has_amount)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.blackjack.amount: only with BET",
                    path, sub);
    if (ins != (bool)a->has_insure)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "%s%s.blackjack.insure: required with INSURANCE and only with it", path, sub);
    if (a->has_hand && a->hand >= 8)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.blackjack.hand: at most 7", path,
                    sub);
    return 0;
}

static int check_action(const Croupier__Action *a, const char *path, const char *sub,
                        frame_error_t *err)
{
    switch (a->kind_case) {
    case CROUPIER__ACTION__KIND_SHEDDING:
        return check_shedding(a->shedding, path, sub, err);
    case CROUPIER__ACTION__KIND_HOLDEM:
        return check_holdem(a->holdem, path, sub, err);
    case CROUPIER__ACTION__KIND_BLACKJACK:
        return check_blackjack(a->blackjack, path, sub, err);
    case CROUPIER__ACTION__KIND_GAME:
        return 0; /* the game's own body: capped by the walk, decoded by the game */
    default:
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s: no move", path, sub);
    }
}

static int check_error_msg(const Croupier__Error *e, const char *path, const char *sub,
                           frame_error_t *err)
{
    if (e->code == CROUPIER__ERROR_CODE__OK)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.code: an error cannot be OK",
                    path, sub);
    return 0;
}

/* ListTables: the filters it names follow the Join rules (a game name, a stake > 0). */
static int check_list_tables(const Croupier__ListTables *l, frame_error_t *err)
{
    if (l->game != NULL) {
        int rc = check_game_name(l->game, "ClientMessage.list_tables", "", err);
        if (rc < 0)
            return rc;
    }
    if (l->has_stake && l->stake <= 0)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "ClientMessage.list_tables.stake: must be > 0");
    return 0;
}

/* TableList: every ad names its server, a valid game, a stake > 0 and 1..seats free seats. */
static int check_table_list(const Croupier__TableList *tl, const char *path, frame_error_t *err)
{
    for (size_t i = 0; i < tl->n_tables; i++) {
        const Croupier__TableAd *t = tl->tables[i];
        if (t->server_id[0] == '\0')
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s.table_list.tables[%zu].server_id: empty", path, i);
        if (check_game_name(t->game, path, "", NULL) < 0)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s.table_list.tables[%zu].game: 1..32 of a-z, 0-9, '_' and '-'", path, i);
        if (t->stake <= 0)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s.table_list.tables[%zu].stake: must be > 0", path, i);
        if (t->seats_free == 0 || t->seats_free > t->seats)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s.table_list.tables[%zu].seats_free: must be 1..seats", path, i);
    }
    return 0;
}

/* A room code: 6 digits (docs/protocol.md "Private rooms"). */
static int check_room_code(const char *code, const char *path, frame_error_t *err)
{
    size_t n = strlen(code);
    bool ok = n == 6;
    for (size_t i = 0; ok && i < n; i++)
        ok = code[i] >= '0' && code[i] <= '9';
    if (!ok)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.code: a room code is 6 digits",
                    path);
    return 0;
}

/* RoomRules: 1..64 deals, 2..9 seats when given, at most 8 options of 1..32 bytes. */
int frame_check_room_rules(const Croupier__RoomRules *r, const char *path, frame_error_t *err)
{
    if (r->deals < 1 || r->deals > 64)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.deals: 1..64", path);
    if (r->has_seats && (r->seats < 2 || r->seats > 9))
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.seats: 2..9", path);
    if (r->n_rule_options > 8)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.rule_options: at most 8", path);
    for (size_t i = 0; i < r->n_rule_options; i++) {
        const char *o = r->rule_options[i];
        size_t n = strlen(o);
        bool ok = n > 0 && n <= 32;
        for (size_t k = 0; ok && k < n; k++)
            ok = (o[k] >= 'a' && o[k] <= 'z') || (o[k] >= '0' && o[k] <= '9') || o[k] == '-' ||
                 o[k] == ':';
        if (!ok)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s.rule_options[%zu]: 1..32 of a-z, 0-9, '-' and ':'", path, i);
    }
    return 0;
}

/* Rules for ClientMessage beyond the generic walk. */
static int rules_client(const Croupier__ClientMessage *m, frame_error_t *err)
{
    if (m->request_id == 0)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "ClientMessage.request_id: must be non-zero");
    switch (m->body_case) {
    case CROUPIER__CLIENT_MESSAGE__BODY_LOGIN:
        if (m->login->token[0] == '\0')
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "ClientMessage.login.token: empty");
        return 0;
    case CROUPIER__CLIENT_MESSAGE__BODY_JOIN:
        return check_join(m->join, "ClientMessage.join", "", err);
    case CROUPIER__CLIENT_MESSAGE__BODY_ACTION:
        return check_action(m->action, "ClientMessage.action", "", err);
    case CROUPIER__CLIENT_MESSAGE__BODY_LIST_TABLES:
        return check_list_tables(m->list_tables, err);
    case CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM:
        /* Its rules and the codes below are a user's input: the gateway answers them
         * BAD_REQUEST (frame_check_room_rules) instead of closing the connection. */
        return check_join(
            &(Croupier__Join){.game = m->create_room->game, .stake = m->create_room->stake},
            "ClientMessage.create_room", "", err);
    case CROUPIER__CLIENT_MESSAGE__BODY_JOIN_ROOM:
    case CROUPIER__CLIENT_MESSAGE__BODY_GET_ROOM:
    case CROUPIER__CLIENT_MESSAGE__BODY_LEAVE:
    case CROUPIER__CLIENT_MESSAGE__BODY_RESUME:
    case CROUPIER__CLIENT_MESSAGE__BODY_PING:
        return 0;
    default:
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "ClientMessage: no body (or one this version does not know)");
    }
}

/* Rules for ServerMessage beyond the generic walk. */
static int rules_server(const Croupier__ServerMessage *m, const char *path, frame_error_t *err)
{
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
        if (m->result->error != NULL)
            return check_error_msg(m->result->error, path, ".result.error", err);
        return 0;
    case CROUPIER__SERVER_MESSAGE__BODY_ERROR:
        return check_error_msg(m->error, path, ".error", err);
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY:
        return check_action(m->play->action, path, ".play.action", err);
    case CROUPIER__SERVER_MESSAGE__BODY_JOINED:
        return check_join(&(Croupier__Join){.game = m->joined->game, .stake = m->joined->stake},
                          path, ".joined", err);
    case CROUPIER__SERVER_MESSAGE__BODY_MOVED:
        return check_join(
            &(Croupier__Join){.game = m->moved->to->game, .stake = m->moved->to->stake}, path,
            ".moved.to", err);
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END: {
        const Croupier__RoundEnd *r = m->round_end;
        bool voided = r->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
        bool has_reason = r->has_void_reason && r->void_reason != CROUPIER__VOID_REASON__VOID_NONE;
        if (voided != has_reason)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s.round_end.void_reason: required when voided, only then", path);
        if (r->round_id[0] == '\0')
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.round_end.round_id: empty",
                        path);
        if (r->has_rake && r->rake < 0)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.round_end.rake: negative",
                        path);
        return 0;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT: {
        const Croupier__Snapshot *sn = m->snapshot;
        static const Croupier__Snapshot__StateCase want[] = {
            [CROUPIER__ENGINE__ENGINE_TRADITIONAL] = CROUPIER__SNAPSHOT__STATE_SHEDDING,
            [CROUPIER__ENGINE__ENGINE_HOLDEM] = CROUPIER__SNAPSHOT__STATE_HOLDEM,
            [CROUPIER__ENGINE__ENGINE_PERSISTENT] = CROUPIER__SNAPSHOT__STATE_BLACKJACK,
            [CROUPIER__ENGINE__ENGINE_GAME] = CROUPIER__SNAPSHOT__STATE_GAME_STATE,
        };
        if (sn->state_case != CROUPIER__SNAPSHOT__STATE__NOT_SET &&
            (sn->engine < 0 || (size_t)sn->engine >= sizeof want / sizeof want[0] ||
             want[sn->engine] != sn->state_case))
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "%s.snapshot: state does not belong to its engine", path);
        return check_join(&(Croupier__Join){.game = sn->game, .stake = sn->stake}, path,
                          ".snapshot", err);
    }
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST:
        return check_table_list(m->table_list, path, err);
    case CROUPIER__SERVER_MESSAGE__BODY_ROOM:
        if (m->room->state == CROUPIER__ROOM_STATE__ROOM_STATE_UNSPECIFIED)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.room.state: unspecified", path);
        return 0;
    case CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT: /* body capped by the walk */
    case CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT:
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
    case CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY:
    case CROUPIER__SERVER_MESSAGE__BODY_PONG:
        return 0;
    default:
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "%s: no body (or one this version does not know)", path);
    }
}

/* Rules for RpcFrame beyond the generic walk. */
static int rules_rpc(const Croupier__RpcFrame *m, frame_error_t *err)
{
    bool request = false, player = false, player_request = false;
    if (m->room != NULL && m->body_case != CROUPIER__RPC_FRAME__BODY_JOIN)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "RpcFrame.room: only with a Join");
    switch (m->body_case) {
    case CROUPIER__RPC_FRAME__BODY_HELLO:
        request = true;
        if (m->hello->version == 0 || m->hello->gate_id[0] == '\0')
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "RpcFrame.hello: version and gate_id required");
        break;
    case CROUPIER__RPC_FRAME__BODY_HELLO_ACK:
        if (m->hello_ack->version == 0 || m->hello_ack->server_id[0] == '\0')
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "RpcFrame.hello_ack: version and server_id required");
        break;
    case CROUPIER__RPC_FRAME__BODY_PING:
        request = true;
        break;
    case CROUPIER__RPC_FRAME__BODY_PONG:
        break;
    case CROUPIER__RPC_FRAME__BODY_JOIN: {
        request = player = player_request = true;
        int rc = check_join(m->join, "RpcFrame.join", "", err);
        if (rc < 0)
            return rc;
        if (m->room != NULL) {
            if ((m->room->code != NULL) == (m->room->create != NULL))
                return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                            "RpcFrame.room: a code or rules, one of them");
            rc = m->room->code != NULL
                     ? check_room_code(m->room->code, "RpcFrame.room", err)
                     : frame_check_room_rules(m->room->create, "RpcFrame.room.create", err);
            if (rc < 0)
                return rc;
        }
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_ACTION: {
        request = player = player_request = true;
        int rc = check_action(m->action, "RpcFrame.action", "", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_LEAVE:
    case CROUPIER__RPC_FRAME__BODY_RESUME:
        request = player = player_request = true;
        break;
    case CROUPIER__RPC_FRAME__BODY_ADOPT: {
        request = player = player_request = true;
        const Croupier__Adopt *a = m->adopt;
        if (a->offer_id[0] == '\0' || strlen(a->offer_id) > 160)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "RpcFrame.adopt.offer_id: 1..160 characters");
        int rc =
            check_join(&(Croupier__Join){.engine = a->engine, .game = a->game, .stake = a->stake},
                       "RpcFrame.adopt", "", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_REPLY: {
        const Croupier__Reply *r = m->reply;
        if (m->request_id == 0)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "RpcFrame.request_id: a reply names its request");
        if (r->code == CROUPIER__ERROR_CODE__OK && r->error != NULL)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "RpcFrame.reply.error: present with code OK");
        if (r->error != NULL && r->error->code != r->code)
            return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "RpcFrame.reply.error.code: differs from reply.code");
        if (r->payload != NULL)
            return rules_server(r->payload, "RpcFrame.reply.payload", err);
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_PUSH: {
        player = true;
        int rc = rules_server(m->push, "RpcFrame.push", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_MOVED: {
        player = true;
        int rc =
            check_join(&(Croupier__Join){.game = m->moved->to->game, .stake = m->moved->to->stake},
                       "RpcFrame.moved.to", "", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_PLAYER_GONE:
        player = true;
        break;
    case CROUPIER__RPC_FRAME__BODY_DESK_CLOSING:
        break;
    default:
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "RpcFrame: no body (or one this version does not know)");
    }
    if (request && m->request_id == 0)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "RpcFrame.request_id: a request needs a non-zero id");
    if (player && (!m->has_player_id || m->player_id == 0))
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "RpcFrame.player_id: required");
    if (player_request && (!m->has_session_id || !m->has_deadline_unix_ms))
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                    "RpcFrame: a player request needs session_id and deadline_unix_ms");
    return 0;
}

/*
 * Generic walk plus the rules of the message's own type (found by its descriptor).
 * strings_checked: m was just unpacked from bytes that passed the wire pass (its strings are
 * known good). Returns 0 or -EINVAL with err filled in.
 */
static int check_any(const ProtobufCMessage *m, const frame_limits_t *lim, frame_error_t *err,
                     bool strings_checked)
{
    if (m == NULL)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    path_node_t root = {NULL, m->descriptor->short_name};
    walk_ctx_t w = {lim, err, strings_checked, false};
    int rc = walk_message(m, &root, 0, &w);
    if (rc < 0)
        return rc;
    if (m->descriptor == &croupier__client_message__descriptor)
        return rules_client((const Croupier__ClientMessage *)m, err);
    if (m->descriptor == &croupier__server_message__descriptor)
        return rules_server((const Croupier__ServerMessage *)m, "ServerMessage", err);
    if (m->descriptor == &croupier__rpc_frame__descriptor)
        return rules_rpc((const Croupier__RpcFrame *)m, err);
    return 0;
}

int frame_check_client(const Croupier__ClientMessage *m, const frame_limits_t *lim,
                       frame_error_t *err)
{
    error_reset(err);
    return check_any(m != NULL ? &m->base : NULL, limits_or_default(lim), err, false);
}

int frame_check_server(const Croupier__ServerMessage *m, const frame_limits_t *lim,
                       frame_error_t *err)
{
    error_reset(err);
    return check_any(m != NULL ? &m->base : NULL, limits_or_default(lim), err, false);
}

int frame_check_rpc(const Croupier__RpcFrame *m, const frame_limits_t *lim, frame_error_t *err)
{
    error_reset(err);
    return check_any(m != NULL ? &m->base : NULL, limits_or_default(lim), err, false);
}

/* ---- encoding ----------------------------------------------------------------------------- */

void frame_put_header(uint8_t out[FRAME_HEADER_SIZE], uint32_t len)
{
    out[0] = (uint8_t)(len >> 24);
    out[1] = (uint8_t)(len >> 16);
    out[2] = (uint8_t)(len >> 8);
    out[3] = (uint8_t)len;
}

/*
 * Checks msg and returns its packed size in *size. 0, -EINVAL or -EMSGSIZE. Runs before any
 * byte is written, so a refused message leaves the output untouched (and protobuf-c never
 * sees a NULL required pointer, which it would dereference).
 */
static int prepare(const ProtobufCMessage *msg, const frame_limits_t *lim, frame_error_t *err,
                   size_t *size)
{
    error_reset(err);
    int rc = check_any(msg, lim, err, false);
    if (rc < 0)
        return rc;
#ifndef NDEBUG
    /* The walk of check_any() refuses everything protobuf_c_message_check() does (NULL
     * required messages and strings, NULL arrays and bytes data, at every level), so this
     * cannot fail; optimised builds (-Db_ndebug=true) skip the second walk of the message. */
    if (!protobuf_c_message_check(msg))
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s: protobuf-c check failed",
                    msg->descriptor->short_name);
#endif
    *size = protobuf_c_message_get_packed_size(msg);
    if (*size > lim->max_frame || *size > UINT32_MAX) {
        fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, cap %zu",
             msg->descriptor->short_name, *size, lim->max_frame);
        return -EMSGSIZE;
    }
    return 0;
}

ssize_t frame_encode(const ProtobufCMessage *msg, const frame_limits_t *lim, uint8_t *buf,
                     size_t cap, frame_error_t *err)
{
    lim = limits_or_default(lim);
    size_t size = 0;
    int rc = prepare(msg, lim, err, &size);
    if (rc < 0)
        return rc;
    if (cap < FRAME_HEADER_SIZE + size)
        return -ENOBUFS;
    frame_put_header(buf, (uint32_t)size);
    protobuf_c_message_pack(msg, buf + FRAME_HEADER_SIZE);
    return (ssize_t)(FRAME_HEADER_SIZE + size);
}

int frame_write(struct evbuffer *out, const ProtobufCMessage *msg, const frame_limits_t *lim,
                frame_error_t *err)
{
    lim = limits_or_default(lim);
    size_t size = 0;
    int rc = prepare(msg, lim, err, &size);
    if (rc < 0)
        return rc;
    struct evbuffer_iovec v;
    if (evbuffer_reserve_space(out, (ev_ssize_t)(FRAME_HEADER_SIZE + size), &v, 1) != 1 ||
        v.iov_len < FRAME_HEADER_SIZE + size)
        return -ENOMEM;
    uint8_t *p = v.iov_base;
    frame_put_header(p, (uint32_t)size);
    protobuf_c_message_pack(msg, p + FRAME_HEADER_SIZE);
    v.iov_len = FRAME_HEADER_SIZE + size;
    if (evbuffer_commit_space(out, &v, 1) != 0)
        return -ENOMEM;
    return 0;
}

int frame_pack_client(struct evbuffer *out, const Croupier__ClientMessage *m,
                      const frame_limits_t *lim, frame_error_t *err)
{
    if (m == NULL)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    return frame_write(out, &m->base, lim, err);
}

int frame_pack_server(struct evbuffer *out, const Croupier__ServerMessage *m,
                      const frame_limits_t *lim, frame_error_t *err)
{
    if (m == NULL)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    return frame_write(out, &m->base, lim, err);
}

int frame_pack_rpc(struct evbuffer *out, const Croupier__RpcFrame *m, const frame_limits_t *lim,
                   frame_error_t *err)
{
    if (m == NULL)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    return frame_write(out, &m->base, lim, err);
}

/* ---- decoding ----------------------------------------------------------------------------- */

/*
 * Runs a game's rules callback on m (frame_game_rules_cb): a refusal that left err's code OK
 * is a BAD_REQUEST, one that left no detail names the message type. Returns 0 or -EINVAL.
 */
static int run_game_rules(const ProtobufCMessage *m, frame_game_rules_cb rules, frame_error_t *err)
{
    if (rules == NULL)
        return 0;
    frame_error_t own;
    frame_error_t *e = err != NULL ? err : &own;
    e->code = CROUPIER__ERROR_CODE__OK;
    e->detail[0] = '\0';
    if (rules(m, e) == 0)
        return 0;
    if (e->code == CROUPIER__ERROR_CODE__OK)
        e->code = CROUPIER__ERROR_CODE__BAD_REQUEST;
    if (e->detail[0] == '\0')
        snprintf(e->detail, sizeof e->detail, "%s: refused by the game's rules",
                 m->descriptor->short_name);
    return -EINVAL;
}

/*
 * The whole decoding pipeline of one payload: cap, wire pass, budgeted unpack, walk and the
 * type's rules (rules: the protocol's, by descriptor; game: a game's own message, with the
 * card-field convention and game_rules). Returns the message (free with frame_free) or NULL
 * with err filled in.
 */
static ProtobufCMessage *unpack_core(const ProtobufCMessageDescriptor *desc, const uint8_t *payload,
                                     size_t len, const frame_limits_t *lim, frame_error_t *err,
                                     bool rules, bool game, frame_game_rules_cb game_rules,
                                     frame_scratch_t *scratch)
{
    lim = limits_or_default(lim);
    error_reset(err);
    if (len > lim->max_frame) {
        fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, cap %zu", desc->short_name,
             len, lim->max_frame);
        return NULL;
    }
    if (len > 0 && payload == NULL) {
        fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, "no payload");
        return NULL;
    }
    path_node_t root = {NULL, desc->short_name};
    if (wire_check(desc, payload, len, &root, 0, lim, err) < 0)
        return NULL;

    budget_t b = {.left = lim->budget_floor, .used = 0, .exhausted = false, NULL, NULL, scratch};
    if (lim->budget_factor > 0 && len > (SIZE_MAX - b.left) / lim->budget_factor)
        b.left = SIZE_MAX;
    else
        b.left += lim->budget_factor * len;
    ProtobufCAllocator alloc = {budget_alloc, budget_free, &b};
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &alloc, len, payload);
    if (err != NULL)
        err->alloc_bytes = b.used;
    if (m != NULL && (b.first == NULL || (char *)m != (char *)b.first + ARENA_HEADER)) {
        /* A protobuf-c that does not allocate the message first: refused rather than freed
         * wrongly later (the unit tests fail at once on such a version). */
        arena_release(b.first);
        fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME,
             "%s: protobuf-c did not allocate the message first", desc->short_name);
        return NULL;
    }
    if (m == NULL) {
        arena_release(b.first);
        if (b.exhausted)
            fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME,
                 "%s: needs more than the allocation budget (%zu bytes for %zu)", desc->short_name,
                 b.used + b.left, len);
        else
            fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME,
                 "%s: not a valid protobuf message (or a required field is missing)",
                 desc->short_name);
        return NULL;
    }
    /* Every string in m passed the wire pass above under the same limits. */
    walk_ctx_t w = {lim, err, true, game};
    int rc = rules ? check_any(m, lim, err, true) : walk_message(m, &root, 0, &w);
    if (rc == 0 && game)
        rc = run_game_rules(m, game_rules, err);
    if (rc < 0) {
        arena_free_message(m);
        return NULL;
    }
    return m;
}

/* unpack_core() for the protocol's messages (rules: the type's own, by descriptor). */
static ProtobufCMessage *unpack_checked(const ProtobufCMessageDescriptor *desc,
                                        const uint8_t *payload, size_t len,
                                        const frame_limits_t *lim, frame_error_t *err, bool rules,
                                        frame_scratch_t *scratch)
{
    return unpack_core(desc, payload, len, lim, err, rules, false, NULL, scratch);
}

/* ---- a table-kit game's own messages -------------------------------------------------------- */

ProtobufCMessage *frame_unpack_game(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                    size_t len, const frame_limits_t *lim,
                                    frame_game_rules_cb rules, frame_error_t *err)
{
    error_reset(err);
    if (desc == NULL || desc->magic != PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC) {
        fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message type");
        return NULL;
    }
    if (len > FRAME_GAME_BODY_MAX) {
        fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, at most %d",
             desc->short_name, len, FRAME_GAME_BODY_MAX);
        return NULL;
    }
    return unpack_core(desc, data, len, lim, err, false, true, rules, NULL);
}

int frame_check_game(const ProtobufCMessage *m, const frame_limits_t *lim,
                     frame_game_rules_cb rules, frame_error_t *err)
{
    error_reset(err);
    if (m == NULL || m->descriptor == NULL)
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    path_node_t root = {NULL, m->descriptor->short_name};
    walk_ctx_t w = {limits_or_default(lim), err, false, true};
    int rc = walk_message(m, &root, 0, &w);
    if (rc < 0)
        return rc;
    return run_game_rules(m, rules, err);
}

ssize_t frame_pack_game(const ProtobufCMessage *m, const frame_limits_t *lim,
                        frame_game_rules_cb rules, uint8_t *buf, size_t cap, frame_error_t *err)
{
    lim = limits_or_default(lim);
    int rc = frame_check_game(m, lim, rules, err);
    if (rc < 0)
        return rc;
#ifndef NDEBUG
    /* As in prepare(): the walk refuses everything this check does. */
    if (!protobuf_c_message_check(m))
        return fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s: protobuf-c check failed",
                    m->descriptor->short_name);
#endif
    size_t size = protobuf_c_message_get_packed_size(m);
    size_t max = lim->max_frame < FRAME_GAME_BODY_MAX ? lim->max_frame : FRAME_GAME_BODY_MAX;
    if (size > max) {
        fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, at most %zu",
             m->descriptor->short_name, size, max);
        return -EMSGSIZE;
    }
    if (cap < size)
        return -ENOBUFS;
    if (size > 0)
        protobuf_c_message_pack(m, buf);
    return (ssize_t)size;
}

int frame_pack_game_body(const ProtobufCMessage *m, const frame_limits_t *lim,
                         frame_game_rules_cb rules, ProtobufCBinaryData *body, frame_error_t *err)
{
    uint8_t *buf = xmalloc(FRAME_GAME_BODY_MAX);
    ssize_t n = frame_pack_game(m, lim, rules, buf, FRAME_GAME_BODY_MAX, err);
    if (n < 0) {
        free(buf);
        return (int)n;
    }
    body->len = (size_t)n;
    body->data = xrealloc(buf, n > 0 ? (size_t)n : 1);
    return 0;
}

ProtobufCMessage *frame_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *payload,
                               size_t len, const frame_limits_t *lim, frame_error_t *err)
{
    return unpack_checked(desc, payload, len, lim, err, false, NULL);
}

void frame_free(ProtobufCMessage *m)
{
    if (m != NULL)
        arena_free_message(m);
}

Croupier__ClientMessage *frame_unpack_client(const uint8_t *payload, size_t len,
                                             const frame_limits_t *lim, frame_error_t *err)
{
    return (Croupier__ClientMessage *)unpack_checked(&croupier__client_message__descriptor, payload,
                                                     len, lim, err, true, NULL);
}

Croupier__ServerMessage *frame_unpack_server(const uint8_t *payload, size_t len,
                                             const frame_limits_t *lim, frame_error_t *err)
{
    return (Croupier__ServerMessage *)unpack_checked(&croupier__server_message__descriptor, payload,
                                                     len, lim, err, true, NULL);
}

Croupier__RpcFrame *frame_unpack_rpc(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                                     frame_error_t *err)
{
    return (Croupier__RpcFrame *)unpack_checked(&croupier__rpc_frame__descriptor, payload, len, lim,
                                                err, true, NULL);
}

Croupier__ClientMessage *frame_unpack_client_scratch(const uint8_t *payload, size_t len,
                                                     const frame_limits_t *lim, frame_error_t *err,
                                                     frame_scratch_t *scratch)
{
    return (Croupier__ClientMessage *)unpack_checked(&croupier__client_message__descriptor, payload,
                                                     len, lim, err, true, scratch);
}

void frame_free_client(Croupier__ClientMessage *m)
{
    if (m != NULL)
        frame_free(&m->base);
}

void frame_free_server(Croupier__ServerMessage *m)
{
    if (m != NULL)
        frame_free(&m->base);
}

void frame_free_rpc(Croupier__RpcFrame *m)
{
    if (m != NULL)
        frame_free(&m->base);
}

frame_result_t frame_peek(struct evbuffer *in, const frame_limits_t *lim, const uint8_t **payload,
                          size_t *len, size_t *want)
{
    lim = limits_or_default(lim);
    size_t have = evbuffer_get_length(in);
    uint8_t h[FRAME_HEADER_SIZE];
    if (have < FRAME_HEADER_SIZE) {
        if (want != NULL)
            *want = FRAME_HEADER_SIZE;
        return FRAME_NEED_MORE;
    }
    if (evbuffer_copyout(in, h, sizeof h) != (ev_ssize_t)sizeof h)
        return FRAME_NEED_MORE;
    size_t n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    if (len != NULL)
        *len = n;
    if (n > lim->max_frame)
        return FRAME_TOO_LARGE;
    if (have < FRAME_HEADER_SIZE + n) {
        if (want != NULL)
            *want = FRAME_HEADER_SIZE + n;
        return FRAME_NEED_MORE;
    }
    const uint8_t *p = evbuffer_pullup(in, (ev_ssize_t)(FRAME_HEADER_SIZE + n));
    if (p == NULL)
        return FRAME_NEED_MORE;
    if (payload != NULL)
        *payload = p + FRAME_HEADER_SIZE;
    return FRAME_OK;
}

void frame_consume(struct evbuffer *in, size_t len)
{
    evbuffer_drain(in, FRAME_HEADER_SIZE + len);
}

/* peek + unpack + consume for one message type; see frame_read_client in frame.h. */
static frame_result_t read_one(struct evbuffer *in, const frame_limits_t *lim,
                               const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out,
                               frame_error_t *err)
{
    lim = limits_or_default(lim);
    const uint8_t *payload = NULL;
    size_t len = 0;
    error_reset(err);
    frame_result_t r = frame_peek(in, lim, &payload, &len, NULL);
    if (r == FRAME_TOO_LARGE) {
        fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "frame of %zu bytes, cap %zu", len,
             lim->max_frame);
        return r;
    }
    if (r != FRAME_OK)
        return r;
    ProtobufCMessage *m = unpack_checked(desc, payload, len, lim, err, true, NULL);
    frame_consume(in, len);
    if (m == NULL)
        return FRAME_MALFORMED;
    *out = m;
    return FRAME_OK;
}

frame_result_t frame_read_client(struct evbuffer *in, const frame_limits_t *lim,
                                 Croupier__ClientMessage **out, frame_error_t *err)
{
    ProtobufCMessage *m = NULL;
    frame_result_t r = read_one(in, lim, &croupier__client_message__descriptor, &m, err);
    if (r == FRAME_OK)
        *out = (Croupier__ClientMessage *)m;
    return r;
}

frame_result_t frame_read_server(struct evbuffer *in, const frame_limits_t *lim,
                                 Croupier__ServerMessage **out, frame_error_t *err)
{
    ProtobufCMessage *m = NULL;
    frame_result_t r = read_one(in, lim, &croupier__server_message__descriptor, &m, err);
    if (r == FRAME_OK)
        *out = (Croupier__ServerMessage *)m;
    return r;
}

frame_result_t frame_read_rpc(struct evbuffer *in, const frame_limits_t *lim,
                              Croupier__RpcFrame **out, frame_error_t *err)
{
    ProtobufCMessage *m = NULL;
    frame_result_t r = read_one(in, lim, &croupier__rpc_frame__descriptor, &m, err);
    if (r == FRAME_OK)
        *out = (Croupier__RpcFrame *)m;
    return r;
}

/* ---- forwarding checked bytes ------------------------------------------------------------- */

/*
 * Steps over one field at *pos of a serialized message: its number in *id, its wire type in
 * *type, where its value starts in *value and its value's length in *value_len (for varints
 * and fixed fields, the bytes of the value). Returns false on malformed bytes.
 */
static bool wire_next(const uint8_t *p, size_t len, size_t *pos, uint64_t *id, unsigned *type,
                      size_t *value, size_t *value_len)
{
    uint64_t tag, n;
    if (!wire_varint(p, len, pos, &tag) || (tag >> 3) == 0)
        return false;
    *id = tag >> 3;
    *type = (unsigned)(tag & 7);
    size_t start = *pos;
    switch (*type) {
    case 0:
        if (!wire_varint(p, len, pos, &n))
            return false;
        break;
    case 1:
    case 5: {
        size_t w = *type == 1 ? 8 : 4;
        if (len - *pos < w)
            return false;
        *pos += w;
        break;
    }
    case 2:
        if (!wire_varint(p, len, pos, &n) || n > len - *pos)
            return false;
        start = *pos;
        *pos += (size_t)n;
        break;
    default:
        return false;
    }
    *value = start;
    *value_len = *pos - start;
    return true;
}

int frame_wire_field(const uint8_t *msg, size_t len, uint32_t field, const uint8_t **value,
                     size_t *value_len)
{
    size_t pos = 0, found = 0, at = 0, at_len = 0;
    if (len > 0 && msg == NULL)
        return -EINVAL;
    while (pos < len) {
        uint64_t id;
        unsigned type;
        size_t v, vlen;
        if (!wire_next(msg, len, &pos, &id, &type, &v, &vlen))
            return -EINVAL;
        if (id != field)
            continue;
        if (type != 2)
            return -EINVAL;
        if (++found > 1)
            return -EEXIST;
        at = v;
        at_len = vlen;
    }
    if (found == 0)
        return -ENOENT;
    *value = msg + at;
    *value_len = at_len;
    return 0;
}

/* Writes v as a varint at p; returns the number of bytes (at most 10). */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/*
 * The common case (the field does not occur in msg) is one reservation and two copies; when it
 * does, the fields around each occurrence are copied piece by piece.
 */
int frame_write_forward(struct evbuffer *out, const uint8_t *msg, size_t len, uint32_t field,
                        uint64_t value, const frame_limits_t *lim)
{
    lim = limits_or_default(lim);
    if (len > 0 && msg == NULL)
        return -EINVAL;
    /* One pass: is msg well-formed, how many bytes do the occurrences of field take? */
    size_t pos = 0, dropped = 0;
    while (pos < len) {
        size_t start = pos, v, vlen;
        uint64_t id;
        unsigned type;
        if (!wire_next(msg, len, &pos, &id, &type, &v, &vlen))
            return -EINVAL;
        if (field != 0 && id == field)
            dropped += pos - start;
    }
    uint8_t tail[16];
    size_t tail_len = 0;
    if (field != 0) {
        tail_len = put_varint(tail, (uint64_t)field << 3);
        tail_len += put_varint(tail + tail_len, value);
    }
    size_t size = len - dropped + tail_len;
    if (size > lim->max_frame || size > UINT32_MAX)
        return -EMSGSIZE;
    struct evbuffer_iovec iv;
    if (evbuffer_reserve_space(out, (ev_ssize_t)(FRAME_HEADER_SIZE + size), &iv, 1) != 1 ||
        iv.iov_len < FRAME_HEADER_SIZE + size)
        return -ENOMEM;
    uint8_t *p = iv.iov_base;
    frame_put_header(p, (uint32_t)size);
    p += FRAME_HEADER_SIZE;
    if (dropped == 0) {
        if (len > 0)
            memcpy(p, msg, len);
        p += len;
    } else {
        pos = 0;
        while (pos < len) {
            size_t start = pos, v, vlen;
            uint64_t id = 0;
            unsigned type;
            if (!wire_next(msg, len, &pos, &id, &type, &v, &vlen))
                return -EINVAL; /* cannot happen: the first pass read the same bytes */
            if (id == field)
                continue;
            memcpy(p, msg + start, pos - start);
            p += pos - start;
        }
    }
    memcpy(p, tail, tail_len);
    iv.iov_len = FRAME_HEADER_SIZE + size;
    if (evbuffer_commit_space(out, &iv, 1) != 0)
        return -ENOMEM;
    return 0;
}

/* ---- reading the wire format without decoding ---------------------------------------------- */

void frame_wire_init(frame_wire_reader_t *r, const uint8_t *msg, size_t len)
{
    r->p = msg;
    r->len = msg != NULL ? len : 0;
    r->pos = 0;
}

/* frame_wire_next(), inlined into the vouch and the scan (the relay's hot path). */
static inline int wire_read(frame_wire_reader_t *r, frame_wire_value_t *v)
{
    if (r->pos >= r->len)
        return 0;
    size_t pos = r->pos;
    uint64_t tag, n;
    if (r->p[pos] < 0x80)
        tag = r->p[pos++]; /* fields 1-15: one-byte tags */
    else if (!wire_varint(r->p, r->len, &pos, &tag))
        return -EINVAL;
    uint64_t id = tag >> 3;
    unsigned type = (unsigned)(tag & 7);
    if (id == 0 || id > 536870911u)
        return -EINVAL;
    size_t start = pos;
    switch (type) {
    case 0:
        if (!wire_varint(r->p, r->len, &pos, &n))
            return -EINVAL;
        v->num = n;
        break;
    case 1:
    case 5: {
        size_t w = type == 1 ? 8 : 4;
        if (r->len - pos < w)
            return -EINVAL;
        n = 0;
        for (size_t i = w; i-- > 0;)
            n = n << 8 | r->p[pos + i];
        v->num = n;
        pos += w;
        break;
    }
    case 2:
        if (!wire_varint(r->p, r->len, &pos, &n) || n > r->len - pos)
            return -EINVAL;
        v->num = n;
        start = pos;
        pos += (size_t)n;
        break;
    default:
        return -EINVAL;
    }
    v->field = (uint32_t)id;
    v->type = (uint8_t)type;
    v->data = r->p + start;
    v->len = pos - start;
    v->start = r->pos;
    r->pos = pos;
    return 1;
}

int frame_wire_next(frame_wire_reader_t *r, frame_wire_value_t *v)
{
    return wire_read(r, v);
}

size_t frame_wire_put_varint(uint8_t *p, uint64_t v)
{
    return put_varint(p, v);
}

/* The wire type a field of type t has when not packed. */
static unsigned wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    default:
        return 0;
    }
}

/* What one vouch pass carries: the limits, the estimated unpack size, half the budget. */
typedef struct vouch {
    const frame_limits_t *lim;
    size_t cost;
    size_t budget;
} vouch_t;

/* Oneofs per message tracked by the vouch (the protocol's messages have at most two). */
#define VOUCH_ONEOFS 4

/*
 * One message of frame_wire_vouch(): true when unpack_checked() would accept it. The cost
 * estimate over-counts what protobuf-c allocates: the message, 64 bytes per field occurrence
 * (its scan slab entry and array slot), the bytes of every string and bytes field.
 */
static bool vouch_message(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                          unsigned depth, vouch_t *v)
{
    if (depth > FRAME_MAX_DEPTH || d->n_fields > 64)
        return false;
    uint64_t seen = 0;
    unsigned oneof_at[VOUCH_ONEOFS], n_oneof = 0;
    v->cost += d->sizeof_message + 64;
    frame_wire_reader_t r;
    frame_wire_value_t f;
    int rc;
    frame_wire_init(&r, p, len);
    while ((rc = wire_read(&r, &f)) > 0) {
        const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(d, f.field);
        if (fd == NULL || f.type != wire_type_of(fd->type))
            return false;
        uint64_t bit = 1ull << (unsigned)(fd - d->fields);
        if (fd->label != PROTOBUF_C_LABEL_REPEATED && (seen & bit))
            return false;
        seen |= bit;
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            for (unsigned k = 0; k < n_oneof; k++)
                if (oneof_at[k] == fd->quantifier_offset)
                    return false;
            if (n_oneof == VOUCH_ONEOFS)
                return false;
            oneof_at[n_oneof++] = fd->quantifier_offset;
        }
        if (f.type == 0 && f.len == 10 && f.data[9] > 1)
            return false; /* above 2^64-1: leave the verdict to protobuf-c */
        v->cost += 64;
        switch (fd->type) {
        case PROTOBUF_C_TYPE_ENUM:
            if (f.num > INT32_MAX ||
                protobuf_c_enum_descriptor_get_value(fd->descriptor, (int)f.num) == NULL)
                return false;
            if (f.num == 0 && fd->label == PROTOBUF_C_LABEL_REQUIRED &&
                enum_zero_is_unspecified(fd->descriptor))
                return false;
            break;
        case PROTOBUF_C_TYPE_STRING:
            if (f.len > v->lim->max_string || !frame_utf8_valid(f.data, f.len))
                return false;
            v->cost += f.len + 1;
            break;
        case PROTOBUF_C_TYPE_BYTES:
            /* A list of card codes, but an envelope's body (walk_value, bytes_kind). */
            if (bytes_kind(d, fd, false) == BYTES_GAME_BODY) {
                if (f.len > FRAME_GAME_BODY_MAX)
                    return false;
                v->cost += f.len;
                break;
            }
            if (f.len > FRAME_MAX_CARDS)
                return false;
            for (size_t i = 0; i < f.len; i++)
                if (!frame_card_valid(f.data[i]))
                    return false;
            v->cost += f.len;
            break;
        case PROTOBUF_C_TYPE_MESSAGE:
            if (!vouch_message(fd->descriptor, f.data, f.len, depth + 1, v))
                return false;
            break;
        default:
            break;
        }
        if (v->cost > v->budget)
            return false;
    }
    if (rc < 0)
        return false;
    for (unsigned i = 0; i < d->n_fields; i++)
        if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED && !(seen & (1ull << i)))
            return false;
    return true;
}

int frame_wire_vouch(const ProtobufCMessageDescriptor *desc, const uint8_t *msg, size_t len,
                     const frame_limits_t *lim)
{
    lim = limits_or_default(lim);
    if (desc == NULL || len > lim->max_frame || (len > 0 && msg == NULL))
        return -EAGAIN;
    vouch_t v = {lim, 0, lim->budget_floor};
    if (lim->budget_factor > 0 && len > (SIZE_MAX - v.budget) / lim->budget_factor)
        v.budget = SIZE_MAX;
    else
        v.budget += lim->budget_factor * len;
    v.budget /= 2;
    return vouch_message(desc, msg, len, 0, &v) ? 0 : -EAGAIN;
}

/*
 * The ServerMessage bodies frame_scan_rpc() takes on the wire check alone: those rules_server()
 * has no rule for (a Result only without its error, checked by the caller). The others are
 * decoded alone for their rules (scan_body_rules). Keep in step with rules_server().
 */
static bool scan_plain_server_body(uint32_t body)
{
    switch (body) {
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
    case CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT:
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
    case CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY:
    case CROUPIER__SERVER_MESSAGE__BODY_PONG:
    case CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT:
        return true;
    default:
        return false;
    }
}

/*
 * The rules of a ServerMessage body that has some (Play, RoundEnd, Snapshot, Joined...): the
 * body alone is decoded, into scratch memory on the stack (a proto2 sub-message decodes the
 * same alone as inside its parent), and rules_server() runs on a ServerMessage that holds only
 * it. Returns 0 when the rules pass, -EAGAIN otherwise (the full decode gives the reason).
 */
static int scan_body_rules(uint32_t body, const uint8_t *p, size_t len, const frame_limits_t *lim)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&croupier__server_message__descriptor, body);
    if (fd == NULL || fd->type != PROTOBUF_C_TYPE_MESSAGE ||
        !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        return -EAGAIN;
    frame_scratch_t scratch;
    ProtobufCMessage *m =
        unpack_checked(fd->descriptor, p, len, limits_or_default(lim), NULL, false, &scratch);
    if (m == NULL)
        return -EAGAIN;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = (Croupier__ServerMessage__BodyCase)body;
    memcpy((char *)&sm + fd->offset, &m, sizeof m);
    int rc = rules_server(&sm, "ServerMessage", NULL);
    arena_free_message(m);
    return rc == 0 ? 0 : -EAGAIN;
}

/* Field numbers the scan reads (the unit test checks them against the descriptors). */
enum {
    SCAN_RPC_REQUEST_ID = 1,
    SCAN_RPC_PLAYER_ID = 4,
    SCAN_RPC_SESSION_ID = 5,
    SCAN_RPC_FIRST_BODY = 10,
    SCAN_REPLY_CODE = 1,
    SCAN_REPLY_ERROR = 2,
    SCAN_REPLY_PAYLOAD = 3,
    SCAN_SERVER_REQUEST_ID = 1,
    SCAN_SERVER_FIRST_BODY = 10,
    SCAN_RESULT_ERROR = 1,
};

/*
 * The frame passed frame_wire_vouch() as an RpcFrame first (so every field below is known,
 * well-typed and at most once, and the generic checks hold); the reads after it only pick the
 * values out and apply rules_rpc()'s rules for a reply and a push.
 */
int frame_scan_rpc(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                   frame_rpc_scan_t *out)
{
    memset(out, 0, sizeof *out);
    if (frame_wire_vouch(&croupier__rpc_frame__descriptor, payload, len, lim) != 0)
        return -EAGAIN;
    frame_wire_reader_t r;
    frame_wire_value_t f;
    const uint8_t *body = NULL;
    size_t body_len = 0;
    frame_wire_init(&r, payload, len);
    while (wire_read(&r, &f) > 0) {
        if (f.field == SCAN_RPC_REQUEST_ID) {
            out->request_id = f.num;
        } else if (f.field == SCAN_RPC_PLAYER_ID) {
            out->player_id = f.num;
            out->has_player_id = true;
        } else if (f.field == SCAN_RPC_SESSION_ID) {
            out->session_id = f.num;
            out->has_session_id = true;
        } else if (f.field >= SCAN_RPC_FIRST_BODY) {
            out->body = f.field;
            body = f.data;
            body_len = f.len;
        }
    }
    if (out->body == CROUPIER__RPC_FRAME__BODY_REPLY) {
        if (out->request_id == 0)
            return -EAGAIN;
        bool ok = false;
        frame_wire_init(&r, body, body_len);
        while (wire_read(&r, &f) > 0) {
            if (f.field == SCAN_REPLY_CODE)
                ok = f.num == CROUPIER__ERROR_CODE__OK;
            else if (f.field == SCAN_REPLY_ERROR)
                return -EAGAIN;
            else if (f.field == SCAN_REPLY_PAYLOAD) {
                out->msg = f.data;
                out->msg_len = f.len;
            }
        }
        if (!ok || out->msg == NULL)
            return -EAGAIN;
    } else if (out->body == CROUPIER__RPC_FRAME__BODY_PUSH) {
        if (!out->has_player_id || out->player_id == 0)
            return -EAGAIN;
        out->msg = body;
        out->msg_len = body_len;
    } else {
        return -EAGAIN;
    }
    const uint8_t *sub = NULL;
    size_t sub_len = 0;
    frame_wire_init(&r, out->msg, out->msg_len);
    while (wire_read(&r, &f) > 0) {
        if (f.field == SCAN_SERVER_REQUEST_ID) {
            out->msg_request_id = true;
        } else if (f.field >= SCAN_SERVER_FIRST_BODY) {
            out->msg_body = f.field;
            sub = f.data;
            sub_len = f.len;
        }
    }
    bool plain = scan_plain_server_body(out->msg_body);
    if (out->msg_body == CROUPIER__SERVER_MESSAGE__BODY_RESULT) {
        /* plain without its error (whose code must not be OK: decoded for that rule) */
        frame_wire_init(&r, sub, sub_len);
        while (wire_read(&r, &f) > 0)
            if (f.field == SCAN_RESULT_ERROR)
                plain = false;
    }
    if (plain)
        return 0;
    return scan_body_rules(out->msg_body, sub, sub_len, lim);
}

int frame_write_prefixed(struct evbuffer *out, uint32_t field, uint64_t value, const uint8_t *msg,
                         size_t len, const frame_limits_t *lim)
{
    lim = limits_or_default(lim);
    if (len > 0 && msg == NULL)
        return -EINVAL;
    uint8_t head[FRAME_HEADER_SIZE + 20];
    size_t n = FRAME_HEADER_SIZE;
    if (field != 0) {
        n += put_varint(head + n, (uint64_t)field << 3);
        n += put_varint(head + n, value);
    }
    size_t size = n - FRAME_HEADER_SIZE + len;
    if (size > lim->max_frame || size > UINT32_MAX)
        return -EMSGSIZE;
    frame_put_header(head, (uint32_t)size);
    struct evbuffer_iovec iv;
    if (evbuffer_reserve_space(out, (ev_ssize_t)(FRAME_HEADER_SIZE + size), &iv, 1) != 1 ||
        iv.iov_len < FRAME_HEADER_SIZE + size)
        return -ENOMEM;
    memcpy(iv.iov_base, head, n);
    if (len > 0)
        memcpy((uint8_t *)iv.iov_base + n, msg, len);
    iv.iov_len = FRAME_HEADER_SIZE + size;
    if (evbuffer_commit_space(out, &iv, 1) != 0)
        return -ENOMEM;
    return 0;
}

/*
 * Writes the seed corpus of fuzz_zjh_action (fuzz_zjh_action.c): zjh_corpus_gen DIR fills DIR
 * (fuzz/corpus/zjh_action) with ZjhAction bodies as a client would put them in Action.game:
 *   - a valid action of every move (fold, call, raise, look, compare), and the largest unit and
 *     target the wire can carry;
 *   - what the rules refuse: a raise without a unit or with unit 0 or -1, a compare without a
 *     target, move 0 (UNSPECIFIED), an undefined move, no move at all;
 *   - what the codec refuses or must cope with: an empty body, a truncated varint, an over-long
 *     varint, a field given twice, unknown fields (varint, fixed, length-delimited with bytes
 *     that are not UTF-8, a group), field number 0, the largest field number and one above
 *     it, a wrong wire type, a body one byte over FRAME_GAME_BODY_MAX.
 * Run it by hand after a change of ZjhAction and commit the result.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zhajinhua.pb-c.h"

#define GAME_BODY_MAX 8192 /* FRAME_GAME_BODY_MAX (proto/frame.h) */

static const char *dir;
static int files;

static void put(const char *name, const uint8_t *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    files++;
}

/* move, then unit and target when >= 0 / set. */
static void action(const char *name, int move, bool has_unit, int64_t unit, bool has_target,
                   uint32_t target)
{
    Croupier__Zjh__ZjhAction a = CROUPIER__ZJH__ZJH_ACTION__INIT;
    uint8_t buf[64];
    a.move = (Croupier__Zjh__ZjhMove)move;
    a.has_unit = has_unit;
    a.unit = unit;
    a.has_target = has_target;
    a.target = target;
    put(name, buf, croupier__zjh__zjh_action__pack(&a, buf));
}

#define RAW(name, ...)                                                                             \
    do {                                                                                           \
        static const uint8_t b_[] = {__VA_ARGS__};                                                 \
        put(name, b_, sizeof b_);                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    /* Every move, valid. */
    action("fold.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, false, 0, false, 0);
    action("call.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL, false, 0, false, 0);
    action("raise.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, true, 20, false, 0);
    action("raise_cap.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, true, 100, false, 0);
    action("raise_huge.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, true, INT64_MAX, false, 0);
    action("look.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, false, 0, false, 0);
    action("compare.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, false, 0, true, 1);
    action("compare_seat0.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, false, 0, true, 0);
    action("compare_far.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, false, 0, true, UINT32_MAX);
    /* Fields a move does not need are ignored. */
    action("fold_with_unit.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, true, 50, true, 2);
    /* Refused by the rules or the descriptor walk. */
    action("raise_no_unit.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, false, 0, false, 0);
    action("raise_zero.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, true, 0, false, 0);
    action("raise_negative.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, true, -1, false, 0);
    action("compare_no_target.pb", CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, false, 0, false, 0);
    action("move_unspecified.pb", 0, false, 0, false, 0);
    action("move_undefined.pb", 6, false, 0, false, 0);
    RAW("no_move.pb", 0x10, 0x14); /* unit 20 alone */
    put("empty.pb", NULL, 0);      /* nothing: the required move is missing */
    RAW("truncated.pb", 0x08);     /* a tag without its value */
    RAW("truncated_varint.pb", 0x08, 0x80);
    RAW("overlong_varint.pb", 0x08, 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00);
    RAW("varint_11_bytes.pb", 0x08, 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
        0x00);
    RAW("move_twice.pb", 0x08, 0x03, 0x10, 0x14, 0x08, 0x01); /* the last move wins: fold */
    RAW("unknown_varint.pb", 0x08, 0x02, 0xa0, 0x06, 0x07);   /* field 100 */
    RAW("unknown_fixed.pb", 0x08, 0x02, 0x21, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4);
    RAW("unknown_bytes_not_utf8.pb", 0x08, 0x02, 0x3a, 0x03, 0xff, 0xfe, 0x00);
    RAW("unknown_group.pb", 0x08, 0x02, 0x43, 0x48, 0x01, 0x44);
    RAW("field_zero.pb", 0x00, 0x01, 0x08, 0x02);
    RAW("field_max.pb", 0x08, 0x02, 0xf8, 0xff, 0xff, 0xff, 0x0f, 0x01);     /* 2^29 - 1: taken */
    RAW("field_too_big.pb", 0x08, 0x02, 0x80, 0x80, 0x80, 0x80, 0x10, 0x01); /* 2^29 */
    RAW("move_wrong_wire_type.pb", 0x0a, 0x01, 0x02);
    RAW("target_wrong_wire_type.pb", 0x08, 0x05, 0x1d, 1, 0, 0, 0);
    /* One byte over the body cap: a valid call followed by an unknown bytes field. */
    static uint8_t big[GAME_BODY_MAX + 1];
    size_t n = 0;
    big[n++] = 0x08;
    big[n++] = 0x02;
    big[n++] = 0x3a; /* field 7, length-delimited */
    size_t len = sizeof big - n - 2;
    big[n++] = (uint8_t)(0x80 | (len & 0x7f));
    big[n++] = (uint8_t)(len >> 7);
    memset(big + n, 'a', sizeof big - n);
    put("over_body_max.pb", big, sizeof big);
    printf("%d files in %s\n", files, dir);
    return 0;
}

/*
 * Writes the seed corpora of the frame fuzzers: fuzz_corpus_gen DIR creates
 * DIR/{client,server,rpc}_frame/ with
 *   - every sample message of tests/unit/test_proto_samples.c as a bare payload (<name>.pb),
 *   - all samples of a direction framed back to back in one stream (stream.frames),
 *   - edge cases: an empty frame, an over-cap header, a truncated frame, a bad enum value,
 *     invalid UTF-8, a string with a NUL, many empty sub-messages, a deep unknown field.
 * Run it by hand after a schema change and commit the result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_proto_samples.h"

typedef struct gen {
    char dir[4096];
    struct evbuffer *stream;
    int files;
} gen_t;

static void write_file(gen_t *g, const char *name, const uint8_t *p, size_t n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", g->dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    g->files++;
}

static void emit(gen_t *g, const char *name, const ProtobufCMessage *m)
{
    static uint8_t buf[FRAME_DEFAULT_MAX + FRAME_HEADER_SIZE];
    frame_error_t err;
    ssize_t n = frame_encode(m, NULL, buf, sizeof buf, &err);
    if (n < 0) {
        fprintf(stderr, "sample %s does not encode: %s\n", name, err.detail);
        exit(1);
    }
    char fname[128];
    snprintf(fname, sizeof fname, "%s.pb", name);
    write_file(g, fname, buf + FRAME_HEADER_SIZE, (size_t)n - FRAME_HEADER_SIZE);
    evbuffer_add(g->stream, buf, (size_t)n);
}

static void on_client(void *arg, const char *name, const Croupier__ClientMessage *m)
{
    emit(arg, name, &m->base);
}
static void on_server(void *arg, const char *name, const Croupier__ServerMessage *m)
{
    emit(arg, name, &m->base);
}
static void on_rpc(void *arg, const char *name, const Croupier__RpcFrame *m)
{
    emit(arg, name, &m->base);
}

/* Edge cases shared by every direction (framing, protobuf structure). */
static void edge_cases(gen_t *g)
{
    size_t n = evbuffer_get_length(g->stream);
    uint8_t *s = evbuffer_pullup(g->stream, -1);
    write_file(g, "stream.frames", s, n);
    /* The same stream cut in the middle of its last frame. */
    write_file(g, "truncated.frames", s, n - 3);
    static const uint8_t empty[] = {0, 0, 0, 0};
    write_file(g, "empty.frame", empty, sizeof empty);
    static const uint8_t over[] = {0, 1, 0, 1, 0x08, 0x01};
    write_file(g, "over_cap.frame", over, sizeof over);
    static const uint8_t badvarint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    write_file(g, "bad_varint.pb", badvarint, sizeof badvarint);
    /* Unknown field 1000, length-delimited, nested garbage inside. */
    static const uint8_t unknown[] = {0x08, 0x05, 0xc2, 0x3e, 0x04, 0x0a, 0x02, 0x08, 0x01};
    write_file(g, "unknown_field.pb", unknown, sizeof unknown);
    /* Field number 0 written as an overlong varint tag (protobuf-c alone accepts it). */
    static const uint8_t tag0[] = {0x08, 0x01, 0x80, 0x00, 0x05};
    write_file(g, "overlong_tag0.pb", tag0, sizeof tag0);
}

static void make_dir(gen_t *g, const char *root, const char *name)
{
    snprintf(g->dir, sizeof g->dir, "%s/%s", root, name);
    if (mkdir(g->dir, 0755) != 0 && errno != EEXIST) {
        perror(g->dir);
        exit(1);
    }
    g->stream = evbuffer_new();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_ROOT (e.g. fuzz/corpus)\n", argv[0]);
        return 2;
    }
    if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
        perror(argv[1]);
        return 1;
    }
    gen_t g = {0};

    make_dir(&g, argv[1], "client_frame");
    samples_client(on_client, &g);
    edge_cases(&g);
    {
        /* join with engine 9 (undefined), login with invalid UTF-8, token with a NUL. */
        static const uint8_t bad_enum[] = {0x08, 0x01, 0x5a, 0x0a, 0x08, 0x09, 0x12,
                                           0x04, 'a',  'b',  'c',  'd',  0x18, 0x01};
        write_file(&g, "bad_enum.pb", bad_enum, sizeof bad_enum);
        static const uint8_t bad_utf8[] = {0x08, 0x01, 0x52, 0x04, 0x0a, 0x02, 0xc3, 0x28};
        write_file(&g, "bad_utf8.pb", bad_utf8, sizeof bad_utf8);
        static const uint8_t nul[] = {0x08, 0x01, 0x52, 0x05, 0x0a, 0x03, 'a', 0x00, 'b'};
        write_file(&g, "string_nul.pb", nul, sizeof nul);
    }
    evbuffer_free(g.stream);

    make_dir(&g, argv[1], "server_frame");
    samples_server(on_server, &g);
    edge_cases(&g);
    {
        /* A snapshot whose 400 SeatInfo entries are empty (tag 6, length 0 each). */
        uint8_t many[3 + 4 + 800];
        size_t k = 0;
        size_t body = 4 + 800;
        many[k++] = 0x72; /* field 14 (snapshot), length-delimited */
        many[k++] = (uint8_t)(0x80 | (body & 0x7f));
        many[k++] = (uint8_t)(body >> 7);
        many[k++] = 0x08; /* desk_id = 1 */
        many[k++] = 0x01;
        many[k++] = 0x10; /* your_seat = 0 */
        many[k++] = 0x00;
        for (int i = 0; i < 400; i++) {
            many[k++] = 0x32; /* field 6 (seats), length-delimited, empty */
            many[k++] = 0x00;
        }
        write_file(&g, "many_empty_seats.pb", many, k);
        static const uint8_t bad_card[] = {0x7a, 0x04, 0x12, 0x02, 0x00, 0xff};
        write_file(&g, "bad_card.pb", bad_card, sizeof bad_card);
    }
    evbuffer_free(g.stream);

    make_dir(&g, argv[1], "rpc_frame");
    samples_rpc(on_rpc, &g);
    edge_cases(&g);
    evbuffer_free(g.stream);

    printf("wrote %d files under %s\n", g.files, argv[1]);
    return 0;
}

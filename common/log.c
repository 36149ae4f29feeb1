#include "log.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_level = LOG_INFO;
static atomic_int log_fd = 2;
static const char *log_process;

static const char *const log_level_names[] = {"debug", "info", "warn", "error", "fatal"};

void log_set_level(log_level_t level)
{
    atomic_store(&log_level, (int)level);
}

int log_parse_level(const char *name, log_level_t *out)
{
    for (int i = 0; i <= LOG_FATAL; i++) {
        if (strcmp(name, log_level_names[i]) == 0) {
            *out = (log_level_t)i;
            return 0;
        }
    }
    return -EINVAL;
}

void log_set_fd(int fd)
{
    atomic_store(&log_fd, fd);
}

void log_set_process(const char *name)
{
    log_process = name;
}

int log_enabled(log_level_t level)
{
    return (int)level >= atomic_load(&log_level);
}

/*
 * Builds the record as a jansson object (time, level, event first, then the caller's fields),
 * serialises it compactly and writes it with one write(2) call. A bad format string is reported
 * in the record itself rather than dropped, so a logging bug never hides an event.
 */
void log_emit(log_level_t level, const char *event, const char *fmt, ...)
{
    if (!log_enabled(level))
        return;

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char tbuf[40];
    size_t n = strftime(tbuf, sizeof tbuf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(tbuf + n, sizeof tbuf - n, ".%03ldZ", ts.tv_nsec / 1000000);

    json_t *rec = json_object();
    json_object_set_new(rec, "ts", json_string(tbuf));
    json_object_set_new(rec, "level", json_string(log_level_names[level]));
    if (log_process != NULL)
        json_object_set_new(rec, "proc", json_string(log_process));
    json_object_set_new(rec, "event", json_string(event));
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        json_error_t err;
        json_t *fields = json_vpack_ex(&err, 0, fmt, ap);
        va_end(ap);
        if (fields != NULL && json_is_object(fields))
            json_object_update(rec, fields);
        else
            json_object_set_new(rec, "log_format_error", json_string(err.text));
        json_decref(fields);
    }
    char *line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(rec);
    if (line == NULL)
        return;
    size_t len = strlen(line);
    line[len] = '\n'; /* the buffer holds len + 1 bytes: the NUL becomes the newline */
    ssize_t w = write(atomic_load(&log_fd), line, len + 1);
    (void)w;
    free(line);
}

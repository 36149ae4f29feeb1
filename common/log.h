/*
 * log -- JSON-lines logger.
 *
 * Every record is one line of compact JSON written with a single write(2), so lines from many
 * threads never interleave:
 *
 *     {"ts":"2026-11-30T03:12:45.123Z","level":"info","event":"lease_acquired","slot":3}
 *
 * Fields are given in jansson's json_pack() format, which keeps them typed:
 *
 *     log_emit(LOG_INFO, "lease_acquired", "{s:i,s:s}", "slot", 3, "service", name);
 *
 * Pass NULL as the format for a record with no fields. The logger is safe from any thread.
 * Records below the current level are dropped before any formatting.
 */
#ifndef CROUPIER_LOG_H
#define CROUPIER_LOG_H

typedef enum {
    LOG_DEBUG = 0,
    LOG_INFO = 1,
    LOG_WARN = 2,
    LOG_ERROR = 3,
    LOG_FATAL = 4,
} log_level_t;

/* Sets the lowest level written (default LOG_INFO). */
void log_set_level(log_level_t level);
/* Parses "debug", "info", "warn", "error" or "fatal"; returns 0 or -EINVAL. */
int log_parse_level(const char *name, log_level_t *out);
/* Sets the file descriptor records go to (default 2, stderr). The caller keeps it open. */
void log_set_fd(int fd);
/* Adds a fixed field to every record (e.g. "proc":"game"); at most one, set before threads. */
void log_set_process(const char *name);
int log_enabled(log_level_t level);

void log_emit(log_level_t level, const char *event, const char *fmt, ...);

#endif

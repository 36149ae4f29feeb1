#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *config_program_version;

bool config_list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (len == n && memcmp(p, item, n) == 0)
            return true;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return false;
}

void config_env_name(const char *flag, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "CROUPIER_");
    for (const char *p = flag; *p != '\0' && o + 1 < len; p++)
        buf[o++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
    if (o < len)
        buf[o] = '\0';
}

int config_parse_addr(const char *text, config_addr_t *out)
{
    const char *colon;
    const char *host = text;
    size_t hlen;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL || close[1] != ':')
            return -EINVAL;
        host = text + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (colon == NULL)
            return -EINVAL;
        hlen = (size_t)(colon - text);
    }
    if (hlen == 0 || hlen >= sizeof out->host)
        return -EINVAL;
    char h[64];
    memcpy(h, host, hlen);
    h[hlen] = '\0';
    unsigned char tmp[16];
    if (inet_pton(AF_INET, h, tmp) != 1 && inet_pton(AF_INET6, h, tmp) != 1)
        return -EINVAL;
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0' || port < 0 || port > 65535)
        return -EINVAL;
    memcpy(out->host, h, hlen + 1);
    out->port = (int)port;
    return 0;
}

static int config_set(const config_flag_t *f, const char *val, const char *origin, char *errbuf,
                      size_t errlen)
{
    switch (f->type) {
    case CONFIG_STR:
        *(const char **)f->out = val;
        return 0;
    case CONFIG_INT: {
        char *end;
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno != 0 || end == val || *end != '\0') {
            snprintf(errbuf, errlen, "%s --%s: '%s' is not a whole number", origin, f->name, val);
            return CONFIG_ERROR;
        }
        if ((f->min != 0 || f->max != 0) && (v < f->min || v > f->max)) {
            snprintf(errbuf, errlen, "%s --%s: %ld is outside [%ld, %ld]", origin, f->name, v,
                     f->min, f->max);
            return CONFIG_ERROR;
        }
        *(long *)f->out = v;
        return 0;
    }
    case CONFIG_BOOL:
        if (!strcmp(val, "true") || !strcmp(val, "1") || !strcmp(val, "yes")) {
            *(bool *)f->out = true;
        } else if (!strcmp(val, "false") || !strcmp(val, "0") || !strcmp(val, "no")) {
            *(bool *)f->out = false;
        } else {
            snprintf(errbuf, errlen, "%s --%s: '%s' is not true or false", origin, f->name, val);
            return CONFIG_ERROR;
        }
        return 0;
    case CONFIG_ADDR:
        if (config_parse_addr(val, f->out) != 0) {
            snprintf(errbuf, errlen, "%s --%s: '%s' is not IP:PORT (an IP literal and a port)",
                     origin, f->name, val);
            return CONFIG_ERROR;
        }
        return 0;
    }
    return CONFIG_ERROR;
}

void config_print_help(const config_flag_t *flags, const char *prog, const char *summary, FILE *to)
{
    fprintf(to, "usage: %s [flags]\n%s\n\nflags (each also read from its environment variable):\n",
            prog, summary);
    for (const config_flag_t *f = flags; f->name != NULL; f++) {
        char env[128];
        config_env_name(f->name, env, sizeof env);
        fprintf(to, "  --%-22s %s\n  %-24s env %s, default: %s\n", f->name, f->help, "", env,
                f->def != NULL ? (f->def[0] ? f->def : "\"\"") : "(none)");
    }
    fprintf(to, "  --%-22s print this help and exit\n", "help");
    if (config_program_version != NULL)
        fprintf(to, "  --%-22s print the build's version and exit\n", "version");
}

/*
 * Defaults, then environment, then argv. Accepts "--name value" and "--name=value"; a boolean
 * given alone means true. Positional arguments are refused: every input has a name.
 */
int config_parse(const config_flag_t *flags, const char *prog, const char *summary, int argc,
                 char **argv, char *errbuf, size_t errlen)
{
    errbuf[0] = '\0';
    for (const config_flag_t *f = flags; f->name != NULL; f++) {
        if (f->def == NULL) {
            if (f->type == CONFIG_STR)
                *(const char **)f->out = NULL;
            continue;
        }
        int rc = config_set(f, f->def, "default", errbuf, errlen);
        if (rc != 0)
            return rc;
    }
    for (const config_flag_t *f = flags; f->name != NULL; f++) {
        char env[128];
        config_env_name(f->name, env, sizeof env);
        const char *v = getenv(env);
        if (v == NULL)
            continue;
        char origin[160];
        snprintf(origin, sizeof origin, "environment %s:", env);
        int rc = config_set(f, v, origin, errbuf, errlen);
        if (rc != 0)
            return rc;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            config_print_help(flags, prog, summary, stdout);
            return CONFIG_HELP;
        }
        if (config_program_version != NULL && !strcmp(a, "--version")) {
            printf("%s %s\n", prog, config_program_version);
            return CONFIG_HELP;
        }
        if (strncmp(a, "--", 2) != 0) {
            snprintf(errbuf, errlen, "unexpected argument '%s' (see --help)", a);
            return CONFIG_ERROR;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const config_flag_t *f = flags;
        while (f->name != NULL && (strlen(f->name) != nlen || strncmp(f->name, name, nlen) != 0))
            f++;
        if (f->name == NULL) {
            snprintf(errbuf, errlen, "unknown flag '--%.*s' (see --help)", (int)nlen, name);
            return CONFIG_ERROR;
        }
        const char *val;
        if (eq != NULL) {
            val = eq + 1;
        } else if (f->type == CONFIG_BOOL) {
            val = "true";
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            snprintf(errbuf, errlen, "flag --%s needs a value", f->name);
            return CONFIG_ERROR;
        }
        int rc = config_set(f, val, "flag", errbuf, errlen);
        if (rc != 0)
            return rc;
    }
    return CONFIG_OK;
}

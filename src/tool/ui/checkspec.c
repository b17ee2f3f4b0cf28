/* checkspec.c — `cprof check`'s specifications (see checkspec.h). */
#include "tool/ui/checkspec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/measure.h"

int checkspec_parse(checkspec_t *s, const char *spec, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    config_default(&s->cfg);
    s->spec = spec;
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec || !eq[1] || *spec == ':') {
        snprintf(err, errlen, "-max %s: want TYPE[:SETTING=VALUE]...=LIMIT, as inuse_space=64MB",
                 spec);
        return -EINVAL;
    }
    s->name = strndup(spec, (size_t)(eq - spec));
    s->limit_text = strdup(eq + 1);
    char *settings = s->name ? strchr(s->name, ':') : NULL;
    char *type = s->name ? strndup(s->name, settings ? (size_t)(settings - s->name) : strlen(s->name))
                         : NULL;
    int rc = s->limit_text && type ? config_set_str(&s->cfg.sample_index, type) : -ENOMEM;
    free(type);
    char *copy = rc == 0 && settings ? strdup(settings + 1) : NULL, *save = NULL;
    if (rc < 0 || (settings && !copy)) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (char *kv = copy ? strtok_r(copy, ":", &save) : NULL; kv && rc == 0;
         kv = strtok_r(NULL, ":", &save)) {
        char *v = strchr(kv, '=');
        char e[512];
        if (!v) {
            snprintf(err, errlen, "-max %s: setting \"%s\" has no =VALUE", spec, kv);
            rc = -EINVAL;
            break;
        }
        *v++ = '\0';
        if (strcmp(kv, "sample_index") == 0) {
            snprintf(err, errlen, "-max %s: the type comes first, not as a setting", spec);
            rc = -EINVAL;
        } else if (config_set(&s->cfg, kv, v, e, sizeof(e)) < 0) {
            snprintf(err, errlen, "-max %s: %s", spec, e);
            rc = -EINVAL;
        }
    }
    free(copy);
    return rc;
}

void checkspec_free(checkspec_t *s)
{
    free(s->name);
    free(s->limit_text);
    config_free(&s->cfg);
    memset(s, 0, sizeof(*s));
}

int checkspec_limit(const char *text, const char *unit, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || v < 0 || *text == ' ')
        return -EINVAL;
    if (*end) {
        if (!measure_compatible("x", end, "x", unit))
            return -EINVAL;
        const char *u;
        v *= measure_scale(1, end, unit, &u);
    }
    *out = v;
    return 0;
}

int checkspec_tolerance(const char *text, double *pct)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || v < 0 || *text == ' ' ||
        (*end && strcmp(end, "%") != 0))
        return -EINVAL;
    *pct = v;
    return 0;
}

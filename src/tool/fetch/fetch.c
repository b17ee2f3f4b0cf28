/* fetch.c — profile sources: files, and URLs over HTTP(S) with libcurl
 * (see fetch.h). The URL rules are Go's net/url as go tool pprof uses it. */
#include "tool/fetch/fetch.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/url.h"
#include "cprof.h"
#include "profile/parse.h"
#include "tool/fetch/inflate.h"

/* --- Go's net/url, the parts adjustURL uses ----------------------------------- */

typedef struct {
    char *scheme, *userinfo, *host, *path, *query, *fragment;
    bool has_userinfo, force_query, opaque;
} gourl_t;

static void gourl_free(gourl_t *u)
{
    free(u->scheme);
    free(u->userinfo);
    free(u->host);
    free(u->path);
    free(u->query);
    free(u->fragment);
    memset(u, 0, sizeof(*u));
}

/* Every '%' starts a valid escape. */
static bool escapes_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '%' && (i + 2 >= n || url_hex_digit(s[i + 1]) < 0 || url_hex_digit(s[i + 2]) < 0))
            return false;
    return true;
}

/* Go's validOptionalPort. */
static bool valid_port(const char *p, size_t n)
{
    if (n == 0)
        return true;
    if (p[0] != ':')
        return false;
    for (size_t i = 1; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return false;
    return true;
}

/* Go's parseHost, reduced to the checks that make url.Parse fail. */
static bool valid_host(const char *h, size_t n)
{
    if (!escapes_ok(h, n))
        return false;
    for (size_t i = 0; i < n; i++)
        if (h[i] == ' ' || h[i] == '/' || h[i] == '?' || h[i] == '#')
            return false;
    if (n && h[0] == '[') {
        const char *e = memchr(h, ']', n);
        if (!e)
            return false;
        return valid_port(e + 1, n - (size_t)(e + 1 - h));
    }
    const char *c = NULL;
    for (size_t i = 0; i < n; i++)
        if (h[i] == ':')
            c = h + i;
    return !c || valid_port(c, n - (size_t)(c - h));
}

/* Go's url.Parse: 0, or -1 where it returns an error. */
static int gourl_parse(const char *raw, gourl_t *u)
{
    memset(u, 0, sizeof(*u));
    for (const char *c = raw; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return -1;
    const char *hash = strchr(raw, '#');
    size_t restlen = hash ? (size_t)(hash - raw) : strlen(raw);
    if (hash) {
        if (!escapes_ok(hash + 1, strlen(hash + 1)))
            return -1;
        u->fragment = strdup(hash + 1);
    }
    const char *rest = raw;
    /* getScheme */
    size_t i;
    for (i = 0; i < restlen; i++) {
        char c = raw[i];
        if (isalpha((unsigned char)c))
            continue;
        if (isdigit((unsigned char)c) || c == '+' || c == '-' || c == '.') {
            if (i == 0)
                break;
            continue;
        }
        if (c == ':') {
            if (i == 0)
                goto bad; /* missing protocol scheme */
            u->scheme = strndup(raw, i);
            for (char *s = u->scheme; s && *s; s++)
                *s = (char)tolower((unsigned char)*s);
            rest = raw + i + 1;
            restlen -= i + 1;
        }
        break;
    }
    size_t nq = 0;
    for (size_t k = 0; k < restlen; k++)
        nq += rest[k] == '?';
    if (nq == 1 && rest[restlen - 1] == '?') {
        u->force_query = true; /* a single trailing '?' */
        restlen--;
    } else if (nq) {
        const char *q = memchr(rest, '?', restlen);
        u->query = strndup(q + 1, restlen - (size_t)(q + 1 - rest));
        restlen = (size_t)(q - rest);
    }
    if (restlen == 0 || rest[0] != '/') {
        if (u->scheme) {
            u->opaque = true; /* "host:port/x": scheme "host", no host */
            return 0;
        }
        const char *slash = memchr(rest, '/', restlen);
        size_t seg = slash ? (size_t)(slash - rest) : restlen;
        if (memchr(rest, ':', seg))
            goto bad; /* first path segment in URL cannot contain colon */
    }
    bool slashes = restlen >= 2 && rest[0] == '/' && rest[1] == '/';
    if (slashes && (u->scheme || !(restlen >= 3 && rest[2] == '/'))) {
        const char *a = rest + 2;
        size_t alen = restlen - 2;
        const char *sl = memchr(a, '/', alen);
        size_t authlen = sl ? (size_t)(sl - a) : alen;
        const char *at = NULL;
        for (size_t k = 0; k < authlen; k++)
            if (a[k] == '@')
                at = a + k;
        const char *h = a;
        if (at) {
            u->has_userinfo = true;
            u->userinfo = strndup(a, (size_t)(at - a));
            h = at + 1;
        }
        size_t hlen = authlen - (size_t)(h - a);
        if (!valid_host(h, hlen))
            goto bad;
        u->host = strndup(h, hlen);
        rest = a + authlen;
        restlen = alen - authlen;
    }
    if (!escapes_ok(rest, restlen))
        goto bad;
    u->path = strndup(rest, restlen);
    return 0;
bad:
    gourl_free(u);
    return -1;
}

/* --- url.Values ---------------------------------------------------------------- */

typedef struct {
    char *k, *v;
} kv_t;

/* Go's QueryUnescape, allocated: '+' is a space; a bad escape fails. */
static char *query_unescape(const char *s, size_t n)
{
    char *o = malloc(n + 1);
    if (o && !url_unescape(s, n, o)) {
        free(o);
        return NULL;
    }
    return o;
}

/* Go's QueryEscape into out (size >= 3 * strlen(s) + 1). */
static void query_escape(const char *s, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            *out++ = (char)c;
        } else if (c == ' ') {
            *out++ = '+';
        } else {
            *out++ = '%';
            *out++ = hex[c >> 4];
            *out++ = hex[c & 15];
        }
    }
    *out = '\0';
}

/* Go's ParseQuery, keeping the pairs it accepts (u.Query() ignores the
 * error of the others). */
static kv_t *parse_query(const char *q, size_t *n)
{
    size_t cap = 1;
    for (const char *c = q; *c; c++)
        cap += *c == '&';
    kv_t *v = calloc(cap, sizeof(*v));
    *n = 0;
    if (!v)
        return NULL;
    const char *s = q;
    while (*s) {
        const char *amp = strchr(s, '&');
        size_t len = amp ? (size_t)(amp - s) : strlen(s);
        const char *next = amp ? amp + 1 : s + len;
        if (len == 0 || memchr(s, ';', len)) {
            s = next;
            continue;
        }
        const char *eq = memchr(s, '=', len);
        size_t kl = eq ? (size_t)(eq - s) : len;
        char *k = query_unescape(s, kl);
        char *val = eq ? query_unescape(eq + 1, len - kl - 1) : strdup("");
        if (k && val) {
            v[*n].k = k;
            v[(*n)++].v = val;
        } else {
            free(k);
            free(val);
        }
        s = next;
    }
    return v;
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const kv_t *)a)->k, ((const kv_t *)b)->k);
}

/* Go's Values.Encode: keys sorted (values of one key in order). */
static char *encode_query(kv_t *v, size_t n)
{
    /* stable sort by key: insertion sort keeps equal keys in order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && kv_cmp(&v[j - 1], &v[j]) > 0; j--) {
            kv_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += 3 * (strlen(v[i].k) + strlen(v[i].v)) + 2;
    char *out = malloc(len), *o = out;
    if (!out)
        return NULL;
    *o = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = '&';
        query_escape(v[i].k, o);
        o += strlen(o);
        *o++ = '=';
        query_escape(v[i].v, o);
        o += strlen(o);
    }
    return out;
}

/* The path as URL.String writes it: kept when it is a valid encoding,
 * characters Go would escape escaped otherwise. */
static char *escape_path(const char *p)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(3 * strlen(p) + 1), *o = out;
    if (!out)
        return NULL;
    for (; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || strchr("-_.~!$&'()*+,;=:@[]/%", c)) {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    return out;
}

bool fetch_adjust_url(const char *source, int seconds, int timeout, fetch_target_t *t)
{
    t->url = NULL;
    t->timeout_ms = 0;
    gourl_t u;
    int rc = gourl_parse(source, &u);
    if (rc < 0 || ((!u.host || !*u.host) && u.scheme && strcmp(u.scheme, "file") != 0)) {
        if (rc == 0)
            gourl_free(&u);
        char *h = malloc(strlen(source) + 8);
        if (!h)
            return false;
        sprintf(h, "http://%s", source);
        rc = gourl_parse(h, &u);
        free(h);
    }
    if (rc < 0)
        return false;
    if (!u.host || !*u.host || u.opaque) {
        gourl_free(&u);
        return false;
    }
    if (!u.path || !*u.path || strcmp(u.path, "/") == 0) {
        free(u.path);
        u.path = strdup("/debug/pprof/profile");
    }
    size_t nv = 0;
    kv_t *v = parse_query(u.query ? u.query : "", &nv);
    long long duration_ms = 0;
    char secs[32];
    if (v && seconds > 0) {
        snprintf(secs, sizeof(secs), "%d", seconds);
        /* Values.Set: one value, in place of all others */
        size_t k = 0;
        for (size_t i = 0; i < nv; i++) {
            if (strcmp(v[i].k, "seconds") == 0) {
                free(v[i].k);
                free(v[i].v);
            } else {
                v[k++] = v[i];
            }
        }
        nv = k;
        kv_t *nvv = realloc(v, (nv + 1) * sizeof(*v));
        if (nvv) {
            v = nvv;
            v[nv].k = strdup("seconds");
            v[nv].v = strdup(secs);
            if (v[nv].k && v[nv].v)
                nv++;
        }
        duration_ms = (long long)seconds * 1000;
    } else if (v) {
        for (size_t i = 0; i < nv; i++)
            if (strcmp(v[i].k, "seconds") == 0) {
                /* strconv.ParseInt(s, 10, 32) */
                const char *s = v[i].v;
                char *end;
                errno = 0;
                long long x = strtoll(s, &end, 10);
                if (*s && !isspace((unsigned char)*s) && !*end && errno == 0 &&
                    x >= -2147483648LL && x <= 2147483647LL)
                    duration_ms = x * 1000;
                break;
            }
    }
    long long tmo = (long long)timeout * 1000;
    if (timeout <= 0)
        tmo = duration_ms > 0 ? duration_ms + duration_ms / 2 : 60000;
    char *query = v ? encode_query(v, nv) : NULL;
    for (size_t i = 0; i < nv; i++) {
        free(v[i].k);
        free(v[i].v);
    }
    free(v);
    char *path = escape_path(u.path ? u.path : "");
    if (query && path) {
        size_t len = strlen(u.scheme ? u.scheme : "http") + strlen(u.host) + strlen(path) +
                     strlen(query) + (u.userinfo ? strlen(u.userinfo) : 0) +
                     (u.fragment ? strlen(u.fragment) : 0) + 16;
        t->url = malloc(len);
        if (t->url)
            snprintf(t->url, len, "%s%s//%s%s%s%s%s%s%s%s", u.scheme ? u.scheme : "",
                     u.scheme ? ":" : "",
                     u.has_userinfo ? u.userinfo : "", u.has_userinfo ? "@" : "", u.host, path,
                     *query || u.force_query ? "?" : "", query, u.fragment ? "#" : "",
                     u.fragment ? u.fragment : "");
    }
    t->timeout_ms = (long)tmo;
    free(query);
    free(path);
    gourl_free(&u);
    return t->url != NULL;
}

void fetch_target_free(fetch_target_t *t)
{
    free(t->url);
    t->url = NULL;
}

void fetch_go_duration(char *buf, size_t n, long long ms)
{
    if (ms == 0) {
        snprintf(buf, n, "0s");
        return;
    }
    const char *sign = ms < 0 ? "-" : "";
    if (ms < 0)
        ms = -ms;
    long long h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, f = ms % 1000;
    char sec[32];
    if (ms < 1000) {
        snprintf(sec, sizeof(sec), "%lldms", f);
        snprintf(buf, n, "%s%s", sign, sec);
        return;
    }
    if (f) {
        snprintf(sec, sizeof(sec), "%lld.%03lld", s, f);
        size_t l = strlen(sec);
        while (sec[l - 1] == '0')
            sec[--l] = '\0';
        strcat(sec, "s");
    } else {
        snprintf(sec, sizeof(sec), "%llds", s);
    }
    if (h)
        snprintf(buf, n, "%s%lldh%lldm%s", sign, h, m, sec);
    else if (m)
        snprintf(buf, n, "%s%lldm%s", sign, m, sec);
    else
        snprintf(buf, n, "%s%s", sign, sec);
}

/* --- HTTP ---------------------------------------------------------------------- */

typedef struct {
    uint8_t *data;
    size_t len, cap;
    bool too_big;
    char status[160]; /* "404 Not Found", from the last status line */
    long code;
    char ctype[160];
    bool go_pprof;
    char curl_err[CURL_ERROR_SIZE];
    struct curl_slist *hdrs;
} xfer_t;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    xfer_t *x = ud;
    size_t n = size * nmemb;
    if (n > FETCH_MAX_BODY - x->len) {
        x->too_big = true;
        return 0;
    }
    if (x->len + n + 1 > x->cap) {
        size_t c = x->cap ? x->cap : 65536;
        while (c < x->len + n + 1)
            c *= 2;
        uint8_t *d = realloc(x->data, c);
        if (!d)
            return 0;
        x->data = d;
        x->cap = c;
    }
    memcpy(x->data + x->len, ptr, n);
    x->len += n;
    x->data[x->len] = '\0';
    return n;
}

/* Go's http.StatusText, for status lines without a reason (HTTP/2). */
static const char *status_text(long code)
{
    static const struct {
        long code;
        const char *text;
    } t[] = {{200, "OK"},
             {301, "Moved Permanently"},
             {302, "Found"},
             {400, "Bad Request"},
             {401, "Unauthorized"},
             {403, "Forbidden"},
             {404, "Not Found"},
             {405, "Method Not Allowed"},
             {408, "Request Timeout"},
             {429, "Too Many Requests"},
             {500, "Internal Server Error"},
             {501, "Not Implemented"},
             {502, "Bad Gateway"},
             {503, "Service Unavailable"},
             {504, "Gateway Timeout"}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i].code == code)
            return t[i].text;
    return "";
}

static void trim_crlf(char *s)
{
    size_t l = strlen(s);
    while (l && (s[l - 1] == '\r' || s[l - 1] == '\n' || s[l - 1] == ' '))
        s[--l] = '\0';
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud)
{
    xfer_t *x = ud;
    size_t n = size * nmemb;
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) - 1 ? n : sizeof(line) - 1), ptr);
    trim_crlf(line);
    if (strncmp(line, "HTTP/", 5) == 0) {
        /* a new response (redirects, 100 Continue): forget the last one */
        x->ctype[0] = '\0';
        x->go_pprof = false;
        const char *sp = strchr(line, ' ');
        if (sp) {
            while (*sp == ' ')
                sp++;
            long code = strtol(sp, NULL, 10);
            const char *reason = sp;
            while (*reason && *reason != ' ')
                reason++;
            while (*reason == ' ')
                reason++;
            snprintf(x->status, sizeof(x->status), "%ld %s", code,
                     *reason ? reason : status_text(code));
            trim_crlf(x->status);
        }
        return n;
    }
    char *colon = strchr(line, ':');
    if (!colon)
        return n;
    *colon = '\0';
    const char *val = colon + 1;
    while (*val == ' ' || *val == '\t')
        val++;
    if (strcasecmp(line, "Content-Type") == 0)
        snprintf(x->ctype, sizeof(x->ctype), "%s", val);
    else if (strcasecmp(line, "X-Go-Pprof") == 0 && *val)
        x->go_pprof = true;
    return n;
}

static bool curl_ready(char *err, size_t errlen)
{
    static int state; /* 0 not tried, 1 ok, -1 failed */
    if (state == 0)
        state = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 1 : -1;
    if (state < 0)
        snprintf(err, errlen, "cannot initialize libcurl");
    return state > 0;
}

/* Go's ProxyFromEnvironment never proxies localhost and loopback
 * addresses; curl would, when a proxy is set. */
static char *no_proxy_list(void)
{
    const char *env = getenv("no_proxy");
    if (!env || !*env)
        env = getenv("NO_PROXY");
    char *s;
    if (env && strcmp(env, "*") == 0)
        return strdup("*");
    if (asprintf(&s, "%s%slocalhost,127.0.0.0/8,::1", env ? env : "", env && *env ? "," : "") < 0)
        return NULL;
    return s;
}

/* Splits "https+insecure://..." (cmd/pprof: https without verifying the
 * certificate) into a plain https URL and the flag. */
static char *real_url(const char *url, bool *insecure)
{
    *insecure = strncmp(url, "https+insecure://", 17) == 0;
    if (!*insecure)
        return strdup(url);
    char *u;
    return asprintf(&u, "https://%s", url + 17) < 0 ? NULL : u;
}

static const char *scheme_ok(const char *url, char *scheme, size_t n)
{
    const char *c = strstr(url, "://");
    snprintf(scheme, n, "%.*s", c ? (int)(c - url) : 0, url);
    if (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0 ||
        strcmp(scheme, "https+insecure") == 0)
        return NULL;
    return scheme;
}

static CURL *easy_new(const char *url, long timeout_ms, xfer_t *x, char *noproxy)
{
    bool insecure;
    char *u = real_url(url, &insecure);
    CURL *h = u ? curl_easy_init() : NULL;
    if (!h) {
        free(u);
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_URL, u);
    free(u); /* libcurl copies string options */
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L); /* Go's client stops after 10 */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "cprof/" CPROF_VERSION);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->curl_err);
    if (noproxy)
        curl_easy_setopt(h, CURLOPT_NOPROXY, noproxy);
    if (insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    x->curl_err[0] = '\0';
    return h;
}

/* The first line of a text body, printable, at most 200 bytes. */
static void first_line(const xfer_t *x, char *out, size_t n)
{
    out[0] = '\0';
    if (!x->data || !x->len)
        return;
    size_t k = 0;
    for (size_t i = 0; i < x->len && x->data[i] != '\n' && k + 1 < n && k < 200; i++) {
        unsigned char c = x->data[i];
        if (c == '\r')
            continue;
        out[k++] = (char)(c < 0x20 || c == 0x7f ? '?' : c);
    }
    out[k] = '\0';
}

/* err for a finished transfer, or 0 for a 200 answer. */
static int xfer_result(const char *what, const char *url, CURLcode cc, CURL *h, xfer_t *x,
                       long timeout_ms, char *err, size_t errlen)
{
    if (cc == CURLE_WRITE_ERROR && x->too_big) {
        snprintf(err, errlen, "%s: %s \"%s\": response body larger than %zu bytes", what,
                 strcmp(what, "http post") == 0 ? "Post" : "Get", url, FETCH_MAX_BODY);
        return -EFBIG;
    }
    if (cc == CURLE_OPERATION_TIMEDOUT) {
        char d[32];
        fetch_go_duration(d, sizeof(d), timeout_ms);
        snprintf(err, errlen, "%s: %s \"%s\": timeout: no complete response within %s (-timeout)",
                 what, strcmp(what, "http post") == 0 ? "Post" : "Get", url, d);
        return -ETIMEDOUT;
    }
    if (cc != CURLE_OK) {
        const char *e = x->curl_err[0] ? x->curl_err : curl_easy_strerror(cc);
        long oe = 0;
        char ebuf[sizeof(x->curl_err) + 64];
        if (cc == CURLE_COULDNT_CONNECT && curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oe) == CURLE_OK &&
            oe > 0) {
            /* "Failed to connect to H port P after 0 ms: Connection refused" */
            const char *c = strstr(e, ": Couldn't connect to server");
            snprintf(ebuf, sizeof(ebuf), "%.*s: %s", c ? (int)(c - e) : (int)strlen(e), e,
                     strerror((int)oe));
            e = ebuf;
        }
        snprintf(err, errlen, "%s: %s \"%s\": %s", what,
                 strcmp(what, "http post") == 0 ? "Post" : "Get", url, e);
        return cc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
    }
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200) {
        if (!x->status[0])
            snprintf(x->status, sizeof(x->status), "%ld %s", code, status_text(code));
        char line[256];
        /* pprof shows the body of errors from a pprof endpoint (X-Go-Pprof,
         * text/plain); cprof shows the first line of any text body. */
        bool text = x->go_pprof || strncmp(x->ctype, "text/", 5) == 0;
        if (text)
            first_line(x, line, sizeof(line));
        else
            line[0] = '\0';
        if (strcmp(what, "http post") == 0)
            snprintf(err, errlen, "http post %s: server response: %s%s%s", url, x->status,
                     *line ? " - " : "", line);
        else
            snprintf(err, errlen, "server response: %s%s%s", x->status, *line ? " - " : "",
                     line);
        return -EIO;
    }
    return 0;
}

void fetch_get_all(const fetch_target_t *t, size_t n, fetch_body_t *out)
{
    for (size_t i = 0; i < n; i++)
        memset(&out[i], 0, sizeof(out[i]));
    if (n == 0)
        return;
    char err[256];
    xfer_t *x = calloc(n, sizeof(*x));
    CURL **h = calloc(n, sizeof(*h));
    CURLM *m = NULL;
    char *noproxy = no_proxy_list();
    bool ok = x && h && curl_ready(err, sizeof(err)) && (m = curl_multi_init()) != NULL;
    if (!ok) {
        for (size_t i = 0; i < n; i++) {
            out[i].rc = -ENOMEM;
            snprintf(out[i].err, sizeof(out[i].err), "http fetch: %s",
                     x && h ? "cannot initialize libcurl" : "out of memory");
        }
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        char scheme[64];
        if (scheme_ok(t[i].url, scheme, sizeof(scheme))) {
            out[i].rc = -EPROTONOSUPPORT;
            snprintf(out[i].err, sizeof(out[i].err),
                     "http fetch: Get \"%s\": unsupported protocol scheme \"%s\"", t[i].url,
                     scheme);
            continue;
        }
        h[i] = easy_new(t[i].url, t[i].timeout_ms, &x[i], noproxy);
        if (!h[i] || curl_multi_add_handle(m, h[i]) != CURLM_OK) {
            out[i].rc = -ENOMEM;
            snprintf(out[i].err, sizeof(out[i].err), "http fetch: out of memory");
            if (h[i])
                curl_easy_cleanup(h[i]);
            h[i] = NULL;
        }
    }
    int running = 1;
    while (running) {
        if (curl_multi_perform(m, &running) != CURLM_OK)
            break;
        if (running && curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK)
            break;
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        for (size_t i = 0; i < n; i++) {
            if (h[i] != msg->easy_handle)
                continue;
            out[i].rc = xfer_result("http fetch", t[i].url, msg->data.result, h[i], &x[i],
                                    t[i].timeout_ms, out[i].err, sizeof(out[i].err));
            if (out[i].rc == 0) {
                out[i].data = x[i].data;
                out[i].len = x[i].len;
                x[i].data = NULL;
            }
            curl_multi_remove_handle(m, h[i]);
            curl_easy_cleanup(h[i]);
            h[i] = NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (h[i]) { /* the multi loop failed */
            out[i].rc = -EIO;
            snprintf(out[i].err, sizeof(out[i].err), "http fetch: Get \"%s\": transfer failed",
                     t[i].url);
            curl_multi_remove_handle(m, h[i]);
            curl_easy_cleanup(h[i]);
        }
done:
    if (x)
        for (size_t i = 0; i < n; i++)
            free(x[i].data);
    if (m)
        curl_multi_cleanup(m);
    free(x);
    free(h);
    free(noproxy);
}

void fetch_body_free(fetch_body_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

int fetch_parse_body(const fetch_body_t *b, profile_t **out, char *err, size_t errlen)
{
    char e[400];
    int rc = profile_parse(b->data, b->len, out, e, sizeof(e));
    if (rc < 0)
        snprintf(err, errlen, "parsing profile: %s", e);
    return rc;
}

int fetch_post(const char *url, const char *body, size_t len, long timeout_ms, char **resp,
               size_t *resplen, char *err, size_t errlen)
{
    *resp = NULL;
    *resplen = 0;
    char scheme[64];
    if (scheme_ok(url, scheme, sizeof(scheme))) {
        snprintf(err, errlen, "http post %s: unsupported protocol scheme \"%s\"", url, scheme);
        return -EPROTONOSUPPORT;
    }
    if (!curl_ready(err, errlen))
        return -EIO;
    xfer_t x;
    memset(&x, 0, sizeof(x));
    char *noproxy = no_proxy_list();
    CURL *h = easy_new(url, timeout_ms, &x, noproxy);
    if (!h) {
        free(noproxy);
        snprintf(err, errlen, "http post %s: out of memory", url);
        return -ENOMEM;
    }
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/octet-stream");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    /* a 301/302 after a POST must not turn it into a GET: no redirects */
    curl_easy_setopt(h, CURLOPT_POSTREDIR, (long)CURL_REDIR_POST_ALL);
    CURLcode cc = curl_easy_perform(h);
    char e[400];
    int rc = xfer_result("http post", url, cc, h, &x, timeout_ms, e, sizeof(e));
    if (rc < 0) {
        /* "http post URL: ..." as pprof's postURL words it */
        if (strncmp(e, "http post ", 10) == 0)
            snprintf(err, errlen, "%s", e);
        else
            snprintf(err, errlen, "http post %s: %s", url,
                     strstr(e, "\": ") ? strstr(e, "\": ") + 3 : e);
        free(x.data);
    } else {
        *resp = x.data ? (char *)x.data : strdup("");
        *resplen = x.len;
        if (!*resp) {
            snprintf(err, errlen, "http post %s: out of memory", url);
            rc = -ENOMEM;
        }
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    free(noproxy);
    return rc;
}

/* --- files ---------------------------------------------------------------------- */

static int read_file(const char *path, const profile_inflater_t *inflater, profile_t *reuse,
                     profile_t **out, char *err, size_t errlen)
{
    char e[1024];
    int rc = profile_read_file_reuse(path, inflater, reuse, out, e, sizeof(e));
    if (rc < 0) {
        /* profile_read_file names the path first; the driver does too */
        size_t pl = strlen(path);
        const char *m = strncmp(e, path, pl) == 0 && strncmp(e + pl, ": ", 2) == 0 ? e + pl + 2 : e;
        snprintf(err, errlen, "%s", m);
    }
    return rc;
}

int fetch_file(const char *path, profile_t **out, char *err, size_t errlen)
{
    return read_file(path, NULL, NULL, out, err, errlen);
}

int fetch_file_reuse(const char *path, profile_t *reuse, profile_t **out, char *err,
                     size_t errlen)
{
    return read_file(path, NULL, reuse, out, err, errlen);
}

int fetch_file_ahead(const char *path, profile_t **out, char *err, size_t errlen)
{
    profile_inflater_t pi;
    inflater_t *in = inflater_new(&pi);
    int rc = read_file(path, in ? &pi : NULL, NULL, out, err, errlen);
    inflater_free(in);
    return rc;
}

/* --- saving ---------------------------------------------------------------------- */

static int mkdir_all(const char *dir)
{
    char buf[4096];
    if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
        return -ENAMETOOLONG;
    for (char *s = buf + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (stat(buf, &st) < 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int fetch_tmpdir(char *dir, size_t dirlen, char *warn, size_t warnlen)
{
    char cand[3][4096];
    int n = 0;
    const char *e = getenv("PPROF_TMPDIR");
    if (e && *e)
        snprintf(cand[n++], sizeof(cand[0]), "%s", e);
    e = getenv("HOME");
    if (e && *e)
        snprintf(cand[n++], sizeof(cand[0]), "%s/pprof", e);
    e = getenv("TMPDIR");
    snprintf(cand[n++], sizeof(cand[0]), "%s", e && *e ? e : "/tmp");
    for (int i = 0; i < n; i++) {
        int rc = mkdir_all(cand[i]);
        if (rc == 0) {
            snprintf(dir, dirlen, "%s", cand[i]);
            return 0;
        }
        size_t l = strlen(warn);
        if (l < warnlen)
            snprintf(warn + l, warnlen - l, "Could not use temp dir %s: %s\n", cand[i],
                     strerror(-rc));
    }
    return -1;
}

int fetch_new_file(const char *dir, const char *prefix, const char *suffix, char *path,
                   size_t pathlen)
{
    for (int i = 1; i < 10000; i++) {
        if (snprintf(path, pathlen, "%s/%s%03d%s", dir, prefix, i, suffix) >= (int)pathlen)
            return -ENAMETOOLONG;
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* Go's filepath.Base for a non-empty path. */
static void go_base(const char *p, char *out, size_t n)
{
    size_t l = strlen(p);
    while (l > 1 && p[l - 1] == '/')
        l--;
    size_t s = l;
    while (s > 0 && p[s - 1] != '/')
        s--;
    if (l == 1 && p[0] == '/')
        snprintf(out, n, "/");
    else
        snprintf(out, n, "%.*s", (int)(l - s), p + s);
}

void fetch_save_prefix(const profile_t *p, char *prefix, size_t n)
{
    size_t l = (size_t)snprintf(prefix, n, "pprof.");
    if (p->n_mappings > 0 && p->mappings[0].filename > 0 &&
        (size_t)p->mappings[0].filename < p->n_strings && *p->strings[p->mappings[0].filename]) {
        char b[256];
        go_base(p->strings[p->mappings[0].filename], b, sizeof(b));
        if (l < n)
            l += (size_t)snprintf(prefix + l, n - l, "%s.", b);
    }
    for (size_t i = 0; i < p->n_sample_types && l < n; i++) {
        int64_t t = p->sample_types[i].type;
        l += (size_t)snprintf(prefix + l, n - l, "%s.",
                              t > 0 && (size_t)t < p->n_strings ? p->strings[t] : "");
    }
    /* a name, not a path: no directory separators from the profile */
    for (char *c = prefix; *c; c++)
        if (*c == '/')
            *c = '_';
}

int fetch_save(const profile_t *p, char *path, size_t pathlen, char *warn, size_t warnlen,
               char *err, size_t errlen)
{
    char dir[4096], prefix[1024];
    if (fetch_tmpdir(dir, sizeof(dir), warn, warnlen) < 0) {
        snprintf(err, errlen, "failed to identify temp dir");
        return -ENOENT;
    }
    fetch_save_prefix(p, prefix, sizeof(prefix));
    int fd = fetch_new_file(dir, prefix, ".pb.gz", path, pathlen);
    if (fd < 0) {
        snprintf(err, errlen, "open %s: %s", path, strerror(-fd));
        return fd;
    }
    int rc = profile_write_fd(p, fd);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc < 0) {
        snprintf(err, errlen, "write %s: %s", path, strerror(-rc));
        unlink(path);
    }
    return rc;
}

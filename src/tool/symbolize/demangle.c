/* demangle.c — pprof's C++ name simplification on top of libstdc++'s
 * __cxa_demangle (see demangle.h for the modes).
 *
 * __cxa_demangle has no options: it always prints parameters, template
 * arguments, return types of template functions and " [clone .x]"
 * suffixes. pprof's demangler (ianlancetaylor/demangle) leaves them out
 * while printing; we get the same strings by removing them from the text,
 * which is safe because the demangled grammar nests: parameter lists are
 * balanced (), template arguments balanced <> — except inside operator
 * names such as operator<< or operator(), which the scanner below steps
 * over as single tokens.
 */
#include "demangle.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rustdemangle.h"

/* libstdc++ (cxxabi.h is C++ only). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

bool demangle_is_mangled(const char *name)
{
    return name && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

int demangle_parse_mode(const char *s)
{
    if (!strcmp(s, "default") || !*s)
        return DEMANGLE_DEFAULT;
    if (!strcmp(s, "templates"))
        return DEMANGLE_TEMPLATES;
    if (!strcmp(s, "full"))
        return DEMANGLE_FULL;
    if (!strcmp(s, "none"))
        return DEMANGLE_NONE;
    return -1;
}

static bool is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Operator spellings after the keyword, longest first so that the longest
 * one matches ("<<=" before "<<" before "<"). */
static const char *const op_syms[] = {
    "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
    "+=",  "-=",  "*=",  "/=",  "%=", "&=", "|=", "^=", "->", "()", "[]", "<",  ">",  "+",
    "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  ",",
};

/* If s + i starts the name of an operator ("operator<<", "operator()",
 * "operator new", "operator int"), returns the length of the part that is
 * not C++ punctuation of the surrounding name, else 0. *word is set for
 * operators spelled with words (new, delete, conversions, literals), whose
 * name runs to the end of the string: nothing after them is scanned. */
static size_t op_token(const char *s, size_t i, bool *word)
{
    static const char kw[] = "operator";
    const size_t kl = sizeof(kw) - 1;
    *word = false;
    if (strncmp(s + i, kw, kl) != 0 || (i > 0 && is_ident(s[i - 1])) || is_ident(s[i + kl]))
        return 0;
    const char *r = s + i + kl;
    if (*r == ' ' || *r == '"') {
        *word = true;
        return strlen(s + i);
    }
    for (size_t k = 0; k < sizeof(op_syms) / sizeof(op_syms[0]); k++) {
        size_t n = strlen(op_syms[k]);
        if (strncmp(r, op_syms[k], n) == 0)
            return kl + n;
    }
    return 0;
}

/* Removes trailing " [clone .cold]" / " [clone .constprop.0]" suffixes. */
static void strip_clones(char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == ']') {
        char *c = NULL;
        for (char *q = strstr(s, " [clone "); q; q = strstr(q + 1, " [clone "))
            c = q;
        if (!c)
            break;
        *c = '\0';
        n = (size_t)(c - s);
    }
}

/* Removes the top-level parameter list (with the cv/ref qualifiers after it)
 * and the return type that template functions print before their name:
 * "int ns::f<int>(int) const" -> "ns::f<int>". Names that are not functions
 * ("ns::var", "vtable for X") come back unchanged. */
static void strip_params(char *s)
{
    static const char *const quals[] = {" const", " volatile", " restrict", " &&", " &",
                                        " noexcept", " transaction_safe"};
    size_t n = strlen(s);
    for (bool again = true; again;) {
        again = false;
        for (size_t k = 0; k < sizeof(quals) / sizeof(quals[0]); k++)
            if (ends_with(s, n, quals[k])) {
                n -= strlen(quals[k]);
                again = true;
            }
    }
    if (n == 0 || s[n - 1] != ')')
        return;
    /* Matching '(' of the last ')': parameter types nest parentheses only in
     * balanced pairs (function pointer types, decltype). */
    size_t depth = 0, open = n;
    for (size_t i = n; i-- > 0;) {
        if (s[i] == ')')
            depth++;
        else if (s[i] == '(' && --depth == 0) {
            open = i;
            break;
        }
    }
    if (open == n || open == 0)
        return;
    /* "operator()(int)": the '(' found belongs to the list, not the name. */
    s[open] = '\0';
    n = open;

    /* The return type ends at the last space outside any bracket that is
     * not part of an operator name. */
    size_t cut = 0;
    depth = 0;
    for (size_t i = 0; i < n; i++) {
        bool word;
        size_t t = depth == 0 ? op_token(s, i, &word) : 0;
        if (t) {
            if (word)
                break;
            i += t - 1;
            /* libiberty writes "operator< <int>": that space is the name's. */
            if (s[i + 1] == ' ')
                i++;
            continue;
        }
        switch (s[i]) {
        case '(': case '<': case '[': case '{':
            depth++;
            break;
        case ')': case '>': case ']': case '}':
            if (depth)
                depth--;
            break;
        case ' ':
            if (depth == 0)
                cut = i + 1;
            break;
        }
    }
    if (cut)
        memmove(s, s + cut, n - cut + 1);
}

/* Removes every template argument list "<...>", keeping operator names. */
static void strip_templates(char *s)
{
    size_t w = 0, depth = 0;
    for (size_t i = 0; s[i];) {
        bool word;
        size_t t = op_token(s, i, &word);
        if (t && !word) {
            if (depth == 0)
                memmove(s + w, s + i, t), w += t;
            i += t;
            continue;
        }
        if (s[i] == '<') {
            /* "operator< <int>" loses its separating space with the list. */
            if (depth == 0 && w >= 2 && s[w - 1] == ' ' && strchr("<>=!+-*/%^&|~,)]", s[w - 2]))
                w--;
            depth++;
            i++;
            continue;
        }
        if (s[i] == '>' && depth) {
            depth--;
            i++;
            continue;
        }
        if (depth == 0)
            s[w++] = s[i];
        i++;
    }
    s[w] = '\0';
}

/* pprof's removeMatching: drops every outermost start..end group; gives up
 * (returns the name as it was) on an unmatched end. */
static void remove_matching(char *s, char start, char end)
{
    size_t n = strlen(s), w = 0;
    char *out = malloc(n + 1);
    if (!out)
        return;
    int nesting = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == start && nesting++ == 0)
            first = w;
        else if (s[i] == end) {
            if (--nesting < 0) {
                /* pprof returns the name as modified so far. */
                memcpy(out + w, s + i, n - i);
                w += n - i;
                break;
            }
            if (nesting == 0) {
                w = first;
                continue;
            }
        }
        out[w++] = s[i];
    }
    /* An unclosed group is kept, as pprof keeps it. */
    memcpy(s, out, w);
    s[w] = '\0';
    free(out);
}

/* pprof's looksLikeDemangledCPlusPlus: Go generics ("pkg.F[...]") and
 * Java-style names are not C++. */
static bool looks_demangled(const char *s)
{
    /* One pass answers for most names (C's, every one of strings -top's
     * 138,097): no character either test looks for. The three strstr and
     * the strpbrk it saves were 27 M of that run's 3,455 M instructions. */
    if (!s[strcspn(s, "<>[]:")])
        return false;
    if (strstr(s, ".<") || strstr(s, "])."))
        return false;
    return strpbrk(s, "<>[]") || strstr(s, "::");
}

/* Length of a C name without GCC's clone suffixes ("f.constprop.0.isra.0",
 * "f.part.0", "f.cold"), 0 if it has none. Numbered kinds need their
 * number, so that a Go name such as "pkg.part" is not taken for one. */
static size_t clone_suffix(const char *s)
{
    static const struct {
        const char *kind;
        bool numbered;
    } kinds[] = {{"constprop", true}, {"isra", true},  {"part", true},
                 {"lto_priv", true},  {"cold", false}, {"localalias", false}};
    size_t id = 0;
    while (is_ident(s[id]) && s[id] != '$')
        id++;
    if (id == 0 || s[id] != '.' || isdigit((unsigned char)s[0]))
        return 0;
    for (const char *q = s + id; *q;) {
        if (*q++ != '.')
            return 0;
        size_t k = 0, n = 0;
        for (; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
            n = strlen(kinds[k].kind);
            if (!strncmp(q, kinds[k].kind, n) && (q[n] == '.' || !q[n]))
                break;
        }
        if (k == sizeof(kinds) / sizeof(kinds[0]))
            return 0;
        q += n;
        if (kinds[k].numbered && !(q[0] == '.' && isdigit((unsigned char)q[1])))
            return 0;
        if (q[0] == '.' && isdigit((unsigned char)q[1]))
            for (q++; isdigit((unsigned char)*q);)
                q++;
    }
    return id;
}

char *demangle_c_name(const char *name, demangle_mode_t mode)
{
    size_t n = mode == DEMANGLE_NONE ? 0 : clone_suffix(name);
    return n ? strndup(name, n) : NULL;
}

char *demangle_symbol(const char *sym, demangle_mode_t mode)
{
    if (mode == DEMANGLE_NONE || !sym || !*sym)
        return NULL;
    /* Rust first, as pprof's demangler: a legacy Rust name is also valid
     * C++ ("_ZN3foo17h...E" reads as foo::h...). pprof's options do not
     * apply to Rust names. */
    char *d = rust_demangle(sym);
    if (d)
        return d;
    if (sym[0] == '_' && sym[1] == 'Z') {
        int status = 0;
        d = __cxa_demangle(sym, NULL, NULL, &status);
        if (status != 0) {
            free(d);
            d = NULL;
        }
    }
    if (d) {
        /* Special names ("vtable for X", thunks, guard variables) are not
         * function signatures: pprof keeps their inner signature. */
        bool special = sym[2] == 'T' || (sym[2] == 'G' && sym[3] != '\0');
        strip_clones(d);
        if (mode != DEMANGLE_FULL && !special)
            strip_params(d);
        if (mode == DEMANGLE_DEFAULT)
            strip_templates(d);
        return d;
    }
    if (mode == DEMANGLE_FULL || !looks_demangled(sym))
        return NULL;
    d = strdup(sym);
    if (!d)
        return NULL;
    remove_matching(d, '(', ')');
    if (mode == DEMANGLE_DEFAULT)
        remove_matching(d, '<', '>');
    if (!strcmp(d, sym)) {
        free(d);
        return NULL;
    }
    return d;
}

char *demangle_simplify(const char *name, demangle_mode_t mode)
{
    if (mode != DEMANGLE_DEFAULT || !strchr(name, '<'))
        return NULL;
    char *d = strdup(name);
    if (d)
        strip_templates(d);
    return d;
}

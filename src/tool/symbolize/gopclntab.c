/* gopclntab.c — Go's pc-line table (see gopclntab.h), read the way the Go
 * runtime and debug/gosym read it:
 *
 *   header   magic(4) 0 0 quantum(1) ptrsize(1), then ptrsize-wide words:
 *            nfunc, nfiles, [textStart (1.18+)], and the offsets of
 *            funcnametab, cutab, filetab, pctab and funcdata (= functab)
 *   functab  nfunc+1 pairs (pc, offset of the function's _func in
 *            funcdata); pc is an offset from .text (1.18+: 4 bytes) or an
 *            address (1.16: ptrsize bytes); the last pc ends the table
 *   _func    entry (1.18+: 4-byte offset; 1.16: address), nameOff, args,
 *            deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset, ...
 *   pctab    pc-value programs: zig-zag value deltas and pc deltas (times
 *            the quantum) as varints, starting at value -1 at the entry
 *   files    cutab[cuOffset + file number] is an offset into filetab
 */
#include "gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { V116 = 116, V118 = 118 };

struct gopcln {
    const uint8_t *data;
    size_t len;
    int version;
    bool big_endian;
    uint32_t quantum, ptrsize;
    uint64_t nfunc, text_start;
    /* Section-relative offsets of the sub-tables. */
    uint64_t funcnametab, cutab, filetab, pctab, funcdata;
    uint64_t fieldsize; /* of a functab entry */
};

static bool get(const gopcln_t *t, uint64_t off, uint32_t size, uint64_t *v)
{
    if (off > t->len || size > t->len - off)
        return false;
    const uint8_t *p = t->data + off;
    uint64_t r = 0;
    for (uint32_t i = 0; i < size; i++)
        r = t->big_endian ? (r << 8) | p[i] : r | (uint64_t)p[i] << (8 * i);
    *v = r;
    return true;
}

/* A NUL-terminated string at off inside the table, or NULL. */
static const char *str_at(const gopcln_t *t, uint64_t off)
{
    if (off >= t->len || !memchr(t->data + off, 0, t->len - off))
        return NULL;
    return (const char *)t->data + off;
}

int gopcln_open(const uint8_t *data, size_t len, uint64_t text_start, gopcln_t **out)
{
    *out = NULL;
    if (len < 16 || data[4] != 0 || data[5] != 0 ||
        (data[6] != 1 && data[6] != 2 && data[6] != 4) || (data[7] != 4 && data[7] != 8))
        return -EINVAL;
    gopcln_t h = {.data = data, .len = len, .quantum = data[6], .ptrsize = data[7]};
    uint32_t le = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                  (uint32_t)data[3] << 24;
    uint32_t be = (uint32_t)data[3] | (uint32_t)data[2] << 8 | (uint32_t)data[1] << 16 |
                  (uint32_t)data[0] << 24;
    uint32_t magic;
    if (le == 0xfffffff0 || le == 0xfffffff1 || le == 0xfffffffa) {
        magic = le;
    } else if (be == 0xfffffff0 || be == 0xfffffff1 || be == 0xfffffffa) {
        magic = be;
        h.big_endian = true;
    } else {
        return -EINVAL; /* Go 1.2-1.15 (0xfffffffb) are not read */
    }
    h.version = magic == 0xfffffffa ? V116 : V118;
    uint64_t w[8];
    for (int i = 0; i < 8; i++)
        if (!get(&h, 8 + (uint64_t)i * h.ptrsize, h.ptrsize, &w[i]))
            return -EINVAL;
    h.nfunc = w[0];
    if (h.version == V118) {
        /* The header's textStart may be unrelocated: use .text's address,
         * as debug/gosym does. */
        h.text_start = text_start;
        h.funcnametab = w[3];
        h.cutab = w[4];
        h.filetab = w[5];
        h.pctab = w[6];
        h.funcdata = w[7];
        h.fieldsize = 4;
    } else {
        h.funcnametab = w[2];
        h.cutab = w[3];
        h.filetab = w[4];
        h.pctab = w[5];
        h.funcdata = w[6];
        h.fieldsize = h.ptrsize;
    }
    /* The whole functab, 2 * nfunc + 1 fields, must be inside the table. */
    uint64_t fields = h.funcdata < len ? (len - h.funcdata) / h.fieldsize : 0;
    if (h.nfunc == 0 || fields == 0 || h.nfunc > (fields - 1) / 2)
        return -EINVAL;
    gopcln_t *t = malloc(sizeof(*t));
    if (!t)
        return -ENOMEM;
    *t = h;
    *out = t;
    return 0;
}

void gopcln_close(gopcln_t *t)
{
    free(t);
}

/* pc of functab entry i (i == nfunc: the end of the last function). */
static bool entry_pc(const gopcln_t *t, uint64_t i, uint64_t *pc)
{
    if (!get(t, t->funcdata + 2 * i * t->fieldsize, (uint32_t)t->fieldsize, pc))
        return false;
    if (t->version == V118)
        *pc += t->text_start;
    return true;
}

/* Reads a varint at *off inside the pc table. */
static bool varint(const gopcln_t *t, uint64_t *off, uint32_t *v)
{
    uint32_t r = 0;
    for (uint32_t shift = 0; shift < 35; shift += 7) {
        if (*off >= t->len)
            return false;
        uint8_t b = t->data[(*off)++];
        r |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* The value of the pc-value program at pctab + off for target, the
 * function starting at entry; -1 if none. */
static int64_t pcvalue(const gopcln_t *t, uint32_t off, uint64_t entry, uint64_t target)
{
    if (off == 0 || t->pctab > t->len || off > t->len - t->pctab)
        return -1;
    uint64_t p = t->pctab + off, pc = entry;
    int32_t val = -1;
    for (bool first = true;; first = false) {
        uint32_t uv, pcd;
        if (!varint(t, &p, &uv) || (uv == 0 && !first))
            return -1;
        int32_t vd = (uv & 1) ? (int32_t) ~(uv >> 1) : (int32_t)(uv >> 1);
        if (!varint(t, &p, &pcd))
            return -1;
        pc += (uint64_t)pcd * t->quantum;
        val += vd;
        if (target < pc)
            return val;
    }
}

int gopcln_lookup(const gopcln_t *t, uint64_t pc, const char **func, const char **file,
                  int64_t *line)
{
    uint64_t first, end;
    if (!entry_pc(t, 0, &first) || !entry_pc(t, t->nfunc, &end) || pc < first || pc >= end)
        return -ENOENT;
    uint64_t lo = 0, hi = t->nfunc; /* last entry with pc <= target */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2, mpc;
        if (!entry_pc(t, mid, &mpc))
            return -ENOENT;
        if (mpc <= pc)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t foff, entry, nameoff, pcfile, pcln, cuoff;
    if (!get(t, t->funcdata + (2 * lo + 1) * t->fieldsize, (uint32_t)t->fieldsize, &foff))
        return -ENOENT;
    uint64_t f = t->funcdata + foff;
    uint32_t e = t->version == V118 ? 4 : t->ptrsize; /* size of the entry field */
    if (!get(t, f, e, &entry) || !get(t, f + e, 4, &nameoff) || !get(t, f + e + 16, 4, &pcfile) ||
        !get(t, f + e + 20, 4, &pcln) || !get(t, f + e + 28, 4, &cuoff))
        return -ENOENT;
    if (t->version == V118)
        entry += t->text_start;
    const char *name = str_at(t, t->funcnametab + nameoff);
    if (!name || !*name)
        return -ENOENT;
    *func = name;
    *file = NULL;
    *line = 0;
    int64_t l = pcvalue(t, (uint32_t)pcln, entry, pc);
    if (l > 0)
        *line = l;
    int64_t fno = pcvalue(t, (uint32_t)pcfile, entry, pc);
    uint64_t fnoff;
    if (fno >= 0 && get(t, t->cutab + (cuoff + (uint64_t)fno) * 4, 4, &fnoff) &&
        fnoff != 0xffffffffu)
        *file = str_at(t, t->filetab + fnoff);
    return 0;
}

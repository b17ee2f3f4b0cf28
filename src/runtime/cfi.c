/* cfi.c — a table-driven x86-64 and aarch64 stack walk from .eh_frame (see cfi.h). */
#include "cfi.h"

#include "arena.h"
#include "pltstub.h"
#include "rt.h"

#include "base/hash.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#ifndef CPROF_NO_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

/* DWARF register numbers: the frame pointer, the stack pointer and the
 * return address column; OFF_MIN: the lowest offset from the CFA at which
 * a rule may read (x86-64 saves the return address at CFA-8 and rbp just
 * below; aarch64 saves x29 and x30 at the bottom of the whole frame);
 * USER_TOP: above the highest user-space address. */
#if defined(__x86_64__)
#define DW_FP 6   /* rbp */
#define DW_SP 7   /* rsp */
#define DW_RA 16  /* the return address column */
#define OFF_MIN (-128)
#define USER_TOP (1ull << 47)
#elif defined(__aarch64__)
#define DW_FP 29  /* x29 */
#define DW_SP 31  /* sp */
#define DW_RA 30  /* x30, the link register */
#define OFF_MIN INT16_MIN
#define USER_TOP (1ull << 48)
#else
#error "cfi.c: unsupported architecture"
#endif

#define TABLE_BITS 15
#define TABLE_SIZE (1u << TABLE_BITS)
#define PROBES 32
/* No real frame is larger; a CFA further away means a wrong rule. */
#define MAX_FRAME (1u << 24)

/* not modelled / a frame / RA undefined / RA still in the link register
 * (aarch64's x30: only an interrupted frame, cfi_walk_context_sigsafe) */
enum { RULE_NONE, RULE_STEP, RULE_LAST, RULE_LEAF };

/* A frame's rule, 8 bytes: read and written as one word. fp is the frame
 * pointer (rbp, x29), sp the stack pointer. */
typedef struct {
    uint32_t cfa_off : 24; /* CFA = (cfa_fp ? fp : sp) + cfa_off; < MAX_FRAME */
    uint32_t kind : 7;     /* RULE_* */
    uint32_t cfa_fp : 1;
    int16_t ra_off;        /* return address at CFA + ra_off */
    int16_t fp_off;        /* fp saved at CFA + fp_off; 0: unchanged */
} rule_t;
_Static_assert(sizeof(rule_t) == 8, "a rule is one word");

/* A kept rule. Written: key to 1, rule, state (release), key (release);
 * read: key, state (acquire), rule. An entry kept under another state is
 * stale, free to take for any pc. */
typedef struct {
    uint64_t key;   /* the pc; 0 empty, 1 being written */
    uint64_t state; /* loader_state when the rule was computed */
    rule_t rule;
} entry_t;

/* A thread's own rule: all of its thread's near[] are of near_state. */
typedef struct {
    uint64_t pc;
    rule_t rule;
} near_t;

static entry_t *table;
/* Bits 16-63: module unloads seen (rules are kept under this); bits 0-15:
 * dlcloses in progress. A walk uses kept rules only when none is in
 * progress, and is kept only if this did not move while it ran. */
static uint64_t loader_state;
#define CLOSING_MASK 0xffffu
#define UNLOAD_ONE (1ull << 16)
static unsigned long long known_subs; /* the loader's dlpi_subs, last seen */
static int (*next_dlclose)(void *);

/* --- the last walk of each thread ------------------------------------- */

/* One frame of a walk: its state (with its pc, kept apart), and the stack
 * words its rule read (the caller's return address and, if saved, fp)
 * with their values.
 *
 * fp matters to a walk only where a rule takes the CFA from it. In code
 * built without frame pointers it is a general register, and the fp a
 * frame saved changes with its caller's variables: when no frame from
 * one out takes its CFA from fp, a walk joins the last one there whatever
 * its fp, and checks only the return addresses. */
typedef struct {
    uintptr_t sp, bp;
    /* Each points at a word: fp not read, bp_at is ra_at; nothing read
     * (the outermost frame), both are zero_word. */
    uintptr_t ra_at, ra_val, bp_at, bp_val;
} frame_t;

static const uintptr_t zero_word;
/* After the last walk's frames (END_FRAMES of them: unchanged reads them
 * by blocks), and for a walk without a slot: no frame of a walk lies at
 * or above it, and what it read is unchanged. */
static const frame_t end_frame = {.sp = UINTPTR_MAX,
                                  .ra_at = (uintptr_t)&zero_word,
                                  .bp_at = (uintptr_t)&zero_word};
#define CHECK_BLOCK 4
#define END_FRAMES CHECK_BLOCK

/* A thread's near[] (below): 512 rules, 8 KiB. 128 (2 KiB, fewer lines
 * for the program to evict between samples) missed twice as often on
 * python3 at rate 1: lookup 11.5 -> 22.3 M instructions, cfi_walk_frame
 * 305.3 -> 319.4 M (callgrind, pywork.py 20000 under setarch -R). */
#define NEAR_BITS 9

/* A thread's last walk, and room for the one being made. The last walk's
 * n frames lie at the end of the kept arrays (indices max_frames - n to
 * max_frames - 1, leaf first), so its outer part, where the next walk
 * usually joins it, stays where it is: that walk writes only its own new
 * frames, just before the part it reuses, and copies none of the rest.
 *
 * Keeping the walk before the last one too did not pay (callgrind, rate
 * 1, scale 0.2). Joined at the best of the last k walks (pc and sp of
 * every frame out equal), the frames walked would fall, k = 2 / 4 / 8:
 * xmllint 1.11 M -> 0.52 / 0.25 / 0.23 M, jq 0.38 -> 0.24 / 0.16 / 0.09,
 * python3 1.36 -> 1.01 / 0.96 / 0.91 (1.16 at k = 1: fp differs),
 * sqlite3 2.82 -> 2.63 / 2.46 / 2.32 (its sites share the leaf frames,
 * sqlite3Malloc's chain, and differ above them: no join there). Built
 * for k = 2, exact (the last walk's frames below a join copied aside
 * with their hashes, joined where their words and the last walk's from
 * the link out are unchanged; the part taken copied back): xmllint
 * joined it in 185 K of 343 K walks, the walk's own code 152.9 -> 109.7
 * M, but the copies and the second check cost 105 M: totals xmllint
 * 930.1 -> 972.7 M, sqlite3 1871.7 -> 1988.7, python3 1619.2 -> 1802.2,
 * jq 1651.9 -> 1671.9. Even with copies at their bytes' cost it would
 * gain ~1% on xmllint and lose on sqlite3, which copies at every walk. */
typedef struct {
    int claimed;
    int busy; /* walking: a nested walk (none is expected) goes without */
    unsigned walks; /* every SUBS_EVERY-th looks for unloads cprof missed */
    int n;          /* frames of the last walk, 0: none */
    bool whole;     /* it ended at the stack's end (not at max, not given up) */
    int fp_hi;      /* fp matters in the last walk's frames up to this index
                     * (of the kept arrays): the outermost whose rule takes
                     * the CFA from fp, or one beyond it, -1 if none */
    uint64_t state; /* the loader_state it was walked under */
    uintptr_t next[3]; /* not whole: the state (pc, sp, fp) of the frame
                        * after the last, where a walk that reuses this
                        * one to its end goes on */
    frame_t *kf;      /* the last walk's frames (and end_frames after them), */
    uintptr_t *kpcs;  /* their pcs, */
    uint64_t *khash;  /* hash_pcs of the walk from each frame out */
    uint64_t *ktag;   /* the holders' tags of its frames (cfi_stack_t) */
    void *memo;       /* CFI_MEMO_BYTES for the holder (cfi_stack_t) */
    frame_t *fresh;   /* the frames of the walk being made, from index 0 */
    /* the rules this thread used last, direct-mapped: the shared table's
     * lines are rarely in this core's cache */
    uint64_t near_state;
    near_t near[1u << NEAR_BITS];
} slot_t;

#define NSLOTS 64
static slot_t *slots;
static int max_frames;
static pthread_key_t slot_key;
static __thread slot_t *my_slot __attribute__((tls_model("initial-exec")));
/* The slot went back at thread exit: later walks (other exit destructors
 * allocating) go without one, or it would never be given back. */
static __thread bool slot_released __attribute__((tls_model("initial-exec")));

static void release_slot(void *arg)
{
    slot_t *s = arg;
    my_slot = NULL;
    slot_released = true;
    __atomic_store_n(&s->claimed, 0, __ATOMIC_RELEASE);
}

/* thread_slot's first call on a thread (and each call of a thread without
 * a slot): claims one. */
static __attribute__((noinline)) slot_t *claim_slot(void)
{
    if (!__atomic_load_n(&slots, __ATOMIC_ACQUIRE) || rt_self.exited || rt_self.locks ||
        slot_released)
        return my_slot;
    for (int i = 0; i < NSLOTS; i++) {
        int expected = 0;
        if (!__atomic_load_n(&slots[i].claimed, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&slots[i].claimed, &expected, 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            slot_t *s = &slots[i];
            s->n = 0;
            s->busy = 0; /* a walk left by siglongjmp in its last owner */
            /* Released by the key's destructor when the thread exits. */
            if (pthread_setspecific(slot_key, s) != 0) {
                __atomic_store_n(&s->claimed, 0, __ATOMIC_RELEASE);
                return NULL;
            }
            return my_slot = s;
        }
    }
    return NULL;
}

/* This thread's slot, claimed at its first walk; NULL when none is free
 * (the walk then goes without), or after the thread's exit hook ran. */
static inline slot_t *thread_slot(void)
{
    return RT_LIKELY(my_slot) ? my_slot : claim_slot();
}

/* Whether the stack words the last walk read from its frame at index i
 * (of the kept arrays) out still hold what they held, the fp values read
 * only if fp is wanted: then a walk that reaches frame i's state (its fp
 * too if wanted) goes the same way. By blocks of frames, one test each
 * (the end_frames after the last make whole blocks): a candidate whose
 * own return address changed (another call site) fails at its first. */
static bool unchanged(const slot_t *s, int i, bool fp)
{
    const frame_t *f = s->kf;
#define RA(k) (*(const uintptr_t *)f[i + (k)].ra_at ^ f[i + (k)].ra_val)
#define BP(k) (*(const uintptr_t *)f[i + (k)].bp_at ^ f[i + (k)].bp_val)
    _Static_assert(CHECK_BLOCK == 4, "a block is the four frames below");
    if (!fp) {
        for (; i < max_frames; i += CHECK_BLOCK)
            if (RA(0) | RA(1) | RA(2) | RA(3))
                return false;
        return true;
    }
    for (; i < max_frames; i += CHECK_BLOCK)
        if (RA(0) | BP(0) | RA(1) | BP(1) | RA(2) | BP(2) | RA(3) | BP(3))
            return false;
    return true;
#undef RA
#undef BP
}

/* --- reading .eh_frame ------------------------------------------------ */

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    int shift = 0;
    uint8_t b = 0x80;
    while (*p < end && shift < 64 && (b & 0x80)) {
        b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    }
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer; false for the encodings not handled
 * (indirect, text- or function-relative, aligned). datarel is relative to
 * the .eh_frame_hdr (its only use). */
static bool encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uintptr_t datarel,
                    uintptr_t *out)
{
    const uint8_t *at = *p;
    uint64_t v;
    if (enc == 0xff) /* DW_EH_PE_omit */
        return false;
    switch (enc & 0x0f) {
    case 0x00: /* absptr */
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */
        if (end - at < 8)
            return false;
        memcpy(&v, at, 8);
        *p += 8;
        break;
    case 0x03: /* udata4 */
    case 0x0b: { /* sdata4 */
        uint32_t u;
        if (end - at < 4)
            return false;
        memcpy(&u, at, 4);
        v = (enc & 0x0f) == 0x0b ? (uint64_t)(int64_t)(int32_t)u : u;
        *p += 4;
        break;
    }
    case 0x01: v = uleb(p, end); break;
    case 0x09: v = (uint64_t)sleb(p, end); break;
    default: return false;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += (uintptr_t)at; break; /* pcrel */
    case 0x30: v += datarel; break;       /* datarel */
    default: return false;
    }
    *out = (uintptr_t)v;
    return true;
}

typedef struct {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    bool has_aug; /* 'z': FDEs carry an augmentation length */
    const uint8_t *insns, *end;
} cie_t;

static bool parse_cie(const uint8_t *p, cie_t *c)
{
    uint32_t len;
    memcpy(&len, p, 4);
    if (len == 0 || len == 0xffffffffu)
        return false;
    const uint8_t *end = p + 4 + len;
    p += 8; /* length, CIE id */
    uint8_t version = *p++;
    const char *aug = (const char *)p;
    size_t alen = strnlen(aug, (size_t)(end - p));
    p += alen + 1;
    if (p > end || version < 1 || version > 4 || strstr(aug, "eh"))
        return false;
    if (version == 4)
        p += 2; /* address size, segment selector size */
    c->code_align = uleb(&p, end);
    c->data_align = sleb(&p, end);
    uint64_t ra = version == 1 ? *p++ : uleb(&p, end);
    if (ra != DW_RA)
        return false;
    c->fde_enc = 0; /* absptr */
    c->has_aug = aug[0] == 'z';
    if (c->has_aug) {
        uint64_t n = uleb(&p, end);
        const uint8_t *data = p, *data_end = p + n;
        if (data_end > end)
            return false;
        for (const char *a = aug + 1; *a; a++) {
            if (*a == 'R') {
                c->fde_enc = *data++;
            } else if (*a == 'P') {
                uintptr_t ignored;
                uint8_t enc = *data++;
                /* The personality routine is not followed, only skipped:
                 * indirect is fine here. */
                if (!encoded(&data, data_end, enc & 0x7f, 0, &ignored))
                    return false;
            } else if (*a == 'L') {
                data++;
#if defined(__aarch64__)
            } else if (*a == 'B') {
                /* return addresses signed with the B key: stripped alike */
#endif
            } else {
                return false; /* 'S' (a signal frame) and anything unknown */
            }
        }
        p = data_end;
    } else if (aug[0]) {
        return false;
    }
    c->insns = p;
    c->end = end;
    return p <= end;
}

/* The rules of the registers a walk needs, as the CFA program sets them. */
typedef struct {
    uint8_t cfa_reg;
    int64_t cfa_off;
    int8_t ra_kind, fp_kind; /* 0 unchanged, 1 at CFA + off, 2 undefined */
    int64_t ra_off, fp_off;
} row_t;

#define STATE_STACK 8

/* Runs a CFA program up to the row that covers target; false if it does
 * something not modelled. */
static bool run(const cie_t *c, const uint8_t *p, const uint8_t *end, uintptr_t loc,
                uintptr_t target, row_t *row, const row_t *initial)
{
    row_t saved[STATE_STACK];
    int nsaved = 0;
    while (p < end) {
        uint8_t op = *p++;
        uint64_t reg = 0, delta = 0;
        int64_t off = 0;
        bool set = false, restore = false;
        switch (op >> 6) {
        case 1: delta = op & 0x3f; goto advance;
        case 2:
            reg = op & 0x3f;
            off = (int64_t)uleb(&p, end) * c->data_align;
            set = true;
            break;
        case 3: reg = op & 0x3f; restore = true; break;
        default:
            switch (op) {
            case 0x00: continue; /* nop */
            case 0x02: delta = *p++; goto advance;
            case 0x03: { uint16_t d; memcpy(&d, p, 2); p += 2; delta = d; goto advance; }
            case 0x04: { uint32_t d; memcpy(&d, p, 4); p += 4; delta = d; goto advance; }
            case 0x05:
                reg = uleb(&p, end);
                off = (int64_t)uleb(&p, end) * c->data_align;
                set = true;
                break;
            case 0x11:
                reg = uleb(&p, end);
                off = sleb(&p, end) * c->data_align;
                set = true;
                break;
            case 0x06: reg = uleb(&p, end); restore = true; break;
            case 0x07: /* undefined */
                reg = uleb(&p, end);
                if (reg == DW_RA)
                    row->ra_kind = 2;
                else if (reg == DW_FP)
                    row->fp_kind = 2;
                continue;
            case 0x08: /* same value */
                reg = uleb(&p, end);
                if (reg == DW_RA)
                    return false;
                if (reg == DW_FP)
                    row->fp_kind = 0;
                continue;
            case 0x09: /* register: in another register */
                reg = uleb(&p, end);
                uleb(&p, end);
                if (reg == DW_RA || reg == DW_FP)
                    return false;
                continue;
            case 0x0a:
                if (nsaved == STATE_STACK)
                    return false;
                saved[nsaved++] = *row;
                continue;
            case 0x0b:
                if (!nsaved)
                    return false;
                *row = saved[--nsaved];
                continue;
            case 0x0c:
                row->cfa_reg = (uint8_t)uleb(&p, end);
                row->cfa_off = (int64_t)uleb(&p, end);
                continue;
            case 0x12:
                row->cfa_reg = (uint8_t)uleb(&p, end);
                row->cfa_off = sleb(&p, end) * c->data_align;
                continue;
            case 0x0d: row->cfa_reg = (uint8_t)uleb(&p, end); continue;
            case 0x0e: row->cfa_off = (int64_t)uleb(&p, end); continue;
            case 0x13: row->cfa_off = sleb(&p, end) * c->data_align; continue;
            case 0x10: /* expression: fine for a register the walk ignores */
                reg = uleb(&p, end);
                if (reg == DW_RA || reg == DW_FP)
                    return false;
                p += uleb(&p, end);
                continue;
            case 0x14: case 0x15: /* val_offset */
                reg = uleb(&p, end);
                if (reg == DW_RA || reg == DW_FP)
                    return false;
                uleb(&p, end);
                continue;
            case 0x16: /* val_expression */
                reg = uleb(&p, end);
                if (reg == DW_RA || reg == DW_FP)
                    return false;
                p += uleb(&p, end);
                continue;
            case 0x2e: uleb(&p, end); continue; /* GNU_args_size */
#if defined(__aarch64__)
            case 0x2d: continue; /* AARCH64_negate_ra_state: x30 signed or
                                  * not; every return address read is
                                  * stripped of its signature (strip_pac) */
#endif
            default: return false; /* set_loc, def_cfa_expression, ... */
            }
        }
        if (set) {
            if (reg == DW_RA) {
                row->ra_kind = 1;
                row->ra_off = off;
            } else if (reg == DW_FP) {
                row->fp_kind = 1;
                row->fp_off = off;
            }
        } else if (restore) {
            if (!initial)
                return false;
            if (reg == DW_RA) {
                row->ra_kind = initial->ra_kind;
                row->ra_off = initial->ra_off;
            } else if (reg == DW_FP) {
                row->fp_kind = initial->fp_kind;
                row->fp_off = initial->fp_off;
            }
        }
        continue;
    advance:
        loc += delta * c->code_align;
        if (loc > target)
            return true;
    }
    return true;
}

typedef struct {
    uintptr_t pc;
    const uint8_t *hdr; /* the module's .eh_frame_hdr */
    uintptr_t seg_lo, seg_hi; /* the readable PT_LOAD holding pc; 0, 0 if none */
    unsigned long long subs;
} find_t;

/* Whether dl_iterate_phdr's info carries dlpi_subs (glibc >= 2.4 does). */
static bool has_subs(size_t size)
{
    return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(unsigned long long);
}

/* Seen the loader's unload count subs: if it moved (an unload cprof's
 * dlclose did not see, or one it is in), the kept rules, cfi's and
 * libunwind's, are dropped. */
static void note_subs(unsigned long long subs)
{
    if (subs == __atomic_load_n(&known_subs, __ATOMIC_RELAXED) ||
        __atomic_exchange_n(&known_subs, subs, __ATOMIC_RELAXED) == subs)
        return;
    __atomic_fetch_add(&loader_state, UNLOAD_ONE, __ATOMIC_SEQ_CST);
#ifndef CPROF_NO_LIBUNWIND
    unw_flush_cache(unw_local_addr_space, 0, 0);
#endif
}

static int first_subs(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (has_subs(size))
        *(unsigned long long *)arg = info->dlpi_subs;
    return 1;
}

static void check_subs(void)
{
    unsigned long long subs = __atomic_load_n(&known_subs, __ATOMIC_RELAXED);
    rt_iterate_phdr(first_subs, &subs);
    note_subs(subs);
}

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    find_t *f = arg;
    if (has_subs(size))
        f->subs = info->dlpi_subs;
    const uint8_t *hdr = NULL;
    bool inside = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && f->pc >= lo && f->pc < lo + ph->p_memsz) {
            inside = true;
            if (ph->p_flags & PF_R) {
                f->seg_lo = lo;
                f->seg_hi = lo + ph->p_filesz;
            }
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            hdr = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        }
    }
    if (!inside)
        return 0;
    f->hdr = hdr;
    return 1;
}

/* The rule at target, which no FDE covers: on aarch64 an interrupted pc
 * (4-aligned: a return address's target, ra - 1, is not) in a PLT stub
 * (pltstub.h) is a leaf's first instructions; anything else is not
 * modelled. The words read lie in the module's readable segment. */
static rule_t no_fde(const find_t *f, uintptr_t target)
{
#if defined(__aarch64__)
    enum { BEFORE = 4, AFTER = 3 }; /* words: as far as a stub reaches */
    if (target % 4 == 0 && f->seg_lo <= target && target + 4 <= f->seg_hi) {
        uintptr_t lo = target - f->seg_lo >= 4 * BEFORE ? target - 4 * BEFORE : f->seg_lo;
        uintptr_t hi = f->seg_hi - target >= 4 * (AFTER + 1) ? target + 4 * (AFTER + 1) : f->seg_hi;
        lo += (target - lo) % 4;
        int cfa = plt_stub_cfa_sigsafe((const uint32_t *)lo, (hi - lo) / 4, (target - lo) / 4);
        if (cfa >= 0)
            return (rule_t){.kind = RULE_LEAF, .cfa_off = (uint32_t)cfa};
    }
#else
    (void)f;
    (void)target;
#endif
    return (rule_t){.kind = RULE_NONE};
}

/* The rule of the frame whose return address is pc. */
static rule_t compute(uintptr_t pc)
{
    rule_t none = {.kind = RULE_NONE};
    find_t f = {.pc = pc - 1, .subs = __atomic_load_n(&known_subs, __ATOMIC_RELAXED)};
    int found = rt_iterate_phdr(find_module, &f);
    note_subs(f.subs);
    if (!found)
        return none;
    if (!f.hdr)
        return no_fde(&f, pc - 1);
    const uint8_t *h = f.hdr, *p = h + 4;
    /* version 1; the table sorted by pc in datarel sdata4 pairs */
    if (h[0] != 1 || h[3] != 0x3b)
        return none;
    uintptr_t eh_frame, count;
    if (!encoded(&p, p + 8, h[1], (uintptr_t)h, &eh_frame) ||
        !encoded(&p, p + 8, h[2], (uintptr_t)h, &count) || !count)
        return none;
    (void)eh_frame;
    const int32_t *tab = (const int32_t *)p;
    uintptr_t target = pc - 1;
    size_t lo = 0, hi = count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)h + (intptr_t)tab[2 * mid] <= target)
            lo = mid;
        else
            hi = mid;
    }
    if ((uintptr_t)h + (intptr_t)tab[2 * lo] > target)
        return no_fde(&f, target);
    const uint8_t *fde = h + tab[2 * lo + 1];
    uint32_t len;
    int32_t cie_off;
    memcpy(&len, fde, 4);
    memcpy(&cie_off, fde + 4, 4);
    if (len == 0 || len == 0xffffffffu || cie_off == 0)
        return none;
    const uint8_t *end = fde + 4 + len;
    cie_t c;
    if (!parse_cie(fde + 4 - cie_off, &c))
        return none;
    p = fde + 8;
    uintptr_t start, range;
    if (!encoded(&p, end, c.fde_enc, 0, &start) ||
        !encoded(&p, end, c.fde_enc & 0x0f, 0, &range))
        return none;
    if (target < start || target - start >= range)
        return no_fde(&f, target);
    if (c.has_aug) {
        uint64_t n = uleb(&p, end);
        p += n;
    }
    row_t row = {.cfa_reg = DW_SP};
    if (!run(&c, c.insns, c.end, start, (uintptr_t)-1, &row, NULL))
        return none;
    row_t initial = row;
    if (!run(&c, p, end, start, target, &row, &initial))
        return none;
    if (row.ra_kind == 2)
        return (rule_t){.kind = RULE_LAST};
#if defined(__aarch64__)
    /* x30 not saved (yet): a leaf, or a prologue before its store. The
     * CFA may be sp itself there (at the first instruction). */
    if (row.ra_kind == 0) {
        if (row.fp_kind == 2 || (row.cfa_reg != DW_SP && row.cfa_reg != DW_FP) ||
            row.cfa_off < 0 || row.cfa_off >= (int64_t)MAX_FRAME ||
            (row.fp_kind == 1 && (row.fp_off < OFF_MIN || row.fp_off > -8 ||
                                  (row.cfa_reg == DW_SP && row.cfa_off + row.fp_off < 0))))
            return none;
        return (rule_t){.kind = RULE_LEAF,
                        .cfa_off = (uint32_t)row.cfa_off,
                        .cfa_fp = row.cfa_reg == DW_FP,
                        .fp_off = row.fp_kind == 1 ? (int16_t)row.fp_off : 0};
    }
#endif
    /* What is read lies at CFA+OFF_MIN to CFA-8, and for a CFA relative
     * to sp not below sp (cfi_walk's bounds rely on both). A return
     * address left in aarch64's x30 (a leaf) is never a frame of a walk
     * that starts in cfi_walk: every caller above it made a call, so saved
     * x30 first; a rule saying otherwise is not modelled. */
    int64_t lowest = row.fp_kind == 1 && row.fp_off < row.ra_off ? row.fp_off : row.ra_off;
    if (row.ra_kind != 1 || row.fp_kind == 2 ||
        (row.cfa_reg != DW_SP && row.cfa_reg != DW_FP) || row.cfa_off <= 0 ||
        row.cfa_off >= (int64_t)MAX_FRAME || row.ra_off < OFF_MIN || row.ra_off > -8 ||
        (row.fp_kind == 1 && (row.fp_off < OFF_MIN || row.fp_off > -8)) ||
        (row.cfa_reg == DW_SP && row.cfa_off + lowest < 0))
        return none;
    return (rule_t){.kind = RULE_STEP,
                    .cfa_off = (uint32_t)row.cfa_off,
                    .cfa_fp = row.cfa_reg == DW_FP,
                    .ra_off = (int16_t)row.ra_off,
                    .fp_off = row.fp_kind == 1 ? (int16_t)row.fp_off : 0};
}

/* --- the rule table --------------------------------------------------- */

static uint32_t hash_pc(uintptr_t pc, int bits)
{
    return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* A return address that can be a key: a user-space address, not one of
 * the table's marks. */
static bool plausible(uintptr_t pc)
{
    return pc >= 4096 && pc < USER_TOP;
}

/* The rule of pc under the loader state, kept or computed (and kept in
 * the first free or stale entry of its probe run). */
static rule_t lookup(uintptr_t pc, uint64_t state)
{
    if (!plausible(pc))
        return (rule_t){.kind = RULE_NONE};
    entry_t *take = NULL;
    uint64_t take_key = 0;
    uint32_t i = hash_pc(pc, TABLE_BITS);
    for (int n = 0; n < PROBES; n++, i = (i + 1) & (TABLE_SIZE - 1)) {
        entry_t *e = &table[i];
        uint64_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
        if (k == 1)
            continue;
        bool current = k && __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == state;
        if (k == pc && current) {
            rule_t r;
            __atomic_load(&e->rule, &r, __ATOMIC_RELAXED);
            return r;
        }
        if (!take && !current) {
            take = e;
            take_key = k;
        }
        if (!k)
            break;
    }
    rule_t r = compute(pc);
    /* Not kept if the loader state moved in compute: the walk is dropped. */
    if (take && state == __atomic_load_n(&loader_state, __ATOMIC_ACQUIRE) &&
        __atomic_compare_exchange_n(&take->key, &take_key, 1, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
        __atomic_store(&take->rule, &r, __ATOMIC_RELAXED);
        __atomic_store_n(&take->state, state, __ATOMIC_RELEASE);
        __atomic_store_n(&take->key, pc, __ATOMIC_RELEASE);
    }
    return r;
}

/* lookup through the thread's own few rules. The rule is read where it
 * lies: GCC takes a copy's bit-fields apart in some 35 instructions a
 * frame, where a field read from memory is a load and a mask. Its entry's
 * load is where most of the walk's time goes on sqlite3 at rate 1 (21% of
 * cfi_walk_frame's samples: the program evicts near[] between samples);
 * prefetching the next frame's entry as soon as its pc is read, before the
 * join test, measured no faster (perf samples / libsqlite3's, medians of
 * 7: 2.213 against 2.221, noise +-0.05). */
static const rule_t *lookup_near(slot_t *s, uintptr_t pc, uint64_t state)
{
    near_t *e = &s->near[hash_pc(pc, NEAR_BITS)];
    if (e->pc != pc) {
        e->rule = lookup(pc, state);
        e->pc = pc;
    }
    return &e->rule;
}

/* In a child after fork only the forking thread lives: the other threads'
 * slots are free. */
static void fork_child(void)
{
    if (!slots)
        return;
    for (int i = 0; i < NSLOTS; i++)
        if (&slots[i] != my_slot)
            slots[i].claimed = 0;
}

void cfi_init(int max)
{
    if (!next_dlclose)
        next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    if (!max_frames && pthread_key_create(&slot_key, release_slot) == 0) {
        max_frames = max;
        pthread_atfork(NULL, NULL, fork_child);
        check_subs();
    }
}

/* Maps the rule table and the slots at the first walk, not at start: the
 * heap profile's own tables come first under a tight CPROF_MEMORY_LIMIT.
 * Lock-free: of two threads mapping at once, one keeps its mapping. */
static bool map_tables(void)
{
    static int failed;
    if (__atomic_load_n(&failed, __ATOMIC_RELAXED) || !max_frames)
        return false;
    /* per slot: the kept frames, pcs, hashes and tags, the fresh frames,
     * and the holder's memo (all memos first, page-aligned, after the
     * table) */
    size_t frames_size = (size_t)max_frames * sizeof(frame_t);
    size_t slot_size = 2 * frames_size + END_FRAMES * sizeof(frame_t) +
                       (size_t)max_frames * (sizeof(uintptr_t) + 2 * sizeof(uint64_t));
    size_t memo_at = TABLE_SIZE * sizeof(entry_t);
    size_t size = memo_at + NSLOTS * (CFI_MEMO_BYTES + sizeof(slot_t) + slot_size);
    char *p = arena_map(size);
    if (!p) {
        if (!__atomic_exchange_n(&failed, 1, __ATOMIC_RELAXED))
            rt_warn("cannot map %zu bytes for the cfi unwinder's tables (CPROF_MEMORY_LIMIT); "
                    "libunwind unwinds instead",
                    size);
        return false;
    }
    slot_t *s = (slot_t *)(p + memo_at + NSLOTS * CFI_MEMO_BYTES);
    for (int i = 0; i < NSLOTS; i++) {
        s[i].memo = p + memo_at + (size_t)i * CFI_MEMO_BYTES;
        char *w = (char *)(s + NSLOTS) + (size_t)i * slot_size;
        s[i].kf = (frame_t *)w;
        for (int k = 0; k < END_FRAMES; k++)
            s[i].kf[max_frames + k] = end_frame;
        s[i].fresh = s[i].kf + max_frames + END_FRAMES;
        s[i].kpcs = (uintptr_t *)(s[i].fresh + max_frames);
        s[i].khash = (uint64_t *)(s[i].kpcs + max_frames);
        s[i].ktag = s[i].khash + max_frames;
    }
    entry_t *expected = NULL;
    if (!__atomic_compare_exchange_n(&table, &expected, (entry_t *)p, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        arena_unmap(p, size);
        return true;
    }
    __atomic_store_n(&slots, s, __ATOMIC_RELEASE);
    return true;
}

/* A module unloaded may be followed by another at its address: rules kept
 * for the old code must not be used. While dlclose runs no kept rule is;
 * after it, if the loader counts an unload, none kept before. */
RT_EXPORT int dlclose(void *handle)
{
    if (!next_dlclose)
        next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    __atomic_fetch_add(&loader_state, 1, __ATOMIC_SEQ_CST);
    int rc = next_dlclose ? next_dlclose(handle) : -1;
    check_subs();
    __atomic_fetch_sub(&loader_state, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* The caller's return address, stack pointer after the return, and frame
 * pointer: the registers the first frame of a walk needs. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".p2align 4\n"
        ".type cfi_regs, @function\n"
        "cfi_regs:\n"
        ".cfi_startproc\n"
        "  movq (%rsp), %rax\n"
        "  movq %rax, 0(%rdi)\n"
        "  leaq 8(%rsp), %rax\n"
        "  movq %rax, 8(%rdi)\n"
        "  movq %rbp, 16(%rdi)\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size cfi_regs, .-cfi_regs\n");
#elif defined(__aarch64__)
/* A leaf: the return address is still in x30, sp is the caller's. */
__asm__(".text\n"
        ".p2align 4\n"
        ".type cfi_regs, %function\n"
        "cfi_regs:\n"
        ".cfi_startproc\n"
        "  str x30, [x0]\n"
        "  mov x1, sp\n"
        "  str x1, [x0, #8]\n"
        "  str x29, [x0, #16]\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size cfi_regs, .-cfi_regs\n");
#endif
void cfi_regs(uintptr_t regs[3]);

/* A return address as read from the stack, without the pointer
 * authentication code that aarch64's pac-ret puts in its top bits (and
 * the top byte, which user-space addresses never use). */
static inline uintptr_t strip_pac(uintptr_t ra)
{
#if defined(__aarch64__)
    return ra & (uintptr_t)(USER_TOP - 1);
#else
    return ra;
#endif
}

#define SUBS_EVERY 256

/* The walk from the frame whose return address, stack pointer after the
 * return and frame pointer are regs. Inlined in its two entry points: one
 * call less on every sampled allocation. */
static inline __attribute__((always_inline)) int walk(const uintptr_t regs[3], uintptr_t *pcs,
                                                      uint64_t *hashes, int max, uintptr_t lo,
                                                      uintptr_t hi, cfi_stack_t *out)
{
    out->reused = 0;
    out->held = NULL;
    out->tags = NULL;
    out->memo = NULL;
    if (RT_UNLIKELY(!__atomic_load_n(&table, __ATOMIC_ACQUIRE)) && !map_tables())
        return -1;
    uintptr_t pc = regs[0], sp = regs[1], bp = regs[2];
    /* Another stack (sigaltstack, makecontext, a coroutine's): libunwind. */
    if (sp < lo || sp >= hi)
        return -1;
    slot_t *s = max <= max_frames ? thread_slot() : NULL;
    if (s && s->busy)
        s = NULL;
    if (s) {
        s->busy = 1;
        /* A signal handler's walk on this thread must see busy set
         * before this one touches the slot: keep the compiler from
         * sinking the store below the slot's reads. */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (RT_UNLIKELY(++s->walks % SUBS_EVERY == 0))
            check_subs();
    }
    uint64_t state = __atomic_load_n(&loader_state, __ATOMIC_ACQUIRE);
    if (s && RT_UNLIKELY(s->near_state != state)) {
        memset(s->near, 0, sizeof(s->near));
        s->near_state = state;
    }
    /* The last walk's frames: kf[j] from j to end - 1, then end_frame. */
    int end = s ? max_frames : 0;
    const frame_t *kf = s ? s->kf : &end_frame;
    /* the first of the last walk's frames not below this frame's sp (an
     * index instead of the pointer, saving the division of kj - kf, cost
     * more: cfi_walk_frame 208.9 -> 216.8 M instructions, callgrind, rate
     * 1, python3 pywork.py 20000 under setarch -R) */
    const frame_t *kj = kf + (s && s->n && s->state == state ? end - s->n : end);
    int n = 0;
    int joined = -1; /* the kf index the walk joined */
    frame_t scratch; /* a walk without a slot keeps no frames */
    /* frames take_at to take_at + take_n - 1 of this walk are the last
     * walk's from take_from on, left in the kept arrays (not in pcs and
     * fresh) until this walk is kept */
    int take_from = 0, take_at = 0, take_n = 0;
    /* the outermost frame whose CFA is fp's, or one beyond it (its index
     * in pcs), -1 if none */
    int fp_new = -1;
    bool whole = true;
    uintptr_t next[3]; /* set where whole is cleared */
    if (state & CLOSING_MASK)
        goto give_up;
    for (;;) {
        if (n == max) {
            whole = false;
            next[0] = pc;
            next[1] = sp;
            next[2] = bp;
            break;
        }
        /* The last walk's frames lie at rising sp: the one at this sp, if
         * its state is this frame's and what it read is unchanged, is
         * where the rest of the last walk can be taken as it is. */
        while (kj->sp < sp)
            kj++;
        int j = (int)(kj - kf);
        bool to_end = false, fp = true;
        if (kj->sp == sp && s->kpcs[j] == pc) {
            /* A walk that goes on from the last one's cut (below) needs
             * all of its state as it was, fp included; one that ends in
             * its frames (joined to the end, or cut at its max there)
             * only the fp that those up to fp_hi read: a frame beyond
             * takes its CFA from sp, whatever fp it gets. */
            to_end = end - j <= max - n && s->whole;
            fp = (!to_end && end - j < max - n) || j <= s->fp_hi;
        }
        if (kj->sp == sp && s->kpcs[j] == pc && (!fp || kj->bp == bp) && unchanged(s, j, fp)) {
            int k = end - j;
            if (to_end) {
                /* Joined to the end: its frames stay where they are. */
                joined = j;
                out->reused = k;
                break;
            }
            /* This walk is cut before the last one's end, or that one was
             * cut at its max (a deep recursion): take k frames (moved into
             * place in the kept arrays at the end, not copied out) and go
             * on from the state of the frame after them (read by the last
             * one taken, so checked unchanged), to the end or to max. The
             * hashes there cover frames of a cut walk: all are made anew. */
            if (k > max - n)
                k = max - n;
            take_from = j;
            take_at = n;
            take_n = k;
            out->reused = k;
            /* The last walk's outermost frame whose CFA is fp's if among
             * those taken, else the last taken if it lies beyond them.
             * (Counting them all as unknown made every walk joined to one
             * that took frames check every fp word to its end: python3's,
             * after each of its deep, cut walks. callgrind, rate 1,
             * pywork.py 20000: cfi_walk_frame 370.4 -> 329.3 M; xmllint
             * and sqlite3 at scale 0.2, no frames taken, +2.7 and +3.9 M
             * from the code around it.) */
            if (s->fp_hi >= j)
                fp_new = n + (s->fp_hi < j + k ? s->fp_hi - j : k - 1);
            n += k;
            const uintptr_t *after =
                j + k < end ? (const uintptr_t[3]){s->kpcs[j + k], kf[j + k].sp, kf[j + k].bp}
                            : s->next;
            pc = after[0];
            sp = after[1];
            bp = after[2];
            kj = kf + end; /* the last walk is not looked at again */
            continue;
        }
        pcs[n] = pc;
        frame_t *f = s ? &s->fresh[n] : &scratch;
        f->sp = sp;
        f->bp = bp;
        n++;
        /* Following the last walk's frames moved to another sp instead
         * (a site called at another depth meets the same pcs: sqlite3's
         * allocation wrappers; exact where the rules take the CFA from
         * sp, beyond fp_hi) did not pay: 1.23 M of sqlite3's 2.82 M new
         * frames at scale 0.2 went that way, each for ~36 instructions
         * against ~45 here, but the test on every other frame and the
         * registers spilled cost more: cfi_walk_frame 416.1 -> 437.5 M,
         * xmllint 192.5 -> 206.5 M (it moved 1% of its frames). */
        rule_t one;
        const rule_t *r = s ? lookup_near(s, pc, state) : (one = lookup(pc, state), &one);
        if (RT_UNLIKELY(r->kind != RULE_STEP)) {
            if (r->kind != RULE_LAST)
                goto give_up;
            f->ra_at = f->bp_at = (uintptr_t)&zero_word;
            f->ra_val = f->bp_val = 0;
            break;
        }
        /* The words read, at CFA+OFF_MIN to CFA-8, must lie in [sp, hi): a
         * wrong rule must not fault the host. Below CFA: cfa <= hi does;
         * above sp: compute's rules relative to sp, checked here those
         * relative to fp. */
        uintptr_t cfa = (r->cfa_fp ? bp : sp) + r->cfa_off;
        if (r->cfa_fp)
            fp_new = n - 1;
        if (cfa <= sp || cfa > hi ||
            (r->cfa_fp && (cfa - sp < (uintptr_t)-r->ra_off ||
                           cfa - sp < (uintptr_t)-(intptr_t)r->fp_off)))
            goto give_up;
        f->ra_at = cfa + (intptr_t)r->ra_off;
        f->ra_val = *(const uintptr_t *)f->ra_at;
        pc = strip_pac(f->ra_val);
        if (r->fp_off) {
            f->bp_at = cfa + (intptr_t)r->fp_off;
            bp = f->bp_val = *(const uintptr_t *)f->bp_at;
        } else {
            f->bp_at = f->ra_at;
            f->bp_val = f->ra_val;
        }
        sp = cfa;
        if (!pc)
            break;
    }
    /* An unload while walking: the rules used may be the old code's. The
     * last walk is changed only after this, so it stays when this walk is
     * given up. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&loader_state, __ATOMIC_RELAXED) != state)
        goto give_up;
    int walked = n; /* frames before the reused part */
    if (!s) {
        /* No last walk joined: every hash is this walk's. */
        uint64_t h = HASH_PCS_SEED;
        for (int i = n - 1; whole && i >= 0; i--)
            hashes[i] = h = hash_pcs_step(h, pcs[i]);
        out->pcs = pcs;
        out->hashes = whole ? hashes : NULL;
        return n;
    }
    /* The new frames go just before the ones joined, or the whole walk at
     * the end of the kept arrays; the caller reads the stack there. The
     * hashes of a walk cut at its max are not made: no caller keeps that
     * stack whole, and a walk joins only a whole one's. (Hashing its first
     * max_depth frames here, reusing the last cut walk's hashes where the
     * frames taken did not move, did not pay: on python3 the cut walks
     * taken in place were a third, 7 M hash instructions saved of 31 M,
     * the walk's own code +6 M, jq +3 M.) */
    int at = joined >= 0 ? joined - walked : max_frames - n;
    if (joined >= 0) {
        n += end - joined;
        if (s->fp_hi < joined)
            s->fp_hi = fp_new >= 0 ? at + fp_new : -1;
    } else {
        s->fp_hi = fp_new >= 0 ? max_frames - n + fp_new : -1;
    }
    int hash_n = walked; /* the frames whose hashes are new */
    if (RT_UNLIKELY(take_n)) {
        /* Often where they are already: a walk as deep as the last one
         * below the frames taken. Moved first, before the new frames may
         * be written over them. */
        int to = at + take_at, rest = take_at + take_n;
        if (to != take_from) {
            memmove(s->kf + to, s->kf + take_from, (size_t)take_n * sizeof(*s->kf));
            memmove(s->kpcs + to, s->kpcs + take_from, (size_t)take_n * sizeof(*s->kpcs));
        }
        memcpy(s->kf + at + rest, s->fresh + rest, (size_t)(n - rest) * sizeof(*s->kf));
        memcpy(s->kpcs + at + rest, pcs + rest, (size_t)(n - rest) * sizeof(*pcs));
        walked = take_at; /* the frames before them */
        hash_n = n;
    }
    uint64_t h = joined >= 0 ? s->khash[joined] : HASH_PCS_SEED;
    if (RT_LIKELY(whole && hash_n == walked)) {
        /* The new frames and pcs kept as the pcs are hashed: no copy of
         * their own. For the frames, memcpy's call took 30 instructions
         * a walk; the walk's total fell by 7 (callgrind, rate 1: python3
         * pywork.py 20000 367.2 -> 364.0 M, xmllint at scale 0.2 192.5
         * -> 191.5 M). */
        for (int i = walked - 1; i >= 0; i--) {
            s->kf[at + i] = s->fresh[i];
            s->kpcs[at + i] = pcs[i];
            s->khash[at + i] = h = hash_pcs_step(h, pcs[i]);
            s->ktag[at + i] = 0;
        }
    } else {
        memcpy(s->kf + at, s->fresh, (size_t)walked * sizeof(*s->kf));
        memcpy(s->kpcs + at, pcs, (size_t)walked * sizeof(*pcs));
        for (int i = hash_n - 1; whole && i >= 0; i--)
            s->khash[at + i] = h = hash_pcs_step(h, s->kpcs[at + i]);
        /* Not joined (a cut walk, or one that took frames, moved): every
         * frame is written. */
        memset(s->ktag + at, 0, (size_t)n * sizeof(*s->ktag));
    }
    s->n = n;
    s->whole = whole;
    if (!whole)
        memcpy(s->next, next, sizeof(next));
    s->state = state;
    out->pcs = s->kpcs + at;
    out->hashes = whole ? s->khash + at : NULL;
    out->tags = whole ? s->ktag + at : NULL;
    out->memo = s->memo;
    out->held = &s->busy; /* until cfi_release */
    return n;
give_up:
    out->reused = 0;
    if (s)
        s->busy = 0;
    return -1;
}

__attribute__((noinline)) int cfi_walk(uintptr_t *pcs, uint64_t *hashes, int max, uintptr_t lo,
                                       uintptr_t hi, cfi_stack_t *out)
{
    uintptr_t regs[3];
    cfi_regs(regs);
    return walk(regs, pcs, hashes, max, lo, hi, out);
}

int cfi_walk_frame(const void *frame, uintptr_t *pcs, uint64_t *hashes, int max, uintptr_t lo,
                   uintptr_t hi, cfi_stack_t *out)
{
#if defined(__x86_64__)
    /* The frame record: the caller's fp, then the return address; the
     * caller's sp is just above them. Read only inside the stack. */
    uintptr_t fp = (uintptr_t)frame;
    out->reused = 0;
    out->held = NULL;
    out->tags = NULL;
    out->memo = NULL;
    if (fp < lo || fp > hi - 16 || (fp & 7))
        return -1;
    const uintptr_t *rec = frame;
    uintptr_t regs[3] = {rec[1], fp + 16, rec[0]};
    return walk(regs, pcs, hashes, max, lo, hi, out);
#else
    (void)frame;
    return cfi_walk(pcs, hashes, max, lo, hi, out);
#endif
}

#if defined(__aarch64__)
int cfi_walk_context_sigsafe(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t lr,
                             uintptr_t *pcs, int max, uintptr_t lo, uintptr_t hi)
{
    if (!__atomic_load_n(&table, __ATOMIC_ACQUIRE) || sp < lo || sp >= hi)
        return -1;
    uint64_t state = __atomic_load_n(&loader_state, __ATOMIC_ACQUIRE);
    if (state & CLOSING_MASK)
        return -1;
    int n = 0;
    for (bool first = true; n < max; first = false) {
        pcs[n++] = pc;
        /* The interrupted pc is an instruction, not a return address: its
         * row is the one at pc itself, which compute finds for pc + 1 (a
         * key no return address has: instructions are 4-byte aligned). */
        rule_t r = lookup(first ? pc + 1 : pc, state);
        if (r.kind == RULE_LAST)
            break;
        uintptr_t cfa = (r.cfa_fp ? fp : sp) + r.cfa_off, ra;
        /* As in cfi_walk: what is read lies in [sp, hi). */
        if (cfa < sp || cfa > hi || (r.fp_off && cfa - sp < (uintptr_t)-(intptr_t)r.fp_off))
            return -1;
        if (r.kind == RULE_LEAF && first) {
            ra = lr;
        } else if (r.kind == RULE_STEP && cfa > sp && cfa - sp >= (uintptr_t)-r.ra_off) {
            ra = *(const uintptr_t *)(cfa + (intptr_t)r.ra_off);
        } else {
            return -1;
        }
        if (r.fp_off)
            fp = *(const uintptr_t *)(cfa + (intptr_t)r.fp_off);
        sp = cfa;
        pc = strip_pac(ra);
        if (!pc)
            break;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&loader_state, __ATOMIC_RELAXED) != state)
        return -1;
    return n;
}

bool cfi_prepare(void)
{
    return __atomic_load_n(&table, __ATOMIC_ACQUIRE) || map_tables();
}
#endif

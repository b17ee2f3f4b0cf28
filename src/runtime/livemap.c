/* livemap.c — live sampled objects (see livemap.h). */
#include "livemap.h"

#include "arena.h"
#include "base/pages.h"
#include "rt.h"

#include <errno.h>
#include <stdlib.h>

#define STRIPE_BITS 6
#define NSTRIPES (1 << STRIPE_BITS)
#define SPARE 64          /* at first, slots past the last window's end */
#define INITIAL_SPAN 256

/* A page's objects take the slots of its window in the order of their
 * offsets in the page, in units of 2^shift bytes: its window is 4096 >>
 * shift slots. Each stripe picks its unit (below, grow_locked). */
#define SHIFT_MIN 2   /* 4 bytes: a window of 1024 slots */
#define SHIFT_FIRST 4 /* 16 bytes, malloc's alignment: 256 slots */
#define SHIFT_MAX 5   /* 32 bytes, glibc's smallest block: 128 slots */
#define WINDOW(shift) (4096u >> (shift))
/* A stripe's unit puts the objects of its pages in at most 1 in DENSITY
 * slots of their window (next_shift). */
#define DENSITY 4

/* A slot, 12 bytes: the key (48 address bits, which is all user space on
 * x86-64 and arm64, and LIVEMAP_CUSTOM) with the size's high 15 bits in
 * the 15 between, the bucket index (buckets.c has fewer than 2^20) and the
 * size's low 12 bits. At rate 1 every allocation has a slot and the table
 * is most of cprof's memory (1.7 million live objects on xmllint): 16-byte
 * slots took 33.5 MB there. A key or size that does not fit goes to the
 * stripe's wide list. The key stays where it is in the word, not packed
 * into the low bits: packing and unpacking cost 4 instructions an insert
 * and 10 a remove (callgrind, xmllint at rate 1, 197 -> 193, 194 -> 184). */
#define ADDR_MASK ((1ull << 48) - 1)
#define KEY_MASK (ADDR_MASK | LIVEMAP_CUSTOM)
#define SIZE_HI_SHIFT 48
#define SIZE_HI_MASK ((1ull << 15) - 1)
#define BUCKET_BITS 20
#define SIZE_LO_BITS (32 - BUCKET_BITS)
#define SIZE_BITS (SIZE_LO_BITS + 15)
#define SIZE_LO_MASK ((1u << SIZE_LO_BITS) - 1)

typedef struct {
    uint64_t kw;  /* key | the size's high bits << SIZE_HI_SHIFT; 0 = empty */
    uint32_t val; /* bucket << SIZE_LO_BITS | the size's low bits */
} __attribute__((packed, aligned(4))) slot_t;
_Static_assert(sizeof(slot_t) == 12, "a slot is 12 bytes");

/* An object whose address or size is too wide for a slot: a size of 128 MiB
 * or more, an address above 2^48 (5-level page tables, on request only).
 * Few are ever live at once: a list, searched in full. */
typedef struct {
    uintptr_t key;
    uint64_t size; /* bytes */
    uint32_t bucket;
} wide_t;

typedef struct {
    rt_lock_t lock;
    uint32_t shift;  /* the unit of offsets in a window, log2 bytes */
    slot_t *slots;
    uint64_t span;   /* where windows start: fastrange over [0, span) */
    uint64_t nslots; /* span + WINDOW(shift) + a margin; the last stays empty */
    uint64_t limit;  /* entries the slots take before they grow: 7/8 span */
    uint64_t count;  /* live objects, in the slots and the wide list */
    uint64_t squares; /* sum of the squares of its filter counters (next_shift) */
    wide_t *wide;
    uint32_t nwide, wide_cap;
} __attribute__((aligned(64))) stripe_t;
/* One line a stripe. Measured and dropped: the lock, count and squares on
 * a line of their own, so that with two threads a remove reads the
 * table's place from its own cache and asks for the slot's line before
 * the lock's arrives: mtindex 2 400000, cprof's samples over mtindex's
 * 0.953 -> 0.971 (medians of 9 interleaved perf runs, load 2.5-3.6); the
 * unlock's exchange kept 17-19% of livemap_remove's samples and the slot's
 * load 50-52%. */

/* Until livemap_init maps the filter, it is this one, never written: its
 * pages stay the kernel's zero page, and free reads "not sampled" without
 * first testing the pointer (two instructions a free). */
static uint8_t no_filter[LIVEMAP_FILTER_SLOTS];
uint8_t *livemap_filter = no_filter;
static stripe_t stripes[NSTRIPES];

int livemap_init(void)
{
    if (livemap_filter == no_filter) {
        uint8_t *f = arena_map(LIVEMAP_FILTER_SLOTS * sizeof(*f));
        if (!f)
            return -ENOMEM;
        __atomic_store_n(&livemap_filter, f, __ATOMIC_RELEASE);
    }
    return 0;
}

static bool narrow_key(uintptr_t key)
{
    return !(key & ~KEY_MASK);
}

/* Where a key lives. The product of its 4 KiB page number and 2^64/phi
 * (Fibonacci hashing) gives, below its top bits, the start of the page's
 * window in its stripe's table (stripe_of); the offset in the page, in the
 * stripe's unit, gives the place in the window. Objects of one page, which
 * a program mostly allocates and frees together, then sit in neighbouring
 * slots: a run of inserts or removes touches a few cache lines and one TLB
 * page of the table, where hashing each pointer missed both on nearly
 * every call (livemap_insert and livemap_remove were 48% of xmllint's run
 * at rate 1). Fibonacci hashing spreads consecutive pages, a heap's usual
 * shape, evenly over the table, so the windows of neighbouring pages
 * rarely overlap: measured at rate 1 with tables at most half full, 0.35
 * extra probes per insert on python3 and 0.4 on xmllint, where a
 * general-purpose mixer of the page gave 15 and 3 (overlapping windows
 * merge into long runs). Windows of 8 or 16 KiB of neighbouring pages
 * (hashing the page number shifted right by 1 or 2) missed more, not
 * less: xmllint frees too far from address order (callgrind, scale 0.2,
 * 1 MiB cache: 1.763 M misses, 1.776 and 1.850 M). */
static uint64_t page_hash(uintptr_t key)
{
    return (uint64_t)(key >> 12) * 0x9e3779b97f4a7c15ull;
}

/* The stripe is the top bits of the same hash of the page number modulo
 * the filter's size (the page itself below 1 GiB's worth of pages, the
 * heap's usual span): the pages that share a filter counter share a
 * stripe, so the counter changes only under that stripe's lock, by a
 * plain load and store (livemap.h), where an atomic read-modify-write
 * took 5% of livemap_remove's time (perf, xmllint at rate 1). Striped
 * by 2 MiB region instead (glibc gives each thread an arena of its own,
 * so two threads' stripe lines would stay each on its core): no gain
 * measured with two allocating threads at rate 1, on this 2-CPU VM at
 * load 4-6 (mtindex 2 400000: CPU 1.41 -> 1.43 s, medians of 20
 * interleaved runs, faster in 9; live map samples over the program's
 * 0.60-0.66 -> 0.55-0.64 in 5 perf runs, livemap_remove's alone 0.354 ->
 * 0.364, medians of 5 more; a 2-thread malloc/free ring of
 * 2 M allocations, task-clock medians of 6: 231 -> 245 ms, spreads
 * 211-282 and 214-277); and with whole regions a stripe, some stripes
 * grew too few times in test_livemap's sparse heap to leave its dense
 * heap's 8-byte unit. */
static stripe_t *stripe_of(uintptr_t key)
{
    return &stripes[page_hash(key & ((uintptr_t)(LIVEMAP_FILTER_SLOTS - 1) << 12)) >>
                    (64 - STRIPE_BITS)];
}

/* The window starts at the hash's bits below its top STRIPE_BITS scaled to span
 * (fastrange: a multiply, not a mask), so a table can grow by any step, and
 * keeps the order of the hashes: a grown table fills from the old one
 * front to back. Runs do not wrap around: the table has a window's slots and a
 * margin (SPARE at first) past span, and its last slot stays empty and
 * stops every probe, so the loops need no bound and deletion compares
 * homes without wrapping. The windows' starts must cover the whole span:
 * starts kept off the table's end by its margin crowded the rest (4 to 8
 * times the probes at 512 slots). */
static uint64_t window_of(uint64_t hash, uint64_t span)
{
    return (uint64_t)(((unsigned __int128)(hash << STRIPE_BITS) * span) >> 64);
}

static uint64_t home_of(uint64_t hash, uintptr_t key, uint64_t span, uint32_t shift)
{
    return window_of(hash, span) + ((key & 0xfff) >> shift);
}

/* Computed again for each slot a rehash or a deletion reads: caching the
 * window of the last page read took more instructions than it saved
 * (callgrind, python3 at rate 1: deletion +32%), neighbouring slots are
 * seldom of one page. */
static uint64_t slot_home(uint64_t kw, uint64_t span, uint32_t shift)
{
    return home_of(page_hash(kw & KEY_MASK), kw, span, shift);
}

/* Where a grown table puts e; false when its run reaches the last slot. */
static bool put(slot_t *slots, uint64_t n, uint64_t span, uint32_t shift, slot_t e)
{
    uint64_t i = slot_home(e.kw, span, shift);
    while (slots[i].kw)
        i++;
    slots[i] = e;
    return i < n - 1;
}

/* Moves the stripe's entries into slots; false when a run reaches the
 * last slot (rare: SPARE slots of margin or more). */
static bool rehash_locked(const stripe_t *s, slot_t *slots, uint64_t n, uint64_t span,
                          uint32_t shift)
{
    for (uint64_t i = 0; s->slots && i < s->nslots; i++)
        if (s->slots[i].kw && !put(slots, n, span, shift, s->slots[i]))
            return false;
    return true;
}

/* Remakes the stripe's slots for span and shift and a margin past the last
 * window of at least spare, twice that if a run would reach the end. Lock
 * held. The margin, not the span, grows for a long run at the end: windows
 * crowded there (pages that happen to hash alike) keep their place in the
 * table at any span, and doubling it for them would be without bound.
 * Growing a table down into address space reserved below it (15 times
 * its size, PROT_NONE), rehashing in place and faulting in only the new
 * half cut growth's samples by a third on xmllint at rate 1 (0.345 ->
 * 0.231 of libxml2's, medians of 12), but the whole run's did not move
 * (5.065 -> 5.066 of libxml2's, 7 runs) and callgrind counted 0.6% more
 * instructions: not kept, for its 0.5 GB of reserved address space and a
 * rehash whose read and write regions overlap. Growth's share of
 * xmllint's run at rate 1 (perf -g, 1 run): this function 1.9% of the
 * samples and the kernel under it 2.9% (populating 1.8%, unmapping 0.6%),
 * against 10.8% for the program's own heap faults; 52 MB mapped over 512
 * growths for 25 MB of tables at the end. The 64 stripes grow in step
 * (each ends at span 32768 on xmllint and on mtindex 2 400000), so a
 * stripe's old table never fits another's next one. */
static bool resize_locked(stripe_t *s, uint64_t span, uint32_t shift, uint64_t spare)
{
    for (;; spare *= 2) {
        uint64_t n = span + WINDOW(shift) + spare;
        slot_t *slots = arena_map(n * sizeof(slot_t));
        if (!slots)
            return false;
        /* Each page written first, not read: a probe's read of an untouched
         * page maps the shared zero page, and the first insert there then
         * replaces it, which flushes the TLB of every CPU running another of
         * the program's threads (an interrupt each: 12% of a two-thread
         * program's run at rate 1, perf, bench/workloads/mtindex.c). Slots
         * spread over the whole table, so every page is soon used anyway.
         * One system call for all of them where the kernel has it (5.14). */
        pages_populate(slots, n * sizeof(slot_t));
        if (!rehash_locked(s, slots, n, span, shift)) {
            arena_unmap(slots, n * sizeof(slot_t));
            continue;
        }
        if (s->slots)
            arena_unmap(s->slots, s->nslots * sizeof(slot_t));
        /* Atomic: livemap_prefetch reads them without the lock. */
        __atomic_store_n(&s->slots, slots, __ATOMIC_RELAXED);
        __atomic_store_n(&s->span, span, __ATOMIC_RELAXED);
        __atomic_store_n(&s->shift, shift, __ATOMIC_RELAXED);
        s->nslots = n;
        s->limit = span * 7 / 8;
        return true;
    }
}

/* The unit for the stripe's next table: the coarsest in which the pages
 * of its live objects, as each object sees its own, fill at most 1 in
 * DENSITY slots of their windows. An object sees its page's filter count,
 * so their mean is the sum of the squares of the counters over the count.
 * The coarser the unit, the fewer lines a page's objects take (frees one
 * after another in the same page, three in four of xmllint's, find their
 * slots in lines the last frees loaded); the denser the windows, the more
 * the windows of neighbouring pages overlap into long runs (pages dense
 * with mtindex's 32- and 48-byte blocks fill 2 in 5 slots of a 16-byte
 * window: 20 to 120 probes an insert, 30 to 50 still at 8 bytes, 2 at 4).
 * Chosen at every growth from the first, so a stripe takes its heap's
 * unit at once and keeps it while the heap keeps its shape.
 * Measured at rate 1: the live objects of a page, as their objects see
 * them, are 116 on mtindex 2 400000 (8 bytes), 33 on xmllint (16), 42 to
 * 59 on python3 pywork.py 100000 (16). callgrind --cache-sim, 1 MiB last
 * level, one run each (valgrind lays out the heap alike for each): before
 * (the unit from the probes of the inserts since the last growth, one or
 * two steps a growth) -> this, mtindex 2 100000 1288.2 -> 1212.7 M
 * instructions, the live map's 296.2 -> 226.2 M, its misses 1.06 ->
 * 1.01 M; python3 pywork.py 20000 1603.9 -> 1658.7 M, misses 680 -> 612
 * K; xmllint (scale 0.2) 955.7 -> 954.6 M, livemap_remove's misses at 16
 * bytes as at 32 (351 K). cprof's samples over the program's own (perf,
 * medians of 9 and 7 interleaved): mtindex 1.099 -> 0.937, python3 0.569
 * -> 0.553. Measured and dropped: 1 in 5 (mtindex at 4 bytes: 1201.0 M
 * but 1.29 M misses, samples 0.994 in the same runs, and 0.985 to 1.166
 * over three more sets where 8 bytes gave 0.917 to 0.937; python3 0.602),
 * 1 in 6 (python3 1640.9 M), 1 in 3 (python3 at 16 and 32 bytes: 1758.7
 * M), choosing from 512 or 2048 slots on (mtindex at 1 in 5: 2.02 and 3.76
 * probes an insert against 1.91, 1260.5 M from 2048), and the probe rule
 * capped by the density (python3's samples 0.546 before, 0.567 capped,
 * medians of 7). */
static uint32_t next_shift(const stripe_t *s)
{
    uint32_t shift = SHIFT_MAX;
    while (shift > SHIFT_MIN && DENSITY * (s->squares << shift) > 4096 * s->count)
        shift--;
    return shift;
}

/* Doubles the stripe's slots (or makes the first ones). Lock held. Tried
 * and measured against growth by half with the stripes' first sizes spread
 * over one step (any size works, homes map by fastrange): 17 bytes a live
 * object whenever the program stops, where doubling swings between 14 and
 * 27, but the tables 7/12 to 7/8 full made the runs long (callgrind, rate
 * 1, python3 pywork.py 20000: 642 instructions an insert and 634 a remove,
 * against 288 and 366 with 16-byte slots doubled; xmllint at a tenth of
 * bench/'s input, 268 and 183 against 152 and 127). Left inline: out of
 * line and cold (with insert_wide_locked), livemap_insert took 292.8 M
 * instructions against 296.3 M on xmllint at rate 1 (callgrind), 0.07% of
 * the run. */
static bool grow_locked(stripe_t *s)
{
    if (!s->slots)
        return resize_locked(s, INITIAL_SPAN, SHIFT_FIRST, SPARE);
    return resize_locked(s, s->span * 2, next_shift(s), SPARE);
}

void livemap_prefetch(const void *p)
{
    uint64_t h = page_hash((uintptr_t)p);
    stripe_t *s = stripe_of((uintptr_t)p);
    uintptr_t slots = (uintptr_t)__atomic_load_n(&s->slots, __ATOMIC_RELAXED);
    uint64_t span = __atomic_load_n(&s->span, __ATOMIC_RELAXED);
    uint32_t shift = __atomic_load_n(&s->shift, __ATOMIC_RELAXED);
    if (slots) /* a prefetch never faults, even if the table is gone */
        __builtin_prefetch(
            (const void *)(slots + home_of(h, (uintptr_t)p, span, shift) * sizeof(slot_t)), 1);
}

/* The slot holding key, from its home, or UINT64_MAX. */
static uint64_t find_locked(const stripe_t *s, uint64_t home, uintptr_t key)
{
    for (uint64_t i = home;; i++) {
        uint64_t kw = s->slots[i].kw;
        if ((kw & KEY_MASK) == key)
            return i;
        if (!kw)
            return UINT64_MAX;
    }
}

static void read_slot(slot_t e, uint32_t *bucket, uint64_t *size)
{
    *bucket = e.val >> SIZE_LO_BITS;
    *size = (e.kw >> SIZE_HI_SHIFT & SIZE_HI_MASK) << SIZE_LO_BITS | (e.val & SIZE_LO_MASK);
}

/* Backward-shift deletion: pull later entries of the probe run into the
 * hole, so lookups never need tombstones. The runs after a hole are short
 * (measured at rate 1: slots read past the hole 0 / 1 / 2-3 / 4-7 in 48 /
 * 21 / 19 / 10% of xmllint's deletes, 56 / 21 / 14 / 4% of mtindex 2
 * 400000's, 45 / 16 / 16 / 13% of python3 pywork.py 100000's; entries
 * moved 0 in 67, 88 and 85%). Tombstones, measured and dropped (a hole
 * left marked unless the next slot is empty, then cleared with the marks
 * before it; an insert takes the first mark of its run; a table with marks
 * for a quarter of its entries rehashed at its size): deletion 119.0 ->
 * 28.2 M instructions on xmllint at rate 1, but inserts 296.3 -> 338.2 M
 * over the longer runs and removes 215.2 -> 228.5 M, the run -0.7%
 * (4,710.7 -> 4,676.9 M; mtindex 2 100000 -0.9%), LL misses unchanged
 * (callgrind, 1 run each): under 1%, for longer runs at every insert and
 * a second rule for resizing. Inlined into livemap_remove:
 * xmllint 4,710.7 -> 4,725.5 M instructions (callgrind, rate 1), the
 * insert path grew by more than the remove path shrank. */
static void delete_locked(stripe_t *s, uint64_t i)
{
    slot_t *slots = s->slots;
    uint64_t hole = i;
    for (uint64_t j = i + 1; slots[j].kw; j++) {
        if (slot_home(slots[j].kw, s->span, s->shift) <= hole) { /* its probe passes the hole */
            slots[hole] = slots[j];
            hole = j;
        }
    }
    slots[hole].kw = 0;
}

/* Takes key out of the wide list into *bucket and *size; false if absent. */
static bool wide_take_locked(stripe_t *s, uintptr_t key, uint32_t *bucket, uint64_t *size)
{
    for (uint32_t j = 0; j < s->nwide; j++) {
        if (s->wide[j].key == key) {
            *bucket = s->wide[j].bucket;
            *size = s->wide[j].size;
            s->wide[j] = s->wide[--s->nwide];
            return true;
        }
    }
    return false;
}

static bool wide_reserve_locked(stripe_t *s)
{
    if (s->nwide < s->wide_cap)
        return true;
    uint32_t cap = s->wide_cap ? s->wide_cap * 2 : 4096 / sizeof(wide_t);
    wide_t *w = arena_map(cap * sizeof(wide_t));
    if (!w)
        return false;
    for (uint32_t j = 0; j < s->nwide; j++)
        w[j] = s->wide[j];
    if (s->wide)
        arena_unmap(s->wide, s->wide_cap * sizeof(wide_t));
    s->wide = w;
    s->wide_cap = cap;
    return true;
}

/* Records key in the wide list; 1 new, 0 replaced, -1 full. */
static int insert_wide_locked(stripe_t *s, uint64_t h, uintptr_t key, uint32_t bucket,
                              uint64_t size, uint32_t *old_bucket, uint64_t *old_size)
{
    if (!wide_reserve_locked(s))
        return -1;
    int rc = 1;
    uint64_t i;
    if (narrow_key(key) && s->slots &&
        (i = find_locked(s, home_of(h, key, s->span, s->shift), key)) != UINT64_MAX) {
        read_slot(s->slots[i], old_bucket, old_size);
        delete_locked(s, i);
        rc = 0;
    } else if (wide_take_locked(s, key, old_bucket, old_size)) {
        rc = 0;
    }
    s->wide[s->nwide++] = (wide_t){key, size, bucket};
    return rc;
}

/* Records key in the slots; 1 new, 0 replaced, -1 full. */
static int insert_slot_locked(stripe_t *s, uint64_t h, uintptr_t key, uint32_t bucket,
                              uint64_t size, uint32_t *old_bucket, uint64_t *old_size)
{
    /* Up to 7/8 full: with a page's objects in one window, probes stay
     * short (measured at rate 1: 1.5 extra probes per insert on xmllint,
     * 6.6 on python3, in neighbouring lines), and the table, most of
     * cprof's memory at rate 1, often half what it is at 1/2 (peak RSS of
     * xmllint 272 -> 240 MB, of Debian's python3 104 -> 88 MB). */
    if (s->count - s->nwide >= s->limit && !grow_locked(s))
        return -1;
    slot_t e = {key | (size >> SIZE_LO_BITS) << SIZE_HI_SHIFT,
                bucket << SIZE_LO_BITS | (size & SIZE_LO_MASK)};
    uint64_t i;
    for (;;) {
        for (i = home_of(h, key, s->span, s->shift); s->slots[i].kw; i++) {
            if ((s->slots[i].kw & KEY_MASK) == key) {
                /* Freed behind cprof's back (an unhooked path): replace. */
                read_slot(s->slots[i], old_bucket, old_size);
                s->slots[i] = e;
                return 0;
            }
        }
        if (i < s->nslots - 1)
            break;
        /* The run reached the stop: a wider margin. */
        if (!resize_locked(s, s->span, s->shift, (s->nslots - s->span - WINDOW(s->shift)) * 2))
            return -1;
    }
    s->slots[i] = e;
    return s->nwide && wide_take_locked(s, key, old_bucket, old_size) ? 0 : 1;
}

int livemap_insert(const void *p, uint32_t bucket, uint64_t size, uint32_t *old_bucket,
                   uint64_t *old_size)
{
    uintptr_t key = (uintptr_t)p;
    uint64_t h = page_hash(key);
    stripe_t *s = stripe_of(key);
    bool fits = narrow_key(key) && bucket < (1u << BUCKET_BITS) && size < (1ull << SIZE_BITS);
    bool locked = rt_lock_hot(&s->lock);
    int rc = fits ? insert_slot_locked(s, h, key, bucket, size, old_bucket, old_size)
                  : insert_wide_locked(s, h, key, bucket, size, old_bucket, old_size);
    if (rc == 1) {
        s->count++;
        s->squares += livemap_filter_add(p);
    }
    rt_unlock_hot(&s->lock, locked);
    return rc;
}

bool livemap_remove(const void *p, uint32_t *bucket, uint64_t *size)
{
    uintptr_t key = (uintptr_t)p;
    uint64_t h = page_hash(key);
    stripe_t *s = stripe_of(key);
    /* The home slot's line (a miss in most of this function's time on
     * xmllint at rate 1) loads while the lock is taken; the home holds if
     * the span and the unit did not change meanwhile (both are checked:
     * a growth stores one after the other). Issued earlier, at free()'s
     * entry before the count and the chunk header's read, and with the
     * next slot's line too, it changed nothing measurable: the load of
     * the home slot kept 62-67% of this function's samples (perf, python3
     * at rate 1), a miss longer than all the free path does before it.
     * Nor did calling the real free first where the process has one
     * thread (__libc_single_threaded), to overlap the miss with glibc's
     * free: python3 unchanged (perf samples / libpython's, medians of 5:
     * 1.93 -> 1.95), the home slot's load still 53% of the samples; nor
     * again with no locked instruction left on the path (rt.h's
     * rt_lock_hot) and the home slot prefetched before the real free,
     * handlers kept off meanwhile by rt_self.locks: python3 0.637 ->
     * 0.672, xmllint 1.890 -> 1.801 (medians of 7 interleaved, spreads
     * 0.56-0.78 and 1.53-1.95); and the prefetch's own page walk stalls
     * (61% of livemap_prefetch's samples fall just after it): the tables
     * span thousands of pages.
     * Huge pages for them (8 stripes, MADV_HUGEPAGE from 2 MiB, 10 MB of
     * AnonHugePages) measured 2.006 -> 1.920 in 5 runs, and a single run
     * after that the other way: not shown above the noise at load 1-3.
     * Nor prefetching the next page's window too (frees that walk the
     * heap in address order, as xmllint's, would find it loaded): the
     * home slot's load fell from 37% to 23% of this function's samples,
     * but the stall moved into the prefetch's page walk; cprof's samples
     * over libxml2's 1.906 -> 1.908, and 1.991 with the prefetch only
     * from the page's last quarter (medians of 11 interleaved, load 5). */
    uintptr_t slots = (uintptr_t)__atomic_load_n(&s->slots, __ATOMIC_RELAXED);
    uint64_t span = __atomic_load_n(&s->span, __ATOMIC_RELAXED);
    uint32_t shift = __atomic_load_n(&s->shift, __ATOMIC_RELAXED);
    uint64_t i = home_of(h, key, span, shift);
    if (slots) /* a prefetch never faults, even if the table is gone */
        __builtin_prefetch((const void *)(slots + i * sizeof(slot_t)), 1);
    bool locked = rt_lock_hot(&s->lock);
    if (RT_UNLIKELY(s->span != span || s->shift != shift))
        i = home_of(h, key, s->span, s->shift);
    bool found = false;
    if (narrow_key(key) && s->slots && (i = find_locked(s, i, key)) != UINT64_MAX) {
        read_slot(s->slots[i], bucket, size);
        delete_locked(s, i);
        found = true;
    } else if (s->nwide) {
        found = wide_take_locked(s, key, bucket, size);
    }
    if (found) {
        s->count--;
        s->squares -= livemap_filter_remove(p);
    }
    rt_unlock_hot(&s->lock, locked);
    return found;
}

uint64_t livemap_count(void)
{
    uint64_t n = 0;
    for (int i = 0; i < NSTRIPES; i++)
        n += __atomic_load_n(&stripes[i].count, __ATOMIC_RELAXED);
    return n;
}

unsigned livemap_unit_shift(const void *p)
{
    stripe_t *s = stripe_of((uintptr_t)p);
    rt_lock(&s->lock);
    unsigned shift = s->slots ? s->shift : 0;
    rt_unlock(&s->lock);
    return shift;
}

static livemap_entry_t entry(uintptr_t key, uint32_t bucket, uint64_t size)
{
    return (livemap_entry_t){key & ~LIVEMAP_CUSTOM, size, bucket, (key & LIVEMAP_CUSTOM) != 0};
}

size_t livemap_copy_locked(livemap_entry_t *out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < NSTRIPES; i++) {
        const stripe_t *s = &stripes[i];
        /* Tables never shrink, and the heap profile written at exit copies
         * them when a program has freed nearly everything (1 live object
         * in xmllint's 25 MB of slots): stop at a stripe's last entry. */
        uint64_t left = s->count - s->nwide;
        for (uint64_t j = 0; left && j < s->nslots && n < max; j++) {
            if (s->slots[j].kw) {
                left--;
                uint32_t bucket;
                uint64_t size;
                read_slot(s->slots[j], &bucket, &size);
                out[n++] = entry(s->slots[j].kw & KEY_MASK, bucket, size);
            }
        }
        for (uint32_t j = 0; j < s->nwide && n < max; j++)
            out[n++] = entry(s->wide[j].key, s->wide[j].bucket, s->wide[j].size);
    }
    return n;
}

/* A block before a custom object at its address: the block holds it. */
static int by_addr(const void *a, const void *b)
{
    const livemap_entry_t *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (int)x->custom - (int)y->custom;
}

void livemap_sort_copy(livemap_entry_t *e, size_t n)
{
    qsort(e, n, sizeof(*e), by_addr);
}

void livemap_lock_all(void)
{
    for (int i = 0; i < NSTRIPES; i++)
        rt_lock(&stripes[i].lock);
}

void livemap_unlock_all(void)
{
    for (int i = 0; i < NSTRIPES; i++)
        rt_unlock(&stripes[i].lock);
}

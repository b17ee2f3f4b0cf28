/* gotpatch.h — routing a running program's calls to cprof without a
 * preload: the GOT slots (PLT jump slots and GLOB_DAT entries) through which
 * each loaded module calls malloc, free, operator new, pthread_mutex_lock...
 * are rewritten to point at cprof's definitions of those functions (for
 * `cprof attach`, attach.h), and written back on detach.
 *
 * Every slot changed is logged (slot address, previous value) in arena
 * memory; a pass skips slots that already hold the hook, so passes can be
 * repeated for modules loaded later. Restoring re-reads the relocations of
 * the modules loaded now, so a module unloaded meanwhile is never written
 * to. Slots in a module's RELRO range are made writable for the store and
 * read-only again.
 *
 * The dynamic loader and the vDSO are left alone. Not for signal handlers;
 * callers serialize passes (attach.c: one thread at a time). No malloc:
 * safe while the slots being patched are the allocator's. */
#ifndef CPROF_GOTPATCH_H
#define CPROF_GOTPATCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *name; /* symbol the module's relocation names */
    void *hook;       /* cprof's definition */
    void *orig;       /* the definition the loader bound (function pointers
                         in data are routed only while they hold it) */
    bool keep;        /* left routed to cprof by gotpatch_restore */
} gotpatch_sym_t;

/* The functions a module exports for interposition: every defined global
 * function of the module containing addr (found through its dynamic
 * symbol table) whose name does not start with skip_prefix. At most max
 * entries (orig NULL); returns how many, or a negative errno. */
int gotpatch_exports(const void *addr, const char *skip_prefix, gotpatch_sym_t *out, size_t max);

/* Points every matching slot of every loaded module at its hook. Returns
 * the number of slots changed, or -ENOMEM when the log is full (slots
 * already changed stay logged). */
int gotpatch_apply(const gotpatch_sym_t *syms, size_t n);

/* Writes the logged previous values back into the slots (of modules still
 * loaded) that still hold their hook, except the slots of `keep` symbols.
 * Returns the number of slots restored. */
int gotpatch_restore(const gotpatch_sym_t *syms, size_t n);

/* Whether the loader's list of modules changed since the last call (a
 * cheap check for the poller: dl_iterate_phdr's adds/subs counters). */
bool gotpatch_modules_changed(void);

#endif

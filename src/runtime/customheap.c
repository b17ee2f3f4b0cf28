/* customheap.c — the entry points of include/cprof_heap.h: objects of a
 * program's own allocators, sampled by the heap sampler and recorded
 * (heap.h) under the label heap=NAME added to the thread's labels.
 *
 * A heap handle is the value string of the interned label set
 * {heap=NAME} (labels.c): arena memory that lives as long as the process,
 * so registering needs no table of its own. Objects are keyed in the live
 * map apart from malloc's blocks (livemap.h's LIVEMAP_CUSTOM).
 *
 * Threads: any; not from a signal handler (labels_with may take the label
 * insert lock). Inside cprof (guard set) the calls do nothing. */
#include "cprof_heap.h"

#include "heap.h"
#include "labels.h"
#include "rt.h"
#include "sampler.h"

#include <string.h>

RT_EXPORT cprof_heap_t cprof__heap_register(const char *name)
{
    if (!name)
        return NULL;
    uint32_t id = labels_with("heap", name);
    const labelset_t *l = labels_get(id);
    for (uint32_t i = 0; l && i < l->n; i++)
        if (!strcmp(l->pairs[i].key, "heap"))
            return (cprof_heap_t)l->pairs[i].value;
    return NULL;
}

RT_EXPORT void cprof__heap_alloc(cprof_heap_t heap, const void *p, size_t size)
{
    rt_thread_t *t = &rt_self;
    if (!heap || !p || t->guard || !sampler_take(t, size))
        return;
    uint32_t labels = labels_with("heap", (const char *)heap);
    heap_record_custom_alloc(p, size, labels);
}

RT_EXPORT void cprof__heap_free(cprof_heap_t heap, const void *p)
{
    if (heap && p && !rt_self.guard)
        heap_record_custom_free(p);
}

RT_EXPORT void cprof__heap_backing(cprof_heap_t heap, const void *block)
{
    if (heap && block && !rt_self.guard)
        heap_forget_block(block);
}

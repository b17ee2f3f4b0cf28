/* symbolize_prog.c — a program whose call sites the symbolize tests know.
 *
 * Prints "site TAG ADDRESS" for call sites (return address - 1, as a
 * profiler records them) and "map START END OFFSET PATH" for its executable
 * mappings (/proc/self/maps r-xp lines), then exits. The tests find the
 * expected source lines by the "@marker" comments below, so edit freely. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static void site(const char *tag)
{
    printf("site %s %p\n", tag, (void *)((char *)__builtin_return_address(0) - 1));
}

/* Inlined at every optimization level, so the call below always has an
 * inline frame: inlined_leaf inside outer_func. */
static inline __attribute__((always_inline)) void inlined_leaf(void) /* @inlined-decl */
{
    site("inline"); /* @inline-call */
}

__attribute__((noinline)) void outer_func(void) /* @outer-decl */
{
    inlined_leaf(); /* @outer-call */
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void plain_func(void) /* @plain-decl */
{
    site("plain"); /* @plain-call */
    __asm__ volatile("" ::: "memory");
}

static void print_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    while (f && fgets(line, sizeof(line), f)) {
        uint64_t start, end, off;
        char perms[8], path[3000] = "";
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %2999[^\n]", &start,
                   &end, perms, &off, path) >= 4 &&
            strcmp(perms, "r-xp") == 0)
            printf("map %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n", start, end, off, path);
    }
    if (f)
        fclose(f);
}

int main(void)
{
    plain_func();
    outer_func();
    /* Addresses inside libc: malloc's entry, and main's caller. */
    printf("site libc-malloc %p\n", dlsym(RTLD_DEFAULT, "malloc"));
    printf("site libc-caller %p\n", (void *)((char *)__builtin_return_address(0) - 1));
    print_maps();
    return 0;
}

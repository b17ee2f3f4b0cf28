/* memstats_known.c — known live heap between two heap?debug=1 texts, for
 * heap_memstats.sh: writes DIR/before.txt, makes allocations it counts
 * itself (usable sizes, as cprof counts bytes), frees some, writes
 * DIR/after.txt, then prints "EXPECT live_bytes live_objects mallocs frees"
 * for the difference. Nothing between the two writes allocates but the
 * counted calls. */
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 300

static int (*write_fd)(int, int);

static void dump(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write_fd(fd, 1) != 0)
        _exit(2);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    write_fd = (int (*)(int, int))dlsym(RTLD_DEFAULT, "cprof_heap_profile_write_fd");
    if (!write_fd)
        return 3;
    static void *p[N];
    dump(argv[1], "before.txt");
    unsigned long long live = 0, objs = 0, mallocs = 0, frees = 0;
    for (int i = 0; i < N; i++) {
        switch (i % 4) {
        case 0: p[i] = malloc(24 + (size_t)i * 7); break;
        case 1: p[i] = calloc(3, 100 + (size_t)i); break;
        case 2: p[i] = aligned_alloc(64, 128 * (size_t)(i % 9 + 1)); break;
        default:
            if (posix_memalign(&p[i], 256, 4000 + (size_t)i) != 0)
                p[i] = NULL;
        }
        if (!p[i])
            return 4;
        mallocs++;
    }
    p[7] = (free(p[7]), NULL), frees++;
    for (int i = 0; i < N; i += 3)
        if (p[i])
            free(p[i]), p[i] = NULL, frees++;
    void *big = malloc(3 << 20); /* an mmapped block under glibc */
    mallocs++;
    for (int i = 0; i < N; i++)
        if (p[i])
            live += malloc_usable_size(p[i]), objs++;
    live += malloc_usable_size(big), objs++;
    dump(argv[1], "after.txt");
    printf("EXPECT %llu %llu %llu %llu\n", live, objs, mallocs, frees);
    free(big);
    return 0;
}

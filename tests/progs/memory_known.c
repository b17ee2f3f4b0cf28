/* memory_known.c — a process whose memory has known parts, for
 * memory_known.sh: touched malloc memory, malloc memory never touched, an
 * anonymous mmap from a known function (half touched), one trimmed by
 * munmap, one grown by mremap, one grown from a page (at the default rate
 * rarely sampled when mapped, surely when grown), blocks glibc maps
 * one by one, threads with a known
 * stack use each, many small blocks freed behind a block kept (so glibc
 * keeps them), a file mapping, grown by mremap
 * from its first page, read whole. While they all exist (the
 * threads blocked in a read), it writes the memory profile to DIR/mem.pb.gz,
 * reads /proc/self/smaps_rollup's Rss and smaps's Size total at once, and
 * prints "EXPECT name bytes" lines and "ROLLUP rss size". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TOUCHED (8u << 20)
#define UNTOUCHED (64u << 20)
#define MAP_SIZE (16u << 20)
#define MAP_TOUCHED (6u << 20)
#define THREADS 3
#define STACK_USE (1u << 20)
#define SMALL 200
#define NSMALL 100000
#define FILE_SIZE (2u << 20)
#define MID (200u << 10) /* above glibc's mmap threshold, below the default rate */
#define NMID 40

static int ready[2], go_on[2];
static volatile unsigned long sink;
static volatile pid_t tids[THREADS + 1];

static __attribute__((noinline)) void *touched_block(void)
{
    char *p = malloc(TOUCHED);
    memset(p, 1, TOUCHED);
    return p;
}

static __attribute__((noinline)) void *untouched_block(void)
{
    return malloc(UNTOUCHED);
}

/* Blocks glibc maps one by one, touched: at the default rate most are not
 * sampled, and their mappings are still the allocator's. */
static __attribute__((noinline)) void mid_blocks(void **b)
{
    for (int i = 0; i < NMID; i++) {
        b[i] = malloc(MID);
        memset(b[i], 4, MID);
    }
}

static __attribute__((noinline)) void *map_known(void)
{
    char *p = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(4);
    memset(p, 1, MAP_TOUCHED);
    return p;
}

/* 8 MiB mapped and touched, its upper half unmapped: 4 MiB stay. */
static __attribute__((noinline)) void *map_trimmed(void)
{
    char *p = mmap(NULL, 8u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(13);
    memset(p, 5, 8u << 20);
    if (munmap(p + (4u << 20), 4u << 20))
        exit(14);
    return p;
}

/* 2 MiB mapped and touched, grown to 6 MiB (moved if it must be). */
static __attribute__((noinline)) void *map_moved(void)
{
    char *p = mmap(NULL, 2u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(15);
    memset(p, 6, 2u << 20);
    p = mremap(p, 2u << 20, 6u << 20, MREMAP_MAYMOVE);
    if (p == MAP_FAILED)
        exit(16);
    return p;
}

/* One page mapped and touched, grown to 8 MiB of which 1 MiB is touched. */
static __attribute__((noinline)) void *map_grown(void)
{
    char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(17);
    p[0] = 7;
    p = mremap(p, 4096, 8u << 20, MREMAP_MAYMOVE);
    if (p == MAP_FAILED)
        exit(18);
    memset(p, 7, 1u << 20);
    return p;
}

/* Small blocks, touched, all freed but a fence after them: the freed run
 * cannot join the top chunk, so glibc keeps it. Returns the fence. */
static __attribute__((noinline)) void *small_freed(void)
{
    static void *b[NSMALL];
    for (int i = 0; i < NSMALL; i++) {
        b[i] = malloc(SMALL);
        memset(b[i], 2, SMALL);
    }
    void *fence = malloc(SMALL);
    for (int i = 0; i < NSMALL; i++)
        free(b[i]);
    return fence;
}

static __attribute__((noinline)) const char *map_file(const char *dir, char *path, size_t len)
{
    snprintf(path, len, "%s/known.dat", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    static char page[4096];
    memset(page, 3, sizeof(page));
    for (unsigned i = 0; i < FILE_SIZE / sizeof(page); i++)
        if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
            exit(5);
    /* its first page, grown to the whole file: still the file's */
    void *first = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    const volatile char *m =
        first == MAP_FAILED ? MAP_FAILED : mremap(first, 4096, FILE_SIZE, MREMAP_MAYMOVE);
    if (m == MAP_FAILED)
        exit(6);
    close(fd);
    for (unsigned i = 0; i < FILE_SIZE; i += 4096)
        sink += m[i];
    return path;
}

/* Uses STACK_USE bytes of its stack, then waits in read() (a system call:
 * /proc says where its stack pointer is). */
static __attribute__((noinline)) void use_stack(int n)
{
    volatile char buf[STACK_USE];
    for (unsigned i = 0; i < STACK_USE; i += 64)
        buf[i] = (char)n;
    char c = 0;
    tids[n] = gettid();
    if (write(ready[1], &c, 1) != 1 || read(go_on[0], &c, 1) != 1)
        exit(7);
    sink += buf[n];
}

static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    use_stack((int)(long)arg);
    return NULL;
}

static unsigned long long rollup_rss(void)
{
    char line[256];
    unsigned long long kb = 0;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Rss: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

static unsigned long long smaps_size(void)
{
    char line[512];
    unsigned long long kb, total = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Size: %llu kB", &kb) == 1)
            total += kb;
    if (f)
        fclose(f);
    return total * 1024;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int (*write_mem)(const char *) =
        (int (*)(const char *))dlsym(RTLD_DEFAULT, "cprof_memory_profile_write");
    if (!write_mem)
        return 3;
    static char out[4096], fpath[4096];
    snprintf(out, sizeof(out), "%s/mem.pb.gz", argv[1]);
    if (pipe(ready) || pipe(go_on))
        return 8;
    static void *mid[NMID];
    mid_blocks(mid); /* before the freed blocks, which could serve them */
    void *t = touched_block(), *u = untouched_block(), *fence = small_freed();
    void *m = map_known(), *mt = map_trimmed(), *mm = map_moved(), *mg = map_grown();
    map_file(argv[1], fpath, sizeof(fpath));
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 4u << 20);
        if (pthread_create(&th[i], &a, worker, (void *)(i + 1)))
            return 9;
    }
    char c;
    for (int i = 0; i < THREADS; i++)
        if (read(ready[0], &c, 1) != 1)
            return 10;
    /* wait until each worker sleeps in its read: only in a system call
     * does /proc tell where its stack is; the test's timeout bounds this */
    for (;;) {
        int blocked = 0;
        for (long k = 0; k < THREADS; k++) {
            char p[64], s[64] = "";
            snprintf(p, sizeof(p), "/proc/self/task/%d/syscall", (int)tids[k + 1]);
            FILE *f = fopen(p, "r");
            if (f && fgets(s, sizeof(s), f) && s[0] >= '0' && s[0] <= '9' && atoi(s) == SYS_read)
                blocked++;
            if (f)
                fclose(f);
        }
        if (blocked == THREADS)
            break;
        usleep(1000);
    }
    unsigned long long before = rollup_rss();
    if (write_mem(out) != 0)
        return 11;
    unsigned long long rss = rollup_rss(), size = smaps_size();
    printf("EXPECT touched_block %u\nEXPECT untouched_block %u\nEXPECT map_known %u %u\n"
           "EXPECT stack %u\nEXPECT freed %u\nEXPECT file %s %u\nEXPECT mid_blocks %u\n"
           "EXPECT map_trimmed %u %u\nEXPECT map_moved %u %u\nEXPECT map_grown %u %u\n"
           "ROLLUP %llu %llu %llu\n",
           TOUCHED, UNTOUCHED, MAP_TOUCHED, MAP_SIZE, STACK_USE, NSMALL * SMALL, fpath,
           FILE_SIZE, MID * NMID, 4u << 20, 4u << 20, 2u << 20, 6u << 20, 1u << 20, 8u << 20, rss, size, before);
    for (int i = 0; i < THREADS; i++)
        if (write(go_on[1], "x", 1) != 1)
            return 12;
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    free(t);
    free(u);
    free(fence);
    for (int i = 0; i < NMID; i++)
        free(mid[i]);
    munmap(m, MAP_SIZE);
    munmap(mt, 4u << 20);
    munmap(mm, 6u << 20);
    munmap(mg, 8u << 20);
    return 0;
}

/* dump_signal — a program with its own SIGUSR2 handler, for
 * CPROF_DUMP_SIGNAL (tests/e2e/dump_signal.sh). It holds 3 MiB from
 * hold_three_mib (3 blocks of 1 MiB), says "ready" on stdout, and waits
 * until its handler has run argv[1] times and the file argv[2] exists (the
 * test's word that it saw the dumps; at most 120 s), then prints
 * what it saw: what sigaction read back as the action before its own, and
 * how many signals its handler took. Exit 0 if all came. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void *volatile kept[3]; /* read by nobody: volatile keeps the blocks */

static void on_usr2(int sig)
{
    (void)sig;
    handled++;
}

__attribute__((noinline)) static void hold_three_mib(void)
{
    for (int i = 0; i < 3; i++) {
        kept[i] = malloc(1 << 20);
        memset(kept[i], 1, 1 << 20);
    }
}

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 1;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr2;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR2, &sa, &old) != 0)
        return 2;
    hold_three_mib();
    printf("ready\n");
    fflush(stdout);
    struct timespec ts = {0, 5 * 1000 * 1000};
    const char *stop = argc > 2 ? argv[2] : NULL;
    for (int i = 0; i < 24000 && (handled < want || (stop && access(stop, F_OK) != 0)); i++)
        nanosleep(&ts, NULL);
    struct sigaction now;
    sigaction(SIGUSR2, NULL, &now);
    printf("old action %s\n", old.sa_handler == SIG_DFL ? "default" : "other");
    printf("action now %s\n", now.sa_handler == on_usr2 ? "mine" : "other");
    printf("handled %d\n", (int)handled);
    return handled == want ? 0 : 1;
}

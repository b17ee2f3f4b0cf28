/* sigmask_first.c — a program whose first pthread_sigmask, sigprocmask
 * and sigpending calls come from a signal handler
 * (runtime_sigmask_resolve.sh). Writes "MAIN" to stderr as main starts,
 * "ok" to stdout once the handler ran. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t done;

static void handler(int sig)
{
    (void)sig;
    sigset_t m;
    pthread_sigmask(SIG_BLOCK, NULL, &m);
    sigprocmask(SIG_BLOCK, NULL, &m);
    sigpending(&m);
    done = 1;
}

int main(void)
{
    write(2, "MAIN\n", 5);
    signal(SIGUSR1, handler);
    raise(SIGUSR1);
    if (!done)
        return 1;
    printf("ok\n");
    return 0;
}

/* close_stderr.c — a program that closes its stderr before it exits, as
 * coreutils' close_stdout does from atexit.
 *
 *   close_stderr close        closes stderr (fclose), prints "closed"
 *   close_stderr reuse FILE   closes every descriptor but stdout, then opens
 *                             FILE on every free number up to the limit
 *                             (reusing whatever cprof kept), closes fd 2
 *                             again and prints "reused N"
 * Both exit 0. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "close") == 0) {
        if (fclose(stderr) != 0)
            return 1;
        printf("closed\n");
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "reuse") == 0) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
            return 1;
        for (rlim_t fd = 0; fd < rl.rlim_cur; fd++)
            if (fd != 1)
                close((int)fd);
        int n = 0;
        while (open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0644) >= 0)
            n++;
        close(2);
        printf("reused %d\n", n);
        return 0;
    }
    fprintf(stderr, "usage: close_stderr close | reuse FILE\n");
    return 2;
}

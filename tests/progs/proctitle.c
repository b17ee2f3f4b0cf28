/* proctitle.c — sets its process title the way redis-server, nginx and
 * PostgreSQL do: the environment is copied to the heap, environ pointed at
 * the copy, and the original argv and environment strings overwritten by
 * the title. Then it allocates (some kept, some freed) and prints a sum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv)
{
    (void)argc;
    char *end = argv[0] + strlen(argv[0]) + 1;
    for (char **a = argv + 1; *a; a++)
        if (*a + strlen(*a) + 1 > end)
            end = *a + strlen(*a) + 1;
    size_t n = 0;
    while (environ[n])
        n++;
    char **copy = malloc((n + 1) * sizeof(*copy));
    if (!copy)
        return 1;
    for (size_t i = 0; i < n; i++) {
        /* The strings the kernel laid out after argv, contiguous. */
        if (environ[i] <= end && environ[i] + strlen(environ[i]) + 1 > end)
            end = environ[i] + strlen(environ[i]) + 1;
        if (!(copy[i] = strdup(environ[i])))
            return 1;
    }
    copy[n] = NULL;
    environ = copy;
    memset(argv[0], 0, (size_t)(end - argv[0]));
    strcpy(argv[0], "proctitle: serving");

    static char *kept[100];
    unsigned long sum = 0;
    for (int i = 0; i < 1000; i++) {
        char *p = malloc(100 + (size_t)i);
        if (!p)
            return 1;
        memset(p, i & 0x7f, 100 + (size_t)i);
        sum += (unsigned char)p[i / 2];
        if (i % 10 == 0)
            kept[i / 10] = p;
        else
            free(p);
    }
    printf("title set, sum %lu, kept %s\n", sum, kept[99] ? "yes" : "no");
    return 0;
}

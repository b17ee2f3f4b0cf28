/* replay.c — the main of a harness built without libFuzzer (make check):
 * feeds it every file named, and every file in every directory named, once.
 * A crash or a sanitizer report (the harness is built with ASan/UBSan) is
 * the failure; prints how many inputs ran. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            bad = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[i]) < 0;
            runs++;
            continue;
        }
        struct dirent **names;
        int k = scandir(argv[i], &names, NULL, alphasort);
        for (int j = 0; j < k; j++) {
            if (names[j]->d_name[0] != '.') {
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
                bad |= run_file(path) < 0;
                runs++;
            }
            free(names[j]);
        }
        free(names);
    }
    printf("%d inputs\n", runs);
    return bad;
}

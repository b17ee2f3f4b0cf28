/* fdio.c — bounded writes to a descriptor (see fdio.h). */
#include "fdio.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

int64_t fdio_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ssize_t fdio_write_some(int fd, const void *p, size_t n, int64_t deadline_ms)
{
    for (;;) {
        ssize_t w = write(fd, p, n);
        if (w > 0)
            return w;
        if (w == 0)
            return -EIO;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
        int64_t left = deadline_ms - fdio_now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        if (poll(&pf, 1, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
            return -errno;
    }
}

int fdio_write_all(int fd, const void *p, size_t n, int stall_ms)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = fdio_write_some(fd, c, n, fdio_now_ms() + stall_ms);
        if (w < 0)
            return (int)w;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

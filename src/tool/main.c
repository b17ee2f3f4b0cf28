/* main.c — the cprof command: go tool pprof's counterpart for C programs.
 * Everything happens in the driver (driver.h), except attaching to a
 * running process (attach.h). */
#include "tool/attach.h"
#include "tool/driver.h"

#include <string.h>

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "attach") == 0 || strcmp(argv[1], "detach") == 0))
        return attach_main(argc - 1, argv + 1);
    return driver_main(argc, argv);
}

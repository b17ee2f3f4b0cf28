/* main.c — the cprof command: go tool pprof's counterpart for C programs.
 * Everything happens in the driver (driver.h). */
#include "tool/driver.h"

int main(int argc, char **argv)
{
    return driver_main(argc, argv);
}

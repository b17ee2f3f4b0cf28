// leakroots_early.c — a library whose constructor allocates before cprof's
// runs (a program's libraries are initialized before the preloaded
// libcprof.so): cprof never sees that block, yet the program keeps its
// pointers to later blocks in it (as ps keeps them in libprocps's).
#include <stdlib.h>

void **early_holder; /* not static: the compiler keeps every store */

__attribute__((constructor)) static void early_init(void)
{
    early_holder = calloc(64, sizeof(void *));
}

/* early_main.c — uses early_lib.c's table, built by its constructor. */
#include <stdio.h>

int early_sum(void);

int main(void)
{
    printf("early sum %d\n", early_sum());
    return 0;
}

/* placeholder: replaced by the CLI */
#include <stdio.h>
#include "nextok.h"
int main(void) { printf("nextok %s\n", nextok_version()); return 0; }

/* libFuzzer builds: reach marks are only counted by the regression driver
 * (libFuzzer measures coverage itself). */
#include "fuzz_reach.h"

void fuzz_reached(const char *tag) { (void)tag; }

/* Reach marks. A fuzz target calls fuzz_reached("tag") once an input got past
 * input validation into the code the target is for ("sampled", "loaded",
 * "fused:top-k"). The regression driver counts, per tag, the inputs that
 * reached it, prints the counts and checks the minimums ctest asks for (so a
 * corpus whose inputs are all rejected early fails instead of passing in
 * silence). Under libFuzzer the marks cost nothing (reach_stub.c). The
 * tag must be a string literal or otherwise outlive the run. */
#ifndef NEXTOK_FUZZ_REACH_H
#define NEXTOK_FUZZ_REACH_H

void fuzz_reached(const char *tag);

#endif

/* Reading whole files (load time). Not installed, not API. */
#ifndef NEXTOK_FILE_H
#define NEXTOK_FILE_H

#include "internal.h"

/* Read a whole regular file. *data is allocated with mem (NUL-terminated
 * past *size) and the caller frees it with mem. IO (with the path and the
 * reason) when the file cannot be opened or read, NOMEM when its contents do
 * not fit in memory. */
nextok_status nextok__read_file(const struct nextok__mem *mem, const char *path, char **data,
                                size_t *size, struct nextok_error *err);

/* Read up to cap bytes from the start of a regular file into buf; *got
 * receives how many. Errors as nextok__read_file. */
nextok_status nextok__read_head(const char *path, char *buf, size_t cap, size_t *got,
                                struct nextok_error *err);

#endif /* NEXTOK_FILE_H */

/*
 * Whole-file reading with open/read rather than stdio: fopen allocates, and
 * an allocation failure inside it would look like an unreadable file (IO)
 * where the truth is NOMEM. Here the only allocation is ours.
 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Open path for reading after checking that it is a regular file (opening a
 * FIFO would block); *size receives its size. */
static nextok_status open_regular(const char *path, int *fd, size_t *size, struct nextok_error *err)
{
    struct stat st;
    NEXTOK_RETURN_IF(stat(path, &st) != 0, err, NEXTOK_ERR_IO, "%s: %s", path, strerror(errno));
    NEXTOK_RETURN_IF(!S_ISREG(st.st_mode), err, NEXTOK_ERR_IO, "%s: not a regular file", path);
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    NEXTOK_RETURN_IF(*fd < 0, err, NEXTOK_ERR_IO, "%s: %s", path, strerror(errno));
    *size = (size_t)st.st_size;
    return NEXTOK_OK;
}

/* Read up to n bytes (fewer only at the end of the file); -1 on an error. */
static ptrdiff_t read_upto(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        got += (size_t)k;
    }
    return (ptrdiff_t)got;
}

nextok_status nextok__read_file(const struct nextok__mem *mem, const char *path, char **data,
                                size_t *size, struct nextok_error *err)
{
    *data = NULL;
    *size = 0;
    int fd;
    size_t n;
    NEXTOK_FORWARD(open_regular(path, &fd, &n, err));
    char *buf = n < SIZE_MAX ? nextok__alloc(mem, n + 1) : NULL;
    if (!buf) {
        close(fd);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, n);
    }
    ptrdiff_t got = read_upto(fd, buf, n);
    int e = errno;
    close(fd);
    if (got < 0 || (size_t)got != n) {
        nextok__free(mem, buf);
        if (got < 0) return nextok__err(err, NEXTOK_ERR_IO, "%s: %s", path, strerror(e));
        return nextok__err(err, NEXTOK_ERR_IO, "%s: read %zu of %zu bytes", path, (size_t)got, n);
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return NEXTOK_OK;
}

nextok_status nextok__read_head(const char *path, char *buf, size_t cap, size_t *got,
                                struct nextok_error *err)
{
    *got = 0;
    int fd;
    size_t n;
    NEXTOK_FORWARD(open_regular(path, &fd, &n, err));
    ptrdiff_t k = read_upto(fd, buf, cap);
    int e = errno;
    close(fd);
    NEXTOK_RETURN_IF(k < 0, err, NEXTOK_ERR_IO, "%s: %s", path, strerror(e));
    *got = (size_t)k;
    return NEXTOK_OK;
}

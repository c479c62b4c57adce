/*
 * lam_iovec.c - linked into the LAM/MPI core only: makes LAM 7.1.4 start on current kernels.
 *
 * LAM hands writev/readv an iovec whose empty entry keeps an uninitialised base pointer. Linux
 * rejects a non-user address even for zero bytes (EFAULT), so MPI_Init failed at random, as
 * the stack garbage and thus address randomisation decided ("selected RPI failed to
 * initialize", Unix errno 14). Defined in the executable, these two take the place of libc's
 * for liblam: they clear the base of every empty entry and pass the rest on unchanged.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum { MOST = 64 };

static ssize_t with_clean_iovec(long call, int fd, const struct iovec *iov, int n)
{
    struct iovec copy[MOST];
    if (n <= 0 || n > MOST)
        return syscall(call, fd, iov, n);
    for (int i = 0; i < n; i++) {
        copy[i] = iov[i];
        if (copy[i].iov_len == 0)
            copy[i].iov_base = NULL;
    }
    return syscall(call, fd, copy, n);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    return with_clean_iovec(SYS_writev, fd, iov, n);
}

ssize_t readv(int fd, const struct iovec *iov, int n)
{
    return with_clean_iovec(SYS_readv, fd, iov, n);
}

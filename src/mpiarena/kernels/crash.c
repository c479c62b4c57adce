/*
 * crash.c - a rank that dies on a signal says where: the driver installs a handler for SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL and SIGABRT at start-up and notes each cell it serves; the handler
 * writes to stderr, with write(2) and backtrace_symbols_fd only (async-signal-safe),
 *
 *   arena-crash RANK SIGNAL BENCH SIZE     (BENCH -: between cells)
 *   <one frame a line, innermost first, as glibc's backtrace_symbols_fd writes them>
 *   arena-crash-end RANK
 *
 * then dies of the same signal, so the launcher reports it as before. runner/job.py reads the
 * block back into the cell's reason.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

#define FRAMES 64

static volatile sig_atomic_t cell_bench = -1;
static volatile int64_t cell_size;

static void put(const char *s)
{
    ssize_t unused = write(STDERR_FILENO, s, strlen(s));
    (void)unused;
}

static void put_number(long long v)
{
    char digits[24];
    int i = (int)sizeof digits;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    digits[--i] = 0;
    do digits[--i] = (char)('0' + u % 10); while ((u /= 10) && i > 1);
    if (v < 0) digits[--i] = '-';
    put(digits + i);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "SIGABRT";
    }
}

static void on_crash(int sig)
{
    void *frames[FRAMES];
    int n = backtrace(frames, FRAMES);
    put("arena-crash\t");
    put_number(arena_rank);
    put("\t");
    put(signal_name(sig));
    put("\t");
    put(cell_bench >= 0 ? arena_bench_names[cell_bench] : "-");
    put("\t");
    put_number(cell_size);
    put("\n");
    backtrace_symbols_fd(frames + 1, n - 1, STDERR_FILENO); /* frame 0: this handler */
    put("arena-crash-end\t");
    put_number(arena_rank);
    put("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

void arena_crash_install(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    void *first[1];
    struct sigaction sa;
    backtrace(first, 1); /* loads libgcc now: its first call may allocate, never in a handler */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &sa, NULL);
}

void arena_crash_cell(int bench, int64_t size)
{
    cell_size = size;
    cell_bench = bench;
}

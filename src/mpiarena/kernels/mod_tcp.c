/*
 * mod_tcp.c - the raw TCP module: two processes joined by one socket with TCP_NODELAY, as
 * NetPIPE's TCP module. Rank 0 listens and starts rank 1 (a copy of itself) unless
 * ARENA_TCP_CONNECT=HOST:PORT says where rank 0 is. No collective is expressible.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"

static int sock = -1;
static pid_t child = -1;

static void die(const char *what)
{
    fprintf(stderr, "arena(tcp): %s: %s\n", what, strerror(errno));
    if (child > 0)
        kill(child, SIGKILL);
    exit(3);
}

static void tune(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die("TCP_NODELAY");
}

static void connect_to(const char *where)
{
    char host[256];
    snprintf(host, sizeof host, "%s", where);
    char *colon = strrchr(host, ':');
    if (!colon)
        die("ARENA_TCP_CONNECT needs HOST:PORT");
    *colon = 0;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
        die("ARENA_TCP_CONNECT host must be an IPv4 address");
    sock = socket(AF_INET, SOCK_STREAM, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("connect");
    tune(sock);
}

/* Become rank 1: exec this program again with the listener's address, locally, or on
 * ARENA_TCP_PEER through ARENA_TCP_RSH (a cluster node; the binary is at the same path; the
 * agent must leave our stdin, the control stream, alone: mpiarena's run ssh -n). */
static void start_peer(const char *where, char **argv)
{
    const char *rsh = getenv("ARENA_TCP_RSH"), *host = getenv("ARENA_TCP_PEER");
    char exe[4096], connect[128], t0[64], bind[32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = 0;
    if (!rsh || !host) {
        setenv("ARENA_TCP_CONNECT", where, 1);
        execv(exe, argv);
        return;
    }
    snprintf(connect, sizeof connect, "ARENA_TCP_CONNECT=%s", where);
    snprintf(t0, sizeof t0, "ARENA_T0=%s", getenv("ARENA_T0") ? getenv("ARENA_T0") : "0");
    snprintf(bind, sizeof bind, "ARENA_BIND=%s", getenv("ARENA_BIND") ? getenv("ARENA_BIND") : "none");
    execl(rsh, rsh, host, "env", connect, t0, bind, "ARENA_NP=2", exe, (char *)NULL);
}

static void tcp_init(int *argc, char ***argv, int *rank, int *np, char *level, size_t len)
{
    (void)argc;
    snprintf(level, len, "n/a");
    *np = 2;
    const char *want = getenv("ARENA_NP");
    if (want && atoi(want) != 2) {
        fprintf(stderr, "arena(tcp): raw TCP runs with exactly 2 processes\n");
        exit(2);
    }
    const char *peer = getenv("ARENA_TCP_CONNECT");
    if (peer) {
        *rank = 1;
        connect_to(peer);
        return;
    }
    *rank = 0;
    const char *bind_host = getenv("ARENA_TCP_BIND");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    inet_pton(AF_INET, bind_host ? bind_host : "127.0.0.1", &addr.sin_addr);
    socklen_t alen = sizeof addr;
    int lsock = socket(AF_INET, SOCK_STREAM, 0);
    if (lsock < 0 || bind(lsock, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lsock, 1) != 0 ||
        getsockname(lsock, (struct sockaddr *)&addr, &alen) != 0)
        die("listen");
    char where[64], ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
    snprintf(where, sizeof where, "%s:%d", ip, ntohs(addr.sin_port));
    child = fork(); /* rank 1: here, or on ARENA_TCP_PEER through the remote shell */
    if (child < 0)
        die("fork");
    if (child == 0) {
        close(lsock);
        start_peer(where, *argv);
        _exit(127);
    }
    sock = accept(lsock, NULL, NULL);
    if (sock < 0)
        die("accept");
    close(lsock);
    tune(sock);
}

static void tcp_finalize(void)
{
    close(sock);
    if (child > 0)
        waitpid(child, NULL, 0);
}

static void tcp_abort(const char *why)
{
    fprintf(stderr, "arena(tcp): %s\n", why);
    if (child > 0)
        kill(child, SIGKILL);
    exit(3);
}

static void tcp_library_version(char *buf, size_t len)
{
    struct utsname u;
    uname(&u);
    snprintf(buf, len, "TCP sockets, TCP_NODELAY (Linux %s)", u.release);
}

static void tcp_send(const void *buf, size_t n, int peer)
{
    (void)peer;
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(sock, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("write");
        p += w;
        n -= (size_t)w;
    }
}

static void tcp_recv(void *buf, size_t n, int peer)
{
    (void)peer;
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(sock, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die(r == 0 ? "peer closed the connection" : "read");
        p += r;
        n -= (size_t)r;
    }
}

/* Send `total` bytes (sbuf repeated every n bytes) while receiving as many: both directions at
 * once, so neither side blocks on a full socket buffer. */
static void duplex(const char *sbuf, char *rbuf, size_t n, size_t total)
{
    size_t sent = 0, got = 0;
    while (sent < total || got < total) {
        struct pollfd pfd = {.fd = sock, .events = (short)((sent < total ? POLLOUT : 0) | (got < total ? POLLIN : 0))};
        if (poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll");
        }
        if ((pfd.revents & POLLOUT) && sent < total) {
            size_t off = sent % n, chunk = n - off;
            if (chunk > total - sent)
                chunk = total - sent;
            ssize_t w = send(sock, sbuf + off, chunk, MSG_DONTWAIT);
            if (w > 0)
                sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EINTR)
                die("send");
        }
        if ((pfd.revents & (POLLIN | POLLHUP | POLLERR)) && got < total) {
            size_t off = got % n, chunk = n - off;
            if (chunk > total - got)
                chunk = total - got;
            ssize_t r = recv(sock, rbuf + off, chunk, MSG_DONTWAIT);
            if (r > 0)
                got += (size_t)r;
            else if (r == 0)
                die("peer closed the connection");
            else if (errno != EAGAIN && errno != EINTR)
                die("recv");
        }
    }
}

static void tcp_sendrecv(const void *sbuf, void *rbuf, size_t n, int peer)
{
    (void)peer;
    if (n > 0)
        duplex(sbuf, rbuf, n, n);
}

static void tcp_burst(const void *sbuf, void *rbuf, size_t n, int peer, int w)
{
    (void)peer;
    if (n > 0)
        duplex(sbuf, rbuf, n, n * (size_t)w);
}

static int tcp_has_coll(enum arena_coll op, size_t size)
{
    (void)op, (void)size;
    return 0;
}

static const char *tcp_reduce_as(enum arena_type t)
{
    (void)t; /* no collective, no sum: each is n/a as not expressible */
    return NULL;
}

static void tcp_coll(enum arena_coll op, const void *sbuf, void *rbuf, size_t size)
{
    (void)op, (void)sbuf, (void)rbuf, (void)size;
}

const arena_module arena_module_impl = {
    .family = "tcp",
    .init = tcp_init,
    .finalize = tcp_finalize,
    .abort = tcp_abort,
    .now = arena_monotonic,
    .tick = arena_monotonic_tick,
    .library_version = tcp_library_version,
    .send = tcp_send,
    .recv = tcp_recv,
    .recv_idle = tcp_recv,
    .sendrecv = tcp_sendrecv,
    .burst = tcp_burst,
    .has_coll = tcp_has_coll,
    .reduce_as = tcp_reduce_as,
    .no_config = "not an MPI library",
    .zero_byte_messages = 0,
    .coll = tcp_coll,
};

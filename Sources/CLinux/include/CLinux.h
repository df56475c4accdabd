#ifndef C_LINUX_H
#define C_LINUX_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <malloc.h>

/// accept4 is declared only under _GNU_SOURCE, which Swift's Glibc module does not set.
int CLinux_accept4(int fd, int flags);

/// syncfs likewise.
int CLinux_syncfs(int fd);

/// Names the calling thread (at most 15 bytes are kept): pthread_setname_np, also GNU-only.
int CLinux_set_thread_name(const char *name);

/// Starts writeback of the byte range and waits until it has reached the device, without a
/// cache flush: sync_file_range with WAIT_BEFORE | WRITE | WAIT_AFTER (GNU-only too).
int CLinux_write_out(int fd, long long offset, long long count);

/// The number of cores this process may run on (sched_getaffinity with CPU_COUNT, a macro), or
/// 0 when the call fails.
int CLinux_available_cores(void);

#endif

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/socket.h>
#include "CLinux.h"

int CLinux_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int CLinux_available_cores(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    return CPU_COUNT(&set);
}

int CLinux_syncfs(int fd) {
    return syncfs(fd);
}

int CLinux_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int CLinux_write_out(int fd, long long offset, long long count) {
    return sync_file_range(fd, offset, count,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
}

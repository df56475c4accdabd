#define _GNU_SOURCE
#include <sys/socket.h>
#include "CLinux.h"

int CLinux_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int CLinux_syncfs(int fd) {
    return syncfs(fd);
}

// Darwin.h: the C declarations of Apple's Darwin module (libc and POSIX, usr/include of the SDK)
// that the package uses, with Darwin's own types (64-bit) and values. What the Swift overlay of
// Darwin adds (errno, fcntl, ioctl, the standard streams) is in Darwin.swiftinterface.
//
// Documentation: the man pages (`man 2 read`), on Apple's site under
// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/
// (man2/read.2.html, man3/strerror.3.html, …). These functions and constants carry no
// availability in the SDK's headers: every Apple platform has had them since its first release.
#ifndef APPLE_REACH_DARWIN_H
#define APPLE_REACH_DARWIN_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <os/lock.h>

// sys/_types.h and the types it names (64-bit).
typedef long ssize_t;
typedef int32_t pid_t;
typedef uint32_t socklen_t;
typedef uint8_t sa_family_t;
typedef uint16_t in_port_t;
typedef uint32_t in_addr_t;
typedef long time_t;
typedef int32_t suseconds_t;
typedef unsigned int nfds_t;
typedef uint16_t mode_t;

// stdio.h (man3/fflush.3.html). `FILE` is a complete struct on Darwin; `stderr` is the overlay's.
typedef struct __sFILE {
    unsigned char *_p;
    int _r;
    int _w;
    short _flags;
    short _file;
} FILE;
extern FILE *__stderrp;
int fflush(FILE *stream);

// stdlib.h, string.h (man3/exit.3.html, man3/strerror.3.html, man3/strlen.3.html).
void exit(int status) __attribute__((__noreturn__));
char *strerror(int errnum);
size_t strlen(const char *s);

// errno.h (man2/intro.2.html): `errno` is the overlay's, over `__error()`.
extern int *__error(void);
#define EIO 5
#define EINTR 4
#define EINVAL 22
#define EAGAIN 35
#define EADDRINUSE 48
#define ENOSYS 78

// unistd.h (man2/read.2.html, man2/write.2.html, man2/close.2.html, man2/pipe.2.html).
ssize_t read(int fildes, void *buf, size_t nbyte);
ssize_t write(int fildes, const void *buf, size_t nbyte);
int close(int fildes);
int pipe(int fildes[2]);

// fcntl.h (man2/fcntl.2.html): fcntl itself is variadic, so the overlay declares it.
#define F_GETFD 1
#define F_SETFD 2
#define F_SETFL 4
#define FD_CLOEXEC 1
#define O_NONBLOCK 0x00000004

// sys/stat.h (man2/fstat.2.html): the 64-bit-inode `struct stat`. S_IFMT and friends are the
// overlay's (`mode_t`).
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
struct stat {
    int32_t st_dev;
    mode_t st_mode;
    uint16_t st_nlink;
    uint64_t st_ino;
    uint32_t st_uid;
    uint32_t st_gid;
    int32_t st_rdev;
    struct timespec st_atimespec;
    struct timespec st_mtimespec;
    struct timespec st_ctimespec;
    struct timespec st_birthtimespec;
    int64_t st_size;
    int64_t st_blocks;
    int32_t st_blksize;
    uint32_t st_flags;
    uint32_t st_gen;
    int32_t st_lspare;
    int64_t st_qspare[2];
};
int fstat(int fildes, struct stat *buf);

// poll.h (man2/poll.2.html).
struct pollfd {
    int fd;
    short events;
    short revents;
};
#define POLLIN 0x0001
#define POLLERR 0x0008
#define POLLHUP 0x0010
#define POLLNVAL 0x0020
int poll(struct pollfd fds[], nfds_t nfds, int timeout);

// sys/select.h (man2/select.2.html): `fd_set` is 32-bit words on Darwin.
struct timeval {
    time_t tv_sec;
    suseconds_t tv_usec;
};
#define FD_SETSIZE 1024
typedef struct fd_set {
    int32_t fds_bits[32];
} fd_set;
int select(int nfds, fd_set *restrict readfds, fd_set *restrict writefds, fd_set *restrict errorfds,
           struct timeval *restrict timeout);

// signal.h (man2/kill.2.html).
#define SIGKILL 9
int kill(pid_t pid, int sig);

// pthread.h (man3/pthread_self.3.html, man3/pthread_mutex_init.3.html): pthread_t is a pointer.
struct _opaque_pthread_t {
    long __sig;
    char __opaque[8176];
};
typedef struct _opaque_pthread_t *pthread_t;
typedef struct _opaque_pthread_mutex_t {
    long __sig;
    char __opaque[56];
} pthread_mutex_t;
typedef struct _opaque_pthread_mutexattr_t {
    long __sig;
    char __opaque[8];
} pthread_mutexattr_t;
pthread_t pthread_self(void);
int pthread_mutex_init(pthread_mutex_t *restrict mutex, const pthread_mutexattr_t *_Nullable restrict attr);
int pthread_mutex_destroy(pthread_mutex_t *mutex);
int pthread_mutex_lock(pthread_mutex_t *mutex);
int pthread_mutex_trylock(pthread_mutex_t *mutex);
int pthread_mutex_unlock(pthread_mutex_t *mutex);

// dlfcn.h (man3/dlsym.3.html).
#define RTLD_NOW 0x2
void *dlopen(const char *path, int mode);
void *dlsym(void *restrict handle, const char *restrict symbol);

// sys/socket.h, netinet/in.h, arpa/inet.h (man2/socket.2.html, man2/bind.2.html, …).
#define AF_INET 2
#define SOCK_STREAM 1
#define SOL_SOCKET 0xffff
#define SO_REUSEADDR 0x0004
#define SHUT_RDWR 2
struct sockaddr {
    uint8_t sa_len;
    sa_family_t sa_family;
    char sa_data[14];
};
struct in_addr {
    in_addr_t s_addr;
};
struct sockaddr_in {
    uint8_t sin_len;
    sa_family_t sin_family;
    in_port_t sin_port;
    struct in_addr sin_addr;
    char sin_zero[8];
};
int socket(int domain, int type, int protocol);
int setsockopt(int socket, int level, int option_name, const void *option_value, socklen_t option_len);
int bind(int socket, const struct sockaddr *address, socklen_t address_len);
int listen(int socket, int backlog);
int accept(int socket, struct sockaddr *restrict address, socklen_t *restrict address_len);
int getsockname(int socket, struct sockaddr *restrict address, socklen_t *restrict address_len);
int shutdown(int socket, int how);
in_addr_t inet_addr(const char *cp);

#endif

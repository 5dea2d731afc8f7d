/* Counts every allocation of the process it is preloaded into (LD_PRELOAD), by thread:
   the process's first thread (creased's event loop) and all others. The counts live in
   a shared mapping of the file named by CREASE_MALLOC_COUNTS, so the test that started
   the process reads them while it runs. The allocations themselves go to glibc's own
   malloc (__libc_malloc and friends): only the counting is added. */
#define _GNU_SOURCE
#include "malloc_counter.h"
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static uint64_t *counts;
static pid_t first_thread;
static __thread int thread_kind = -1;

__attribute__((constructor)) static void crease_malloc_counter_init(void) {
    first_thread = (pid_t)syscall(SYS_gettid);
    const char *path = getenv("CREASE_MALLOC_COUNTS");
    if (!path) return;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, 4096) == 0) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) counts = p;
    }
    close(fd);
}

static inline void count(void) {
    if (!counts) return;
    if (thread_kind < 0) thread_kind = (pid_t)syscall(SYS_gettid) == first_thread ? CREASE_MALLOC_COUNTER_LOOP : CREASE_MALLOC_COUNTER_OTHERS;
    __atomic_fetch_add(&counts[thread_kind], 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n) { count(); return __libc_malloc(n); }
void *calloc(size_t k, size_t n) { count(); return __libc_calloc(k, n); }
void *realloc(void *p, size_t n) { count(); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
void *valloc(size_t n) { count(); return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n); }
int posix_memalign(void **out, size_t a, size_t n) {
    count();
    if (a < sizeof(void *) || (a & (a - 1)) != 0) return 22; /* EINVAL */
    void *p = __libc_memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
void free(void *p) { __libc_free(p); }

#ifndef CREASE_CLIBUV_SHIM_H
#define CREASE_CLIBUV_SHIM_H
#include <uv.h>
#include <sys/timerfd.h>
#include <malloc.h>  /* malloc_trim: the trace writer gives freed heap pages back */
#include <sys/prctl.h>
/* Names the calling thread (prctl is variadic: Swift cannot call it). */
static inline void crease_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
#endif

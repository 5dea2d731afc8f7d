#ifndef CREASE_CLIBUV_SHIM_H
#define CREASE_CLIBUV_SHIM_H
#include <uv.h>
#include <sys/timerfd.h>
#include <malloc.h>  /* malloc_trim: the trace writer gives freed heap pages back */
#endif

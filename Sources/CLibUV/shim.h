#ifndef CREASE_CLIBUV_SHIM_H
#define CREASE_CLIBUV_SHIM_H
#include <uv.h>
#include <sys/timerfd.h>
#endif

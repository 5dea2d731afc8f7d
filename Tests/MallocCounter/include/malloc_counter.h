/* A counting allocator for tests, loaded into a real creased with LD_PRELOAD. */
#ifndef CREASE_MALLOC_COUNTER_H
#define CREASE_MALLOC_COUNTER_H
/* The counter file's layout: allocations made by the process's first thread (the event
   loop's) and by every other thread, as two 64-bit counters. */
enum { CREASE_MALLOC_COUNTER_LOOP = 0, CREASE_MALLOC_COUNTER_OTHERS = 1 };
#endif

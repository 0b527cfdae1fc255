// A stand-in for a replacement allocator (jemalloc, tcmalloc, mimalloc) loaded as a shared object: its own
// malloc, free, calloc and realloc, which hand the work to the C library's (so memory from either side may
// be freed by the other). Only the addresses matter to the probe (probe.cpp).
#include <stddef.h>

extern void* __libc_malloc(size_t);
extern void __libc_free(void*);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);

void* malloc(size_t n) { return __libc_malloc(n); }
void free(void* p) { __libc_free(p); }
void* calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
void* realloc(void* p, size_t n) { return __libc_realloc(p, n); }

/*
 * evthreads -- turns on libevent's pthread locking exactly once per process.
 *
 * evthread_use_pthreads() is not idempotent in the sense a threaded program needs: every call
 * rewrites libevent's global id callback and re-initialises the shared recursive-mutex
 * attribute, while event loops on other threads read them. Called a second time after the
 * first loop thread has started, it is a data race (ThreadSanitizer reports it against an
 * instrumented libevent). Every module that needs locked bases calls evthreads_enable()
 * instead; only the first call in the process does the work.
 */
#ifndef CROUPIER_EVTHREADS_H
#define CROUPIER_EVTHREADS_H

/* Returns 0, or -1 when libevent could not set up its locks (the result of the first call). */
int evthreads_enable(void);

#endif

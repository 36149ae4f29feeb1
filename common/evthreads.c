#include "evthreads.h"

#include <event2/thread.h>
#include <pthread.h>

static pthread_once_t evthreads_once = PTHREAD_ONCE_INIT;
static int evthreads_rc;

static void evthreads_init(void)
{
    evthreads_rc = evthread_use_pthreads();
}

int evthreads_enable(void)
{
    pthread_once(&evthreads_once, evthreads_init);
    return evthreads_rc;
}

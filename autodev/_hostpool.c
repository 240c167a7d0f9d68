/* A pool of large host buffers, as a NumPy data-memory handler (NEP 49).
 *
 * Mechanism only: which calls run under the handler, how large the pool may grow and
 * from what size a block is pooled are decided in Python (autodev/_residency/hostpool.py),
 * which sets them with configure().
 *
 * Every block the handler allocates starts with a 16-byte header (so the pointer NumPy
 * gets keeps malloc's alignment) that says whether the block is pooled and how large it
 * is: NumPy passes a size to free(), but the header does not depend on it being the size
 * that was allocated. A block below the threshold is plain: malloc, realloc and free of
 * the C library, untouched. A pooled block's capacity is rounded up to a size class (an
 * eighth of a power of two, at least a page) so that calls of nearby sizes share blocks;
 * when freed it waits in the pool, unless that would make the pool hold more than its
 * limit (then the oldest blocks are given back to the C library first). An allocation
 * takes a pooled block of its class when there is one (a hit; calloc zeroes it) and
 * asks the C library otherwise (a miss). If the C library fails, the pool is emptied
 * and the allocation tried once more, before NumPy sees a MemoryError. On Linux a fresh
 * block of 4 MiB or more is advised to use huge pages where NumPy's own allocator would
 * do so (numpy._core.multiarray._get_madvise_hugepage(), passed to configure()), so
 * that a miss costs what NumPy's allocation costs.
 *
 * The pool lives as long as the handler's capsule, which every array allocated under
 * the handler references (NumPy stores it in the array), so a block is never freed into
 * a pool that is gone. A lock guards the pool: NumPy may free an array on any thread,
 * and the lock does not need the GIL.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <stdint.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#define HEADER 16
#define PLAIN 0
#define POOLED 1
#define PAGE 4096

typedef struct {
    size_t size;  /* plain: bytes asked for; pooled: capacity, header included */
    size_t kind;  /* PLAIN or POOLED */
} Header;

typedef struct {
    void *base;
    size_t capacity;
} Block;

typedef struct {
    PyDataMem_Handler handler;  /* first: the capsule's pointer is the pool's */
    PyThread_type_lock lock;
    size_t limit;               /* most bytes the free blocks may hold */
    size_t threshold;           /* least bytes (header included) of a pooled block */
    size_t held;                /* bytes the free blocks hold */
    int hugepages;              /* advise fresh blocks of 4 MiB or more to use huge pages */
    Block *blocks;              /* the free blocks, oldest first */
    size_t count, room;
    unsigned long long hits, misses, released;
} Pool;

static size_t
size_class(size_t n)
{
    size_t top = 1;
    while (top <= n / 2)
        top <<= 1;
    size_t step = top / 8 < PAGE ? PAGE : top / 8;
    return (n + step - 1) / step * step;
}

static void *
user_pointer(void *base, size_t size, size_t kind)
{
    Header *header = (Header *)base;
    header->size = size;
    header->kind = kind;
    return (char *)base + HEADER;
}

static Header *
header_of(void *ptr)
{
    return (Header *)((char *)ptr - HEADER);
}

/* Take the free blocks out of the pool (under its lock) and give them back to the C
 * library. Returns the bytes given back. */
static size_t
empty_pool(Pool *pool)
{
    PyThread_acquire_lock(pool->lock, WAIT_LOCK);
    Block *blocks = pool->blocks;
    size_t count = pool->count, held = pool->held;
    pool->blocks = NULL;
    pool->count = pool->room = 0;
    pool->held = 0;
    pool->released += count;
    PyThread_release_lock(pool->lock);
    for (size_t i = 0; i < count; i++)
        free(blocks[i].base);
    free(blocks);
    return held;
}

/* A pooled block of ``capacity`` bytes (a hit), or NULL (a miss). */
static void *
take(Pool *pool, size_t capacity)
{
    void *base = NULL;
    PyThread_acquire_lock(pool->lock, WAIT_LOCK);
    for (size_t i = pool->count; i-- > 0;) {  /* newest first: likeliest still cached */
        if (pool->blocks[i].capacity == capacity) {
            base = pool->blocks[i].base;
            memmove(&pool->blocks[i], &pool->blocks[i + 1],
                    (pool->count - i - 1) * sizeof(Block));
            pool->count--;
            pool->held -= capacity;
            break;
        }
    }
    if (base != NULL)
        pool->hits++;
    else
        pool->misses++;
    PyThread_release_lock(pool->lock);
    return base;
}

/* ``malloc(n)`` or ``calloc(1, n)`` of the C library; on failure, empty the pool and
 * try once more. */
static void *
system_alloc(Pool *pool, size_t n, int zeroed)
{
    void *base = zeroed ? calloc(1, n) : malloc(n);
    if (base == NULL && empty_pool(pool) > 0)
        base = zeroed ? calloc(1, n) : malloc(n);
    return base;
}

/* The pool's threshold, read under its lock (configure() may change it on any thread). */
static size_t
threshold_of(Pool *pool)
{
    PyThread_acquire_lock(pool->lock, WAIT_LOCK);
    size_t threshold = pool->threshold;
    PyThread_release_lock(pool->lock);
    return threshold;
}

/* Ask the kernel for huge pages over the whole pages of a fresh block of 4 MiB or more
 * (as NumPy's default allocator does; an old kernel's refusal changes nothing). */
static void
advise_hugepages(Pool *pool, void *base, size_t capacity)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!pool->hugepages || capacity < ((size_t)1 << 22))
        return;
    uintptr_t start = ((uintptr_t)base + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    uintptr_t stop = ((uintptr_t)base + capacity) & ~(uintptr_t)(PAGE - 1);
    if (stop > start)
        (void)madvise((void *)start, stop - start, MADV_HUGEPAGE);
#else
    (void)pool;
    (void)base;
    (void)capacity;
#endif
}

static void *
pool_alloc(Pool *pool, size_t size, int zeroed)
{
    if (size > (size_t)-1 / 2)
        return NULL;
    size_t n = size + HEADER;
    if (n < threshold_of(pool)) {
        void *base = system_alloc(pool, n, zeroed);
        return base == NULL ? NULL : user_pointer(base, size, PLAIN);
    }
    size_t capacity = size_class(n);
    void *base = take(pool, capacity);
    if (base != NULL) {
        void *ptr = user_pointer(base, capacity, POOLED);
        if (zeroed)
            memset(ptr, 0, size);
        return ptr;
    }
    base = system_alloc(pool, capacity, zeroed);
    if (base == NULL)
        return NULL;
    advise_hugepages(pool, base, capacity);
    return user_pointer(base, capacity, POOLED);
}

static void *
pool_malloc(void *ctx, size_t size)
{
    return pool_alloc((Pool *)ctx, size, 0);
}

static void *
pool_calloc(void *ctx, size_t nelem, size_t elsize)
{
    if (elsize != 0 && nelem > (size_t)-1 / elsize)
        return NULL;
    return pool_alloc((Pool *)ctx, nelem * elsize, 1);
}

/* Put a pooled block into the pool, giving back the oldest blocks while the pool would
 * hold more than its limit; a block larger than the limit goes straight back. */
static void
give(Pool *pool, void *base, size_t capacity)
{
    PyThread_acquire_lock(pool->lock, WAIT_LOCK);
    if (capacity > pool->limit) {
        PyThread_release_lock(pool->lock);
        free(base);
        return;
    }
    size_t evict = 0, freed = 0;
    while (pool->held - freed + capacity > pool->limit)
        freed += pool->blocks[evict++].capacity;
    for (size_t i = 0; i < evict; i++)
        free(pool->blocks[i].base);
    memmove(pool->blocks, pool->blocks + evict, (pool->count - evict) * sizeof(Block));
    pool->count -= evict;
    pool->held -= freed;
    pool->released += evict;
    if (pool->count == pool->room) {
        size_t room = pool->room ? 2 * pool->room : 16;
        Block *grown = realloc(pool->blocks, room * sizeof(Block));
        if (grown == NULL) {
            PyThread_release_lock(pool->lock);
            free(base);
            return;
        }
        pool->blocks = grown;
        pool->room = room;
    }
    pool->blocks[pool->count].base = base;
    pool->blocks[pool->count].capacity = capacity;
    pool->count++;
    pool->held += capacity;
    PyThread_release_lock(pool->lock);
}

static void
pool_free(void *ctx, void *ptr, size_t size)
{
    (void)size;  /* the header knows */
    if (ptr == NULL)
        return;
    Header *header = header_of(ptr);
    if (header->kind == PLAIN)
        free(header);
    else
        give((Pool *)ctx, header, header->size);
}

static void *
pool_realloc(void *ctx, void *ptr, size_t new_size)
{
    Pool *pool = (Pool *)ctx;
    if (ptr == NULL)
        return pool_malloc(ctx, new_size);
    Header *header = header_of(ptr);
    if (header->kind == PLAIN && new_size < (size_t)-1 / 2
            && new_size + HEADER < threshold_of(pool)) {
        void *base = realloc(header, new_size + HEADER);
        if (base == NULL && empty_pool(pool) > 0)
            base = realloc(header, new_size + HEADER);
        return base == NULL ? NULL : user_pointer(base, new_size, PLAIN);
    }
    size_t old = header->kind == PLAIN ? header->size : header->size - HEADER;
    void *moved = pool_malloc(ctx, new_size);
    if (moved == NULL)
        return NULL;
    memcpy(moved, ptr, old < new_size ? old : new_size);
    pool_free(ctx, ptr, old);
    return moved;
}

static void
destroy_pool(PyObject *capsule)
{
    Pool *pool = (Pool *)PyCapsule_GetPointer(capsule, "mem_handler");
    if (pool == NULL)
        return;
    for (size_t i = 0; i < pool->count; i++)
        free(pool->blocks[i].base);
    free(pool->blocks);
    PyThread_free_lock(pool->lock);
    free(pool);
}

/* A new handler capsule owning a new, empty pool (limit 0: pools nothing). */
static PyObject *
new_handler(void)
{
    Pool *pool = calloc(1, sizeof(Pool));
    if (pool == NULL)
        return PyErr_NoMemory();
    pool->lock = PyThread_allocate_lock();
    if (pool->lock == NULL) {
        free(pool);
        return PyErr_NoMemory();
    }
    pool->threshold = (size_t)-1;
    strncpy(pool->handler.name, "autodev_host_pool", sizeof pool->handler.name - 1);
    pool->handler.version = 1;
    pool->handler.allocator.ctx = pool;
    pool->handler.allocator.malloc = pool_malloc;
    pool->handler.allocator.calloc = pool_calloc;
    pool->handler.allocator.realloc = pool_realloc;
    pool->handler.allocator.free = pool_free;
    PyObject *capsule = PyCapsule_New(&pool->handler, "mem_handler", destroy_pool);
    if (capsule == NULL) {
        PyThread_free_lock(pool->lock);
        free(pool);
    }
    return capsule;
}

/* ----------------------------------------------------------------- the module */

typedef struct {
    PyObject *handler;
} State;

static Pool *
pool_of(PyObject *module)
{
    State *state = (State *)PyModule_GetState(module);
    return (Pool *)PyCapsule_GetPointer(state->handler, "mem_handler");
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    Py_ssize_t limit, threshold;
    int hugepages = 0;
    if (!PyArg_ParseTuple(args, "nn|p:configure", &limit, &threshold, &hugepages))
        return NULL;
    if (limit < 0 || threshold < 0) {
        PyErr_Format(PyExc_ValueError,
                     "limit and threshold must be at least 0 bytes. Got %zd and %zd instead.",
                     limit, threshold);
        return NULL;
    }
    Pool *pool = pool_of(module);
    if (pool == NULL)
        return NULL;
    PyThread_acquire_lock(pool->lock, WAIT_LOCK);
    pool->limit = (size_t)limit;
    pool->threshold = threshold > HEADER ? (size_t)threshold : HEADER;
    pool->hugepages = hugepages;
    int over = pool->held > pool->limit;
    PyThread_release_lock(pool->lock);
    if (over)  /* (a lower limit: start again empty) */
        empty_pool(pool);
    Py_RETURN_NONE;
}

static PyObject *
swap(PyObject *module, PyObject *handler)
{
    (void)module;
    if (handler != Py_None && !PyCapsule_IsValid(handler, "mem_handler")) {
        PyErr_Format(PyExc_TypeError, "swap() takes a NumPy memory handler capsule or None. "
                     "Got %R instead.", handler);
        return NULL;
    }
    return PyDataMem_SetHandler(handler == Py_None ? NULL : handler);
}

static PyObject *
release(PyObject *module, PyObject *unused)
{
    (void)unused;
    Pool *pool = pool_of(module);
    if (pool == NULL)
        return NULL;
    return PyLong_FromSize_t(empty_pool(pool));
}

static PyObject *
stats(PyObject *module, PyObject *unused)
{
    (void)unused;
    Pool *pool = pool_of(module);
    if (pool == NULL)
        return NULL;
    PyThread_acquire_lock(pool->lock, WAIT_LOCK);
    Pool copy = *pool;
    PyThread_release_lock(pool->lock);
    return Py_BuildValue("{s:n,s:n,s:K,s:K,s:K,s:n,s:n}",
                         "held_bytes", (Py_ssize_t)copy.held,
                         "held_blocks", (Py_ssize_t)copy.count,
                         "hits", copy.hits, "misses", copy.misses, "released", copy.released,
                         "limit", (Py_ssize_t)copy.limit,
                         "threshold", (Py_ssize_t)copy.threshold);
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(limit, threshold, hugepages=False)\n--\n\nLet the pool hold at most limit "
     "bytes of free blocks, and pool blocks of threshold bytes or more (a lower limit empties "
     "it); advise fresh blocks of 4 MiB or more to use huge pages if hugepages (Linux)."},
    {"swap", swap, METH_O,
     "swap(handler)\n--\n\nMake handler (a NumPy memory handler capsule, or None for NumPy's "
     "default) the one in force in this context; return the one that was."},
    {"release", release, METH_NOARGS,
     "release()\n--\n\nGive every free block back to the C library; return the bytes given."},
    {"stats", stats, METH_NOARGS,
     "stats()\n--\n\nheld_bytes, held_blocks, hits, misses, released (blocks given back), "
     "limit and threshold, as a dict."},
    {NULL},
};

static int
module_exec(PyObject *module)
{
    if (PyArray_ImportNumPyAPI() < 0)
        return -1;
    State *state = (State *)PyModule_GetState(module);
    state->handler = new_handler();
    if (state->handler == NULL)
        return -1;
    return PyModule_AddObjectRef(module, "handler", state->handler);
}

static int
module_traverse(PyObject *module, visitproc visit, void *arg)
{
    State *state = (State *)PyModule_GetState(module);
    Py_VISIT(state->handler);
    return 0;
}

static int
module_clear(PyObject *module)
{
    State *state = (State *)PyModule_GetState(module);
    Py_CLEAR(state->handler);
    return 0;
}

static void
module_free(void *module)
{
    module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "autodev._hostpool",
    .m_doc = "A pool of large host buffers as a NumPy data-memory handler (NEP 49).",
    .m_size = sizeof(State),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC
PyInit__hostpool(void)
{
    return PyModuleDef_Init(&module_def);
}

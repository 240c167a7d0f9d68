/* autodev._speedups: the compiled hot path (issue 13, item 5).
 *
 * The commonest tiny calls cost little more than NumPy's own call: `a + b`, `sin(a)`,
 * `sum(a)`, `count_nonzero(a)` and the other reductions of one array, `zeros(n)`,
 * `array([...])` of numbers, `a.copy()`, `a.view(dtype)`, `a.astype(dtype)`, `a.item()`, `a[i]`, `a[i:j]`,
 * `b[i, j]`, `a[()]`, `a[...]`, `a[i:j] = x`, `s[i] = 'x'`. They run in C in the two
 * states where the Python paths already call NumPy at once: no GPU usable and nothing
 * watching (STATE.fast), and, with a GPU usable, host data below the bound Python's table
 * gives the family under the policy in force (STATE.host_fast, _cost.cache.HOST_NOW). Each compiled callable here stands in front of the
 * pure-Python function that does the same thing (its *fallback*) and handles only the
 * cases that function's own fast path handles, doing exactly what it does; anything else
 * (a keyword, an operand of another type, a subclass, a possible temporary to elide, data
 * on a device, a bound not in the table yet or not above the call's work, an operator or ufunc call while a
 * deferred chain is pending, a write while a chain reads memory through views) goes to
 * the fallback with the arguments untouched. The Python functions stay the reference: with
 * AUTODEV_PURE_PYTHON=1, or where this module could not be compiled, autodev runs them
 * alone and every test passes the same (tests/arrays/test_speedups.py compares the two).
 *
 * No rule is written here. Which calls run at once is decided by Python and given to this
 * module as values, which the Python paths read too; the C only compares against them:
 *   - the state flags (no GPU usable, a GPU usable with nothing watching or pinned, a
 *     chain pending, memory watched) and the size from which threads, the host pool or
 *     fusion take a call (set_fast, set_pending, set_watching, set_split_from);
 *   - with a GPU usable, the work below which host data runs on the host, per policy and
 *     family (_cost.cache.HOST_NOW), the work bounded by element counts as Python
 *     declares for the family (_cost.families.ELEMENTS_BOUND: the largest operand's,
 *     the operands' broadcast, or the product of the two; a call not shown below goes to
 *     Python, which counts its work), and whether new arrays are made on the host under each policy
 *     (_config.MADE_ON_HOST);
 *   - the operand, scalar, value and key types passed to NumPy as they are, the nesting
 *     depth and keywords array() passes on, a temporary's reference count (configure,
 *     set_sequence);
 *   - a write goes to the fallback where its storage holds device memory (the storage's
 *     own `mirrored` and `shared` flags, the array's mirror slot).
 *
 * New arrays are made as the Python code makes them: object.__new__(ndarray) and one
 * store per slot. The slots' offsets are read from the class's own member descriptors
 * (configure()), so the class stays a plain Python class with __slots__.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if PY_VERSION_HEX >= 0x030C0000
#define OBJECT_SLOT Py_T_OBJECT_EX  /* what __slots__ members are (Python.h from 3.12 on) */
#define MEMBER_READONLY Py_READONLY
#else
#include <structmember.h>  /* (the same constants' older names) */
#define OBJECT_SLOT T_OBJECT_EX
#define MEMBER_READONLY READONLY
#endif
#include <stddef.h>

/* ------------------------------------------------------------------ module state */

static PyTypeObject *Array = NULL;      /* autodev.ndarray */
static PyTypeObject *NpArray = NULL;    /* numpy.ndarray */
static PyObject *Cpu = NULL;            /* autodev's CPU device */
static PyObject *PlainOperands = NULL;  /* frozenset of types passed to NumPy as they are */
static PyObject *StorageType = NULL;    /* autodev._residency.storage.Storage */
static PyObject *VersionName = NULL;    /* "version" */
static PyObject *One = NULL;            /* 1 */
static PyObject *PlainScalars = NULL;   /* PlainOperands less numpy.ndarray: a ufunc's */
/* A set of types, tested by identity: no Python code runs (a type's __hash__ could). */
#define MAX_TYPES 32
typedef struct {
    PyTypeObject *types[MAX_TYPES];
    int n;
} TypeList;
static TypeList ScalarTypes;            /* PlainScalars' members (the set holds them) */
static TypeList ArgumentTypes;          /* _operators._PLAIN_ARGUMENTS: a dispatched method's
                                           arguments NumPy is given as they are */
static PyObject *PlainArguments = NULL; /* (that set, holding them) */
static TypeList KeyTypes;               /* _indexing._BASIC_KEYS: index items NumPy reads
                                           alike whatever autodev does */
static PyObject *BasicKeys = NULL;      /* (that set, holding them) */
static int SequenceDepth = 0;           /* _creation.SEQUENCE_DEPTH (0: none taken) */
static PyObject *ArrayKeywords = NULL;  /* _creation.ARRAY_KEYWORDS: a tuple of str */
static PyObject *PlainValues = NULL;    /* PlainOperands, str and bytes: what a host write
                                           passes to NumPy as it is (_indexing._PLAIN_VALUES) */
static PyObject *HostNow = NULL;        /* _cost.cache.HOST_NOW: policy -> family -> work
                                           below which host data runs on the host */
static PyObject *MadeOnHost = NULL;     /* _config.MADE_ON_HOST: policy -> bool */
static PyObject *Policy = NULL;         /* _config.POLICY: the ContextVar of the policy in force */
static PyObject *MirroredName = NULL;   /* "mirrored" */
static PyObject *SharedName = NULL;     /* "shared" */
static int Fast = 0;                    /* STATE.fast: no GPU usable, nothing watching */
static int HostFast = 0;                /* STATE.host_fast: a GPU usable, nothing watching,
                                           nothing pinned: tiny host calls skip the decision */
static int HostMade = 0;                /* STATE.host_made: HostFast, or no GPU probed yet
                                           (nothing watching or pinned): creation the
                                           policy makes on the host (MadeOnHost) */
static int Pending = 0;                 /* a deferred chain is pending (autodev._fusion): as
                                           the Python operators and ufunc calls do on their
                                           _ACTIVE, those go to the fallback, whose general
                                           path records or forces pending operands */
static Py_ssize_t TemporaryRefs = -1;   /* refcount of a temporary operand, or -1 */
static int Watching = 0;                /* a deferred chain reads memory through views
                                           (autodev._fusion.WATCHED): every write goes
                                           to the fallback, which evaluates it first */
static Py_ssize_t SplitFrom = PY_SSIZE_T_MAX;  /* _threads.general_from(): with no GPU
                                                  usable, a call this large goes to the
                                                  fallback, which may split it over threads
                                                  or defer it */
static Py_ssize_t TotalFrom = PY_SSIZE_T_MAX;  /* _threads.total_from(): a reduction over
                                                  every axis this large goes there */
static PyObject *SplitFloors = NULL;            /* _threads.split_floors(): a call whose
                                                  FastCall names a family goes there from
                                                  that family's size (SplitFrom or more) */
static Py_ssize_t PooledFrom = PY_SSIZE_T_MAX; /* _host_buffers.POOLED_FROM and THRESHOLD: */
static Py_ssize_t PooledBytes = PY_SSIZE_T_MAX;/* a call with a NumPy operand of PooledBytes
                                                  or more runs in the host pool's scope */
static PyObject *PoolSwap = NULL;              /* autodev._hostpool.swap */
static PyObject *PoolHandler = NULL;           /* autodev._hostpool.handler */
static PyObject *NbytesName = NULL;            /* "nbytes" */

enum { S_DATA, S_DEVICE, S_STORAGE, S_MIRROR, S_SCALAR, S_PIN, S_FACE, N_SLOTS };
static const char *SlotNames[N_SLOTS] = {"_native", "_device", "_storage", "_mirror",
                                         "_scalar", "_pin", "_face"};
static Py_ssize_t Offsets[N_SLOTS];
static Py_ssize_t MirroredOffset = 0;   /* its `mirrored` and `shared` slots: whether a */
static Py_ssize_t SharedOffset = 0;     /* write has device memory to release */
static Py_ssize_t VersionOffset = 0;    /* Storage's `version` slot (its class's own): a
                                           host write moves it (0: not bound yet) */

#define SLOT(obj, i) (*(PyObject **)((char *)(obj) + Offsets[i]))

/* A new autodev.ndarray on the host holding `data` (a new reference, stolen), with
 * `storage` and `pin` (borrowed). NULL on error, with `data` released. */
static PyObject *
new_host(PyObject *data, PyObject *storage, PyObject *pin)
{
    PyObject *a = Array->tp_alloc(Array, 0);
    if (a == NULL) {
        Py_DECREF(data);
        return NULL;
    }
    SLOT(a, S_DATA) = data;
    Py_INCREF(Cpu);
    SLOT(a, S_DEVICE) = Cpu;
    Py_INCREF(storage);
    SLOT(a, S_STORAGE) = storage;
    Py_INCREF(Py_None);
    SLOT(a, S_MIRROR) = Py_None;
    Py_INCREF(Py_False);
    SLOT(a, S_SCALAR) = Py_False;
    Py_INCREF(pin);
    SLOT(a, S_PIN) = pin;
    Py_INCREF(Py_False);
    SLOT(a, S_FACE) = Py_False;
    return a;
}

/* Hot-path calls run here, counted as autodev._trace.tick() counts the Python paths'
 * (autodev._trace.fast_calls adds the two). */
static unsigned long long Calls = 0;

/* `type(obj) in types`, as the Python paths test it: 1, 0, or -1 with the error its type's
 * __hash__/__eq__ raised (an unhashable type's TypeError means "not plain", the fallback
 * decides). */
static int
is_plain(PyObject *types, PyObject *obj)
{
    int plain = PySet_Contains(types, (PyObject *)Py_TYPE(obj));
    if (plain < 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        return 0;
    }
    return plain;
}

/* The operand NumPy receives for `obj` on the fast path, through `*out` (borrowed): 1; 0
 * when the fallback must handle it; -1 on error. */
static int
plain_operand(PyObject *obj, PyObject *types, PyObject **out)
{
    if (Py_TYPE(obj) == Array) {
        *out = SLOT(obj, S_DATA);
        return *out != NULL;
    }
    int plain = is_plain(types, obj);
    if (plain > 0)
        *out = obj;
    return plain;
}


/* ---- with no GPU usable: calls large enough to split over threads go to the fallback */

/* The leading fields of NumPy's array object (PyArrayObject_fields in NumPy's
 * ndarraytypes.h; part of NumPy's ABI, which every compiled extension relies on). */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;             /* what `.base` gives (NULL: None) */
} ArrayHead;

/* Elements of the NumPy array `a` (0 for anything else). */
static Py_ssize_t
elements(PyObject *a)
{
    if (a == NULL || !PyObject_TypeCheck(a, NpArray))
        return 0;
    ArrayHead *head = (ArrayHead *)a;
    Py_ssize_t n = 1;
    for (int i = 0; i < head->nd; i++)
        n *= head->dimensions[i];
    return n;
}

/* How a family's work is bounded by its operands' element counts, as Python declares it
 * (_cost.families.ELEMENTS_BOUND): the largest operand's, the product of the first two's,
 * or the operands broadcast together (at least the largest's). */
enum Bound { BOUND_LARGEST, BOUND_PRODUCT, BOUND_BROADCAST };

/* Elements of the result of broadcasting the `n` NumPy arrays `heads` together, as
 * _cost.families.broadcast_elements counts them (where they do not broadcast, a count of
 * no meaning: NumPy raises); PY_SSIZE_T_MAX past it. */
static Py_ssize_t
broadcast_elements(ArrayHead *const *heads, Py_ssize_t n)
{
    int nd = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (heads[i]->nd > nd)
            nd = heads[i]->nd;
    Py_ssize_t size = 1;
    for (int k = 1; k <= nd; k++) {
        Py_ssize_t d = 1;
        for (Py_ssize_t i = 0; i < n; i++)
            if (k <= heads[i]->nd && heads[i]->dimensions[heads[i]->nd - k] != 1)
                d = heads[i]->dimensions[heads[i]->nd - k];
        if (d != 0 && size > PY_SSIZE_T_MAX / d)
            return PY_SSIZE_T_MAX;
        size *= d;
    }
    return size;
}

/* The elements of a call's result from NumPy arrays `x` and `y` of `a` and `b` elements
 * (0: not an array, or empty): the larger count, or, where their product reaches `bound`,
 * their broadcast (x[:, None] - c: more than either operand, never more than that product;
 * a multiply where the counts are small enough, a division only past it). */
static Py_ssize_t
result_elements(PyObject *x, Py_ssize_t a, PyObject *y, Py_ssize_t b, Py_ssize_t bound)
{
    Py_ssize_t most = a > b ? a : b, least = a > b ? b : a;
    if (least == 0 || (most < ((Py_ssize_t)1 << 31) ? most * least < bound
                                                     : most <= (bound - 1) / least))
        return most;
    ArrayHead *both[2] = {(ArrayHead *)x, (ArrayHead *)y};
    Py_ssize_t n = broadcast_elements(both, 2);
    return n > most ? n : most;
}

/* 1 if the call's result (a NumPy operand's elements, or two operands' broadcast: at most
 * the product of theirs) is at least SplitFrom elements and, where the call's FastCall
 * names a family of SplitFloors (`threads`, NULL or None: none), at least that family's
 * size: the general path may split or defer it (one compare while no call can be split:
 * one thread allowed, or threads never paying here). */
static int
may_split(PyObject *threads, PyObject *x, PyObject *y)
{
    if (SplitFrom == PY_SSIZE_T_MAX)
        return 0;
    Py_ssize_t n = result_elements(x, elements(x), y, elements(y), SplitFrom);
    if (n < SplitFrom)
        return 0;
    if (threads == NULL || threads == Py_None || SplitFloors == NULL)
        return 1;
    PyObject *found = PyDict_GetItemWithError(SplitFloors, threads);  /* borrowed; a str key */
    if (found == NULL || !PyLong_CheckExact(found)) {
        PyErr_Clear();  /* (a str's lookup raises nothing: the general path decides) */
        return 1;
    }
    Py_ssize_t from = PyLong_AsSsize_t(found);
    if (from == -1 && PyErr_Occurred()) {
        PyErr_Clear();  /* (too large for an index: never split) */
        return 0;
    }
    return n >= from;
}


/* The bytes from which NumPy reuses a temporary's buffer (_refcounts._ELIDE_BYTES, exported
 * as ELIDE_BYTES), and the elements below which no array reaches them (32 bytes: the
 * largest numeric item, complex256). */
#define ELIDE_BYTES (256 * 1024)
#define ELIDE_FROM (ELIDE_BYTES / 32)

/* 1 if `a`, an operand of a FastCall that may elide (`can_elide`), is an autodev array of
 * ELIDE_BYTES or more (its data: `data`) that may be a temporary owning its buffer (no
 * storage shared with views, no base): the fallback may compute the result into that
 * buffer, as NumPy's temporary elision does (on an error reading the bytes too: the
 * fallback reads them again). */
static int
may_elide(int can_elide, PyObject *a, PyObject *data)
{
    if (!can_elide || Py_TYPE(a) != Array || Py_REFCNT(a) > TemporaryRefs
            || SLOT(a, S_STORAGE) != Py_None || Py_TYPE(data) != NpArray
            || ((ArrayHead *)data)->base != NULL
            || elements(data) < ELIDE_FROM)
        return 0;
    PyObject *nbytes = PyObject_GetAttr(data, NbytesName);
    Py_ssize_t n = nbytes == NULL ? -1 : PyLong_AsSsize_t(nbytes);
    Py_XDECREF(nbytes);
    if (n == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    return n >= ELIDE_BYTES;
}

/* 1 if `a` is a NumPy array of PooledBytes or more (_host_buffers.is_large's test of one
 * operand), 0 if not, -1 on error. */
static int
large(PyObject *a)
{
    if (a == NULL || Py_TYPE(a) != NpArray || elements(a) < PooledFrom)
        return 0;
    PyObject *nbytes = PyObject_GetAttr(a, NbytesName);
    if (nbytes == NULL)
        return -1;
    Py_ssize_t n = PyLong_AsSsize_t(nbytes);
    Py_DECREF(nbytes);
    if (n == -1 && PyErr_Occurred())
        return -1;
    return n >= PooledBytes;
}

/* NumPy's call `func(*operands[:n], **dict(zip(kwnames, operands[n:])))` of a call the
 * fast path runs, as the Python paths run it: in the host pool's scope where a positional
 * operand is large (_host_buffers.large_buffers, entered by _residency.memory.host_pooled
 * where _host_buffers.is_large finds one). NULL with `*retry` set where such a call raised
 * MemoryError, which is cleared: the fallback runs it again, as host_pooled does, after
 * releasing what autodev holds. */
static PyObject *
host_call_with(PyObject *func, PyObject *const *operands, size_t n, PyObject *kwnames,
               int *retry)
{
    *retry = 0;
    int pooled = 0;
    for (size_t i = 0; PoolSwap != NULL && Fast && pooled == 0 && i < n; i++)
        pooled = large(operands[i]);  /* (large(NULL): 0) */
    if (pooled < 0)
        return NULL;
    if (!pooled)  /* (with a GPU usable the host fast paths call NumPy as it is) */
        return PyObject_Vectorcall(func, operands, n, kwnames);
    PyObject *previous = PyObject_CallOneArg(PoolSwap, PoolHandler);
    if (previous == NULL)
        return NULL;
    PyObject *result = PyObject_Vectorcall(func, operands, n, kwnames);
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);  /* (the handler is restored even after an error) */
    PyObject *restored = PyObject_CallOneArg(PoolSwap, previous);
    Py_DECREF(previous);
    if (restored == NULL) {
        Py_XDECREF(result);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(trace);
        return NULL;
    }
    Py_DECREF(restored);
    PyErr_Restore(type, value, trace);
    if (result == NULL && PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        *retry = 1;
    }
    return result;
}

/* host_call_with() of positional operands alone. */
static PyObject *
host_run(PyObject *func, PyObject *const *operands, size_t n, int *retry)
{
    return host_call_with(func, operands, n, NULL, retry);
}

/* The number of keyword arguments `kwnames` names (0 for NULL), or -1 where one of them
 * is `out` (which the Python paths read: the fallback's). */
static Py_ssize_t
keywords_taken(PyObject *kwnames)
{
    if (kwnames == NULL)
        return 0;
    Py_ssize_t count = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < count; i++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "out") == 0)
            return -1;
    return count;
}


/* ---- with a GPU usable: the tables the Python paths read say what runs on the host */

/* The policy in force (a new reference), or NULL on error: the ContextVar's value in this
 * context, as _config.policy_now reads it (the variable has a default). */
static PyObject *
policy(void)
{
    PyObject *value = NULL;
    if (PyContextVar_Get(Policy, NULL, &value) < 0)
        return NULL;
    if (value == NULL)  /* (not set, no default: as ContextVar.get's LookupError) */
        PyErr_SetString(PyExc_LookupError, "the policy's context variable holds no value");
    return value;
}

/* 1 if a creation call makes its array of host values on the host at once: with no GPU
 * usable, and, with one usable or none probed yet (HostMade), where MADE_ON_HOST says so
 * under the policy in force; 0 if not (the fallback places it); -1 on error. */
static int
made_on_host(void)
{
    if (Fast || !HostMade)
        return Fast;
    PyObject *name = policy();
    if (name == NULL)
        return -1;
    PyObject *made = PyDict_GetItemWithError(MadeOnHost, name);  /* borrowed */
    Py_DECREF(name);
    return made == Py_True ? 1 : made == NULL && PyErr_Occurred() ? -1 : 0;
}

/* HOST_NOW[policy][family], the work below which a call of host data runs on the host at
 * once, through `*bound`: 1; 0 where the table does not hold it (the fallback looks it
 * up); -1 on error. */
static int
host_bound(PyObject *family, Py_ssize_t *bound)
{
    PyObject *name = policy();
    if (name == NULL)
        return -1;
    PyObject *table = PyDict_GetItemWithError(HostNow, name);  /* borrowed (HostNow holds it) */
    Py_DECREF(name);
    if (table == NULL || !PyDict_Check(table))
        return PyErr_Occurred() ? -1 : 0;
    PyObject *found = PyDict_GetItemWithError(table, family);  /* borrowed */
    if (found == NULL || !PyLong_CheckExact(found))
        return PyErr_Occurred() ? -1 : 0;
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(found, &overflow);
    if (n == -1 && PyErr_Occurred())
        return -1;
    *bound = overflow > 0 || n > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : overflow < 0 ? 0 : (Py_ssize_t)n;
    return 1;
}

/* For a host array `a` whose data `data` the caller holds, and operand `y` (NULL: none),
 * with a GPU usable, in `family`: 1 if the call runs on the host at once (its work bounded
 * below HOST_NOW's bound), with the NumPy operand through `*o` (a new reference, or NULL
 * for none); 0 for the fallback; -1 on error (`*o` NULL for both). The work is bounded as
 * `how` says (a Bound): by the largest operand's elements, by the two arrays' broadcast
 * (counted only where their product reaches the bound), or by the product of theirs (a
 * scalar operand: the fallback). The operand is held from the moment it is read: the
 * policy's callable runs after it. */
static int
host_call(PyObject *family, int how, PyObject *a, PyObject *data, PyObject *y,
          PyObject **o)
{
    PyObject *operand = NULL;
    *o = NULL;
    if (family == Py_None || SLOT(a, S_DEVICE) != Cpu || !PyObject_TypeCheck(data, NpArray))
        return 0;
    Py_ssize_t work = elements(data), other = 0;  /* (other: y's elements, an array's) */
    if (y != NULL) {
        if (Py_TYPE(y) == Array) {
            if (SLOT(y, S_DEVICE) != Cpu || (operand = SLOT(y, S_DATA)) == NULL
                    || !PyObject_TypeCheck(operand, NpArray))
                return 0;
            Py_ssize_t n = elements(operand);
            if (how == BOUND_PRODUCT)
                work = work && n > PY_SSIZE_T_MAX / work ? PY_SSIZE_T_MAX : work * n;
            else
                other = n;
        } else {
            if (how == BOUND_PRODUCT)
                return 0;
            int plain = is_plain(PlainScalars, y);
            if (plain <= 0)
                return plain;
            operand = y;
        }
        Py_INCREF(operand);
    }
    Py_ssize_t bound = 0;
    int found = host_bound(family, &bound);
    if (found > 0 && other > 0)  /* the larger count, or their broadcast where it may tell */
        work = how == BOUND_BROADCAST ? result_elements(data, work, operand, other, bound)
                                      : work > other ? work : other;
    if (found > 0 && work < bound) {
        *o = operand;
        return 1;
    }
    Py_XDECREF(operand);
    return found < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ the callables */

enum Kind {
    K_BINARY,     /* a.__op__(other): func(data, other) */
    K_REFLECTED,  /* a.__rop__(other): func(other, data) */
    K_GETITEM,    /* a[key], a basic key (ints, slices, `...`, None, or a tuple of them) */
    K_SETITEM,    /* a[key] = value, a basic key, value plain (a str or bytes too) */
    K_UFUNC,      /* ufunc(x) or ufunc(x, y) */
    K_REDUCE,     /* sum(a): reduce(data, None), below the split floor (a full sum may be split) */
    K_CREATE,     /* zeros(shape[, dtype[, order]]) */
    K_METHOD,     /* a.copy([order]), a.view([dtype]), a.astype(dtype): func(data[, arg]) */
    K_UNARY,      /* f(a) of a reduction: func(data) */
    K_SEQUENCE,   /* array(numbers in lists, ...): func(*args, **kwargs) */
    K_FUNCTION,   /* f(*args, **kw) of a dispatched function, no out=: func(*host arguments) */
    K_ARRAY_METHOD, /* a.name(*args, **kw) of a dispatched method, plain values, no out=:
                       func(data, *args, **kw) */
    K_MADE,       /* f(*args, **kw) of a creation function that takes no arrays, no device=
                     or like=: func(*args, **kw) */
};

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    int can_elide;       /* K_BINARY, K_UFUNC (an operator): a temporary operand may be
                            elided (fallback) */
    int bound;           /* how the family's work is bounded by the operands' elements
                            (_cost.families.ELEMENTS_BOUND): a Bound */
    int primary;         /* K_ARRAY_METHOD: it runs where its array lives (a view method:
                            with a GPU usable, on host data at once too) */
    int nin;             /* K_UFUNC: the ufunc's inputs (a one-input ufunc's second
                            positional argument is `out`: the fallback's); K_FUNCTION and
                            K_UNARY: the most positional arguments it takes (from there on `out` and
                            what follows it: the fallback's) */
    PyObject *func;      /* NumPy's callable */
    PyObject *fallback;  /* the pure-Python function, called with the same arguments */
    PyObject *other;     /* what a result that is not one NumPy array goes through */
    PyObject *family;    /* the cost family whose HOST_NOW bound a host call must be
                            below with a GPU usable, or None: such calls go to the
                            fallback */
    PyObject *threads;   /* with no GPU usable, the key of SplitFloors that says from
                            what size the call goes to the fallback (to be split over
                            threads, or deferred), or None: from SplitFrom */
    PyObject *weaklist;  /* weak references, as a function has them */
} FastCall;

static PyObject *
delegate(FastCall *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* A NumPy result as the Python fast path returns it: a new host array (no storage, not
 * pinned), or `other(result)` when it is not one NumPy array. Steals `result`. */
static PyObject *
finish(FastCall *self, PyObject *result)
{
    if (result == NULL)
        return NULL;
    if (Py_TYPE(result) == NpArray)
        return new_host(result, Py_None, Py_None);
    if (self->other == Py_None)
        return result;
    PyObject *out = PyObject_CallOneArg(self->other, result);
    Py_DECREF(result);
    return out;
}

/* A binary operator's NumPy result, as finish() gives it, except that a result which is
 * not one NumPy array goes through `other(result, a, operand)`: a 0-d result depends on
 * the operands (autodev._array._zero_d). Steals `result`. */
static PyObject *
finish_binary(FastCall *self, PyObject *result, PyObject *a, PyObject *operand)
{
    if (result == NULL || Py_TYPE(result) == NpArray || self->other == Py_None)
        return finish(self, result);
    PyObject *out = PyObject_CallFunctionObjArgs(self->other, result, a, operand, NULL);
    Py_DECREF(result);
    return out;
}

static PyObject *
binary(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    if (Pending || PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL)  /* (pending: the
        fallback records or forces a pending operand, as the Python operators do) */
        return delegate(self, args, nargsf, kwnames);
    PyObject *a = args[0], *data, *o;
    /* an array of the array-API face: the fallback keeps the face (0-d results) */
    if (Py_TYPE(a) != Array || SLOT(a, S_DATA) == NULL || SLOT(a, S_FACE) != Py_False)
        return delegate(self, args, nargsf, kwnames);
    if (Fast) {
        /* as Python: the operand's type is checked (its type's __hash__ may run code)
         * before self._native is read */
        int plain = plain_operand(args[1], PlainOperands, &o);
        if (plain < 0)
            return NULL;
        if (!plain || (data = SLOT(a, S_DATA)) == NULL || may_split(self->threads, data, o))
            return delegate(self, args, nargsf, kwnames);
        Py_INCREF(data);
        Py_INCREF(o);
    } else {
        /* as Python: self._native is read (and held) before the operand's checks */
        data = SLOT(a, S_DATA);
        Py_INCREF(data);
        int host = HostFast ? host_call(self->family, self->bound,
                                        a, data, args[1], &o) : 0;
        if (host <= 0) {
            Py_DECREF(data);
            return host < 0 ? NULL : delegate(self, args, nargsf, kwnames);
        }
    }
    if (may_elide(self->can_elide, a, data) || may_elide(self->can_elide, args[1], o)) {
        Py_DECREF(o);
        Py_DECREF(data);
        return delegate(self, args, nargsf, kwnames);
    }
    Calls++;
    PyObject *operands[2];
    operands[self->kind == K_REFLECTED] = data;
    operands[self->kind != K_REFLECTED] = o;
    int retry;
    PyObject *result = host_run(self->func, operands, 2, &retry);
    Py_DECREF(o);
    Py_DECREF(data);
    if (retry) {
        Calls--;
        return delegate(self, args, nargsf, kwnames);
    }
    return finish_binary(self, result, a, args[1]);
}

/* 1 if `t` is one of `list`'s types. */
static inline int
in_types(const TypeList *list, PyTypeObject *t)
{
    for (int k = 0; k < list->n; k++)
        if (list->types[k] == t)
            return 1;
    return 0;
}

/* An item NumPy reads alike whatever autodev does (_indexing._BASIC_KEYS: an int, a
 * slice, `...` or None, exact types, as the Python path's `type(k) in ...`). */
static int
basic_item(PyObject *k)
{
    return in_types(&KeyTypes, Py_TYPE(k));
}

/* _indexing.is_basic_key: such an item, or a tuple of them (`()` included): the key goes to
 * NumPy as it is. */
static int
basic_key(PyObject *key)
{
    if (basic_item(key))
        return 1;
    if (!PyTuple_CheckExact(key))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++)
        if (!basic_item(PyTuple_GET_ITEM(key, i)))
            return 0;
    return 1;
}

/* 1 if `a` is an array whose data the host fast paths read as they are: an autodev array
 * (not a subclass, not of the array-API face) holding host data (any data with no GPU
 * usable), its storage and pin slots set; 0 if not. */
static int
host_source(PyObject *a)
{
    return Py_TYPE(a) == Array && SLOT(a, S_DATA) != NULL && (Fast || SLOT(a, S_DEVICE) == Cpu)
        && SLOT(a, S_STORAGE) != NULL && SLOT(a, S_PIN) != NULL && SLOT(a, S_FACE) == Py_False;
}

/* The storage of the array `a` (borrowed), made on first need, as
 * _residency.storage.storage_of makes it: what a new view of `a`'s data shares. NULL with
 * an error: Python's AttributeError where the slot was deleted meanwhile, or the Storage
 * class's own. */
static PyObject *
shared_storage(PyObject *a)
{
    PyObject *storage = SLOT(a, S_STORAGE);
    if (storage == NULL) {  /* deleted meanwhile: Python's AttributeError */
        Py_XDECREF(PyObject_GetAttrString(a, "_storage"));
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_AttributeError, "_storage");
        return NULL;
    }
    if (storage == Py_None) {
        storage = PyObject_CallNoArgs(StorageType);
        if (storage == NULL)
            return NULL;
        Py_XSETREF(SLOT(a, S_STORAGE), storage);  /* the slot's reference */
    }
    return storage;
}

/* NumPy's `result` of reading the host source `a` (stolen), as the Python paths return it:
 * anything but one NumPy array as it is; a NumPy array as a new host array with `a`'s pin,
 * sharing `a`'s storage (made on first need) where it is a view. */
static PyObject *
host_result(PyObject *a, PyObject *result)
{
    if (result == NULL || Py_TYPE(result) != NpArray)
        return result;
    PyObject *storage = Py_None;
    if (((ArrayHead *)result)->base != NULL  /* `result.base is not None`: a view */
            && (storage = shared_storage(a)) == NULL) {
        Py_DECREF(result);
        return NULL;
    }
    if (SLOT(a, S_PIN) == NULL) {
        Py_DECREF(result);
        return PyObject_GetAttrString(a, "_pin");
    }
    return new_host(result, storage, SLOT(a, S_PIN));
}

static PyObject *host_argument(PyObject *obj, int depth);

/* The key NumPy is given for `key` on the host (_indexing.getitem's fast path: a basic key
 * as it is, any other through _dispatch.cpu_arg, a tuple's items each), as a new
 * reference: a basic key; an autodev array (its host data), a NumPy array, a list of
 * numbers or of such arrays; a tuple of basic items and such. NULL without an error for
 * anything else (the fallback's), with one on error. */
static PyObject *
host_key(PyObject *key)
{
    if (basic_key(key)) {
        Py_INCREF(key);
        return key;
    }
    if (!PyTuple_CheckExact(key))
        return host_argument(key, 1);
    Py_ssize_t n = PyTuple_GET_SIZE(key);
    PyObject *items = PyTuple_New(n);
    for (Py_ssize_t i = 0; items != NULL && i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(key, i);
        if (basic_item(item))
            Py_INCREF(item);
        else if ((item = host_argument(item, 1)) == NULL)
            Py_CLEAR(items);
        if (item != NULL)
            PyTuple_SET_ITEM(items, i, item);
    }
    return items;
}

static PyObject *
getitem(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL)
        return delegate(self, args, nargsf, kwnames);
    PyObject *a = args[0];
    if (!host_source(a))
        return delegate(self, args, nargsf, kwnames);
    PyObject *key = host_key(args[1]);
    if (key == NULL)
        return PyErr_Occurred() ? NULL : delegate(self, args, nargsf, kwnames);
    PyObject *data = SLOT(a, S_DATA);
    Py_INCREF(data);  /* a slice's __index__ may rebind a._native */
    PyObject *result = PyObject_GetItem(data, key);
    Py_DECREF(data);
    Py_DECREF(key);
    return host_result(a, result);
}

/* 1 if `obj` is an array class (NumPy's or autodev's, or a subclass): `a.view(cls)` */
static int
array_class(PyObject *obj)
{
    return PyType_Check(obj) && (PyType_IsSubtype((PyTypeObject *)obj, NpArray)
                                 || PyType_IsSubtype((PyTypeObject *)obj, Array));
}

/* a.copy(), a.copy(order), a.view(), a.view(dtype): NumPy's method on the host data */
static PyObject *
method(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    if (PyVectorcall_NARGS(nargsf) < 1)
        return delegate(self, args, nargsf, kwnames);
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    PyObject *a = args[0];
    if (kwnames != NULL || n > 2 || !host_source(a) || (n == 2 && array_class(args[1])))
        return delegate(self, args, nargsf, kwnames);
    PyObject *operands[2] = {SLOT(a, S_DATA), n == 2 ? args[1] : NULL};
    Py_INCREF(operands[0]);  /* held: the dtype's conversion may run Python code */
    PyObject *result = PyObject_Vectorcall(self->func, operands, n, NULL);
    Py_DECREF(operands[0]);
    return host_result(a, result);
}

/* bool(obj.name): 1, 0, or -1 on error. Read from the Storage class's own slot at
 * `offset` where `obj` is one and the slot is set (as its descriptor reads it), else by
 * attribute (an empty slot: Python's AttributeError). */
static int
attribute_true(PyObject *obj, PyObject *name, Py_ssize_t offset)
{
    if (Py_TYPE(obj) == (PyTypeObject *)StorageType && offset > 0) {
        PyObject *slot = *(PyObject **)((char *)obj + offset);
        if (slot == Py_False || slot == Py_None)
            return 0;
        if (slot == Py_True)
            return 1;
    }
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL)
        return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* `storage.version += 1`: in the Storage class's own slot where `storage` is one (read and
 * stored as the slot's descriptor would, without its lookup), else by attribute. 0, or -1
 * on error (an empty slot: Python's AttributeError). */
static int
bump_version(PyObject *storage)
{
    PyObject **slot = NULL, *version;
    if (Py_TYPE(storage) == (PyTypeObject *)StorageType && VersionOffset > 0
            && *(slot = (PyObject **)((char *)storage + VersionOffset)) != NULL) {
        version = *slot;
        Py_INCREF(version);
    } else {
        slot = NULL;
        version = PyObject_GetAttr(storage, VersionName);
        if (version == NULL)
            return -1;
    }
    PyObject *next = PyNumber_InPlaceAdd(version, One);
    Py_DECREF(version);
    if (next == NULL)
        return -1;
    if (slot != NULL) {
        Py_XSETREF(*slot, next);  /* (the slot's reference; the old one released) */
        return 0;
    }
    int failed = PyObject_SetAttr(storage, VersionName, next) < 0;
    Py_DECREF(next);
    return failed ? -1 : 0;
}

static PyObject *
setitem(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    if (PyVectorcall_NARGS(nargsf) != 3 || kwnames != NULL)
        return delegate(self, args, nargsf, kwnames);
    PyObject *a = args[0], *key = args[1], *value = args[2], *data, *storage;
    if (Watching || Py_TYPE(a) != Array || (data = SLOT(a, S_DATA)) == NULL || !basic_key(key)
            || (storage = SLOT(a, S_STORAGE)) == NULL
            || !(Fast || SLOT(a, S_DEVICE) == Cpu))
        return delegate(self, args, nargsf, kwnames);
    int plain = is_plain(PlainValues, value);
    if (plain < 0)
        return NULL;
    /* (the value's type's __hash__ may have run code: the slots are read again) */
    if (!plain || (data = SLOT(a, S_DATA)) == NULL || (storage = SLOT(a, S_STORAGE)) == NULL)
        return delegate(self, args, nargsf, kwnames);
    Py_INCREF(data);  /* held from here: the storage's attributes below are Python's */
    if (!Fast) {  /* a host array with a GPU usable: no mirror anywhere to release */
        int mirrored = SLOT(a, S_MIRROR) != Py_None;
        if (!mirrored && storage != Py_None) {
            Py_INCREF(storage);
            mirrored = attribute_true(storage, MirroredName, MirroredOffset);
            if (mirrored == 0)
                mirrored = attribute_true(storage, SharedName, SharedOffset);
            Py_DECREF(storage);
        }
        if (mirrored) {
            Py_DECREF(data);
            return mirrored < 0 ? NULL : delegate(self, args, nargsf, kwnames);
        }
    }
    int set = PyObject_SetItem(data, key, value);
    Py_DECREF(data);
    if (set < 0)
        return NULL;
    storage = SLOT(a, S_STORAGE);
    if (storage == NULL) {  /* deleted meanwhile: Python's AttributeError */
        PyObject *r = PyObject_GetAttrString(a, "_storage");
        Py_XDECREF(r);
        return NULL;
    }
    if (storage != Py_None) {  /* storage.version += 1 */
        Py_INCREF(storage);
        int failed = bump_version(storage);
        Py_DECREF(storage);
        if (failed)
            return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
ufunc(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    if (Pending)  /* (the fallback records or forces a pending operand) */
        return delegate(self, args, nargsf, kwnames);
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    PyObject *x, *data, *o = NULL;
    /* (an array of the array-API face: the fallback, which a unary operator needs to keep
     * the face's 0-d results arrays; a ufunc's Python fast path takes it as any other) */
    if (kwnames != NULL || n < 1 || n > 2 || n > self->nin || Py_TYPE(x = args[0]) != Array
            || (data = SLOT(x, S_DATA)) == NULL || SLOT(x, S_FACE) != Py_False)
        return delegate(self, args, nargsf, kwnames);
    Py_INCREF(data);  /* Python's local `data`, read before the operand's checks */
    int go;
    if (Fast) {
        go = n == 1 ? !may_elide(self->can_elide, x, data)
                    : plain_operand(args[1], PlainScalars, &o);
        if (go > 0 && may_split(self->threads, data, o))
            go = 0;
        if (go > 0)
            Py_XINCREF(o);
    } else
        go = HostFast ? host_call(self->family, self->bound, x, data, n == 2 ? args[1] : NULL, &o) : 0;
    if (go <= 0) {
        Py_DECREF(data);
        return go < 0 ? NULL : delegate(self, args, nargsf, kwnames);
    }
    Calls++;
    PyObject *operands[2] = {data, o};
    int retry;
    PyObject *result = host_run(self->func, operands, n, &retry);
    Py_XDECREF(o);
    Py_DECREF(data);
    if (retry) {
        Calls--;
        return delegate(self, args, nargsf, kwnames);
    }
    return finish(self, result);
}

static PyObject *
reduce(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    PyObject *a, *data;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 1
            || Py_TYPE(a = args[0]) != Array || (data = SLOT(a, S_DATA)) == NULL
            || elements(data) >= TotalFrom)
        return delegate(self, args, nargsf, kwnames);
    Py_INCREF(data);  /* held across the checks and the call, as Python's argument is */
    if (!Fast) {
        PyObject *o;  /* (none: NULL) */
        int host = HostFast ? host_call(self->family, self->bound, a, data, NULL, &o) : 0;
        if (host <= 0) {
            Py_DECREF(data);
            return host < 0 ? NULL : delegate(self, args, nargsf, kwnames);
        }
    }
    Calls++;
    PyObject *operands[2] = {data, Py_None};  /* axis=None, by position */
    PyObject *result = PyObject_Vectorcall(self->func, operands, 2, NULL);
    Py_DECREF(data);
    return finish(self, result);
}

/* 1 if `obj` is a list or tuple of plain scalars (PlainScalars' exact types), or of such
 * lists and tuples, nested at most `depth` deep (_creation.plain_sequence); else 0. It
 * compares types by identity: no Python code runs while the items are read. */
static int
plain_sequence(PyObject *obj, int depth)
{
    if ((!PyList_CheckExact(obj) && !PyTuple_CheckExact(obj)) || depth == 0)
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    PyObject **items = PySequence_Fast_ITEMS(obj);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!in_types(&ScalarTypes, Py_TYPE(items[i])) && !plain_sequence(items[i], depth - 1))
            return 0;
    return 1;
}

/* 1 if every keyword is one of ArrayKeywords (what array() gives NumPy's as it is). */
static int
array_keywords(PyObject *kwnames)
{
    if (kwnames == NULL)
        return 1;
    if (ArrayKeywords == NULL)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        int found = 0;
        for (Py_ssize_t k = 0; !found && k < PyTuple_GET_SIZE(ArrayKeywords); k++) {
            PyObject *known = PyTuple_GET_ITEM(ArrayKeywords, k);
            found = name == known || PyUnicode_Compare(name, known) == 0;
        }
        if (!found)
            return 0;
    }
    return 1;
}

/* array(seq[, dtype], dtype=, order=, ndmin=) of numbers in lists (_creation.array):
 * NumPy's array, a new host array; with a GPU usable, unless the GPU policy is in force. */
static PyObject *
sequence(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n < 1 || n > 2 || !plain_sequence(args[0], SequenceDepth) || !array_keywords(kwnames))
        return delegate(self, args, nargsf, kwnames);
    int here = made_on_host();
    if (here <= 0)
        return here < 0 ? NULL : delegate(self, args, nargsf, kwnames);
    PyObject *result = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
    if (result == NULL || Py_TYPE(result) != NpArray)
        return finish(self, result);
    return new_host(result, Py_None, Py_None);
}

static PyObject *function(PyObject *op, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames);

/* f(a) of a reduction (count_nonzero, mean, ...): func(data) for one host array alone,
 * below the threads', pool's and fusion's floors with no GPU
 * usable, below the family's HOST_NOW bound with one; no chain pending
 * (_decide.alone_on_host). NumPy's new array is a new host array, a plain scalar is
 * returned as it is, anything else goes through `other(result, (a,), (data,))`. Called
 * with more arguments or keywords (mean(m, axis=0), allclose(a, b)), it is the function
 * kind, its first argument an array below the floor from which threads may split it
 * (`func` may be NumPy's own, which splits nothing). */
static PyObject *
unary(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 1) {
        PyObject *first = PyVectorcall_NARGS(nargsf) > 0 ? args[0] : NULL;
        if (first != NULL && Py_TYPE(first) == Array && SLOT(first, S_DATA) != NULL
                && !may_split(self->threads, SLOT(first, S_DATA), NULL))
            return function(op, args, nargsf, kwnames);
        return delegate(self, args, nargsf, kwnames);
    }
    PyObject *a, *data, *o;
    if (Pending || Py_TYPE(a = args[0]) != Array || (data = SLOT(a, S_DATA)) == NULL
            || SLOT(a, S_DEVICE) != Cpu || may_split(self->threads, data, NULL))
        return delegate(self, args, nargsf, kwnames);
    Py_INCREF(data);  /* held across the checks and the call, as Python's local is */
    if (!Fast) {
        int host = HostFast ? host_call(self->family, self->bound, a, data, NULL, &o) : 0;
        if (host <= 0) {
            Py_DECREF(data);
            return host < 0 ? NULL : delegate(self, args, nargsf, kwnames);
        }
    }
    Calls++;
    int retry;
    PyObject *result = host_run(self->func, &data, 1, &retry);
    if (retry) {
        Calls--;
        Py_DECREF(data);
        return delegate(self, args, nargsf, kwnames);
    }
    if (result != NULL && Py_TYPE(result) == NpArray && ((ArrayHead *)result)->base == NULL
            && result != data) {
        Py_DECREF(data);
        return new_host(result, Py_None, Py_None);
    }
    if (result == NULL || in_types(&ScalarTypes, Py_TYPE(result)) || self->other == Py_None) {
        Py_DECREF(data);
        return result;
    }
    PyObject *given = PyTuple_Pack(1, a), *taken = given == NULL ? NULL : PyTuple_Pack(1, data);
    PyObject *out = taken == NULL ? NULL
        : PyObject_CallFunctionObjArgs(self->other, result, given, taken, NULL);
    Py_XDECREF(given);
    Py_XDECREF(taken);
    Py_DECREF(result);
    Py_DECREF(data);
    return out;
}

static PyObject *
create(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || n < 1 || n > 3)
        return delegate(self, args, nargsf, kwnames);
    int here = made_on_host();
    if (here <= 0)
        return here < 0 ? NULL : delegate(self, args, nargsf, kwnames);
    return finish(self, PyObject_Vectorcall(self->func, args, n, NULL));
}

/* The most positional arguments a K_FUNCTION call takes here, and how deep it walks
 * lists and tuples among them. */
#define MAX_ARGUMENTS 6
#define ARGUMENT_DEPTH 2
/* The longest list or tuple it walks (a longer one: the fallback's, which checks what
 * NumPy checks first: concatenate's count of arrays, _namespace._counting_arrays). */
#define LONGEST_WALKED (1 << 20)

/* The argument NumPy receives for `obj` in a host call (_dispatch.cpu_arg), as a new
 * reference: an autodev array's host data; a list or tuple whose items are such
 * arguments, with each array's data (itself where it holds no autodev array); None, a
 * str, a plain scalar (PlainScalars' exact types), a class or a NumPy array as it is. NULL for
 * anything else (a nested list deeper than `depth`, an array on a device or pending, an
 * array-like, a subclass), without an error: the fallback handles the call. */
static PyObject *
host_argument(PyObject *obj, int depth)
{
    PyTypeObject *t = Py_TYPE(obj);
    if (t == Array) {
        PyObject *data = SLOT(obj, S_DATA);
        if (data == NULL || SLOT(obj, S_DEVICE) != Cpu)
            return NULL;
        Py_INCREF(data);
        return data;
    }
    if (obj == Py_None || t == NpArray || t == &PyUnicode_Type || in_types(&ScalarTypes, t)
            || t == &PyType_Type) {  /* (a class: dtype=float, as cpu_arg passes it) */
        Py_INCREF(obj);
        return obj;
    }
    if ((t != &PyList_Type && t != &PyTuple_Type) || depth == 0)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > LONGEST_WALKED)
        return NULL;
    PyObject **items = PySequence_Fast_ITEMS(obj);
    PyObject *copy = NULL;  /* made at the first item that changes */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = host_argument(items[i], depth - 1);
        if (item == NULL) {
            Py_XDECREF(copy);
            return NULL;
        }
        if (copy == NULL && item != items[i]) {
            copy = t == &PyList_Type ? PyList_New(n) : PyTuple_New(n);
            if (copy == NULL) {
                Py_DECREF(item);
                return NULL;
            }
            for (Py_ssize_t k = 0; k < i; k++) {
                Py_INCREF(items[k]);
                PySequence_Fast_ITEMS(copy)[k] = items[k];
            }
        }
        if (copy != NULL)
            PySequence_Fast_ITEMS(copy)[i] = item;  /* (the new list's or tuple's slot) */
        else
            Py_DECREF(item);
    }
    if (copy != NULL)
        return copy;
    Py_INCREF(obj);
    return obj;
}

/* A new tuple of the `n` objects `items`. */
static PyObject *
tuple_of(PyObject *const *items, Py_ssize_t n)
{
    PyObject *tuple = PyTuple_New(n);
    for (Py_ssize_t i = 0; tuple != NULL && i < n; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(tuple, i, items[i]);
    }
    return tuple;
}

/* The tuple `result` with each NumPy array in it a new host array owning nothing (no
 * storage, not pinned), as the Python paths' `new(r, CPU)` of each; other items as they
 * are. A new reference, or NULL on error. */
static PyObject *
host_arrays_of(PyObject *result)
{
    Py_ssize_t count = PyTuple_GET_SIZE(result);
    PyObject *arrays = PyTuple_New(count);
    for (Py_ssize_t i = 0; arrays != NULL && i < count; i++) {
        PyObject *item = PyTuple_GET_ITEM(result, i);
        Py_INCREF(item);
        if (Py_TYPE(item) == NpArray)
            item = new_host(item, Py_None, Py_None);
        if (item == NULL)
            Py_CLEAR(arrays);
        else
            PyTuple_SET_ITEM(arrays, i, item);
    }
    return arrays;
}

/* The most autodev arrays the compiled paths collect from a call's arguments. */
#define MAX_COLLECTED 8

/* Whether the work of a call whose autodev arrays are `arrays` (`n` of them, all on the
 * host), in `family`, is bounded below HOST_NOW's bound for the family under the policy
 * in force (_decide.all_on_host's test of them): 1 where it is and every array is below
 * SplitFrom (threads and fusion take none of them), 0 for the fallback (no array, no
 * family, a bound not in the table yet or not above the work), -1 on error. The work is
 * bounded as `how` says (a Bound, as Python declares it for the family): by the largest
 * array's elements (at least 1, as work_elements counts), by the arrays' broadcast (counted
 * only where the product of their elements reaches the bound), or by the product of the
 * first two arrays' (the first's alone where there is one). */
static int
host_work_below(PyObject *family, int how, PyObject *const *arrays, Py_ssize_t n)
{
    if (family == Py_None || n < 1 || n > MAX_COLLECTED)
        return 0;
    Py_ssize_t largest = 1, all = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t m = elements(SLOT(arrays[i], S_DATA));
        if (m >= SplitFrom)
            return 0;
        if (m > largest)
            largest = m;
        all = m && all > PY_SSIZE_T_MAX / m ? PY_SSIZE_T_MAX : all * m;
    }
    Py_ssize_t work = largest;
    if (how == BOUND_PRODUCT) {
        Py_ssize_t first = elements(SLOT(arrays[0], S_DATA));
        Py_ssize_t second = n > 1 ? elements(SLOT(arrays[1], S_DATA)) : 1;
        work = first && second > PY_SSIZE_T_MAX / first ? PY_SSIZE_T_MAX : first * second;
    }
    Py_ssize_t bound = 0;
    int found = host_bound(family, &bound);
    if (found > 0 && work < bound && how == BOUND_BROADCAST && n > 1 && all >= bound) {
        /* (every array's data a NumPy array: each counted one element or more) */
        ArrayHead *heads[MAX_COLLECTED];
        for (Py_ssize_t i = 0; i < n; i++)
            heads[i] = (ArrayHead *)SLOT(arrays[i], S_DATA);
        Py_ssize_t m = broadcast_elements(heads, n);
        if (m > work)
            work = m;
    }
    return found < 0 ? -1 : found > 0 && work < bound;
}

/* The autodev arrays among `obj` (lists and tuples walked `depth` deep, as host_argument
 * took them), in the order Python's _dispatch._collect finds them, added to `arrays`
 * (`*n` of them so far, room for MAX_COLLECTED): 0, or -1 where there are more (the
 * fallback counts them). */
static int
collect_arrays(PyObject *obj, int depth, PyObject **arrays, Py_ssize_t *n)
{
    if (Py_TYPE(obj) == Array) {
        if (*n == MAX_COLLECTED)
            return -1;
        arrays[(*n)++] = obj;
        return 0;
    }
    if ((!PyList_CheckExact(obj) && !PyTuple_CheckExact(obj)) || depth == 0)
        return 0;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t i = 0; i < count; i++)
        if (collect_arrays(PySequence_Fast_GET_ITEM(obj, i), depth - 1, arrays, n) < 0)
            return -1;
    return 0;
}

/* NumPy's array `result` of a host call given the `n` positional arguments `args`, where
 * it is not new memory, as _dispatch.cpu_result wraps it (_wrap_one's rule, for the host):
 * the first autodev argument whose data NumPy returned, itself; else a view of the data of
 * an autodev array among the arguments (the first whose data's owner is the view's,
 * lists walked as host_argument walked them), a new host array sharing that array's
 * storage (made on first need); else, with no NumPy array among the arguments, a new host
 * array owning it (a view of memory NumPy made: `nonzero`'s). NULL without an error for
 * anything else (a NumPy argument returned, a view where a NumPy array was given):
 * Python's rule. */
static PyObject *
host_view(PyObject *result, PyObject *const *args, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (args[i] == result)
            return NULL;
        if (Py_TYPE(args[i]) == Array && SLOT(args[i], S_DATA) == result) {
            Py_INCREF(args[i]);
            return args[i];  /* the very array, as NumPy returns it */
        }
    }
    PyObject *base = ((ArrayHead *)result)->base;
    PyObject *arrays[MAX_COLLECTED];
    Py_ssize_t found = 0;
    if (base == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        if (collect_arrays(args[i], ARGUMENT_DEPTH, arrays, &found) < 0)
            return NULL;
    for (Py_ssize_t i = 0; i < found; i++) {
        PyObject *a = arrays[i], *data = SLOT(a, S_DATA);
        if (data == NULL || !PyObject_TypeCheck(data, NpArray))
            return NULL;  /* (rebound by code NumPy's call ran: Python's rule decides) */
        PyObject *owner = ((ArrayHead *)data)->base != NULL ? ((ArrayHead *)data)->base : data;
        if (owner != base)
            continue;
        PyObject *storage = shared_storage(a);
        if (storage == NULL)
            return NULL;
        Py_INCREF(result);
        return new_host(result, storage, Py_None);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (Py_TYPE(args[i]) == NpArray)
            return NULL;  /* (maybe a view of a NumPy argument: escaped storage, Python's) */
    Py_INCREF(result);
    return new_host(result, Py_None, Py_None);  /* a view of memory NumPy made: its own */
}

/* NumPy's array `array` of a host call given the `n` positional arguments `args` (`host`:
 * as NumPy got them), as _dispatch.cpu_result wraps it: new memory (no base, none of the
 * host arguments) as a new host array, anything else by host_view's rule. NULL as
 * host_view gives it. */
static PyObject *
host_array(PyObject *array, PyObject *const *args, PyObject *const *host, Py_ssize_t n)
{
    int fresh = ((ArrayHead *)array)->base == NULL;
    for (Py_ssize_t k = 0; fresh && k < n; k++)
        fresh = array != host[k];
    if (!fresh)
        return host_view(array, args, n);
    Py_INCREF(array);
    return new_host(array, Py_None, Py_None);
}

/* `result`, an exact tuple or list, of a host call given the `n` positional arguments
 * `args` (`host`: as NumPy got them), as _dispatch.cpu_result wraps it: each NumPy array
 * in it by host_array's rule (`nonzero(a)`, `split(a, 4)`). NULL without an error for
 * anything else (an item of another type, one host_view leaves to Python): Python's
 * rule; or with one, on error. */
static PyObject *
host_results(PyObject *result, PyObject *const *args, PyObject *const *host, Py_ssize_t n)
{
    int list = PyList_CheckExact(result);
    if (!list && !PyTuple_CheckExact(result))
        return NULL;
    Py_ssize_t count = Py_SIZE(result);
    PyObject *items = list ? PyList_New(count) : PyTuple_New(count);
    for (Py_ssize_t i = 0; items != NULL && i < count; i++) {
        PyObject *item = list ? PyList_GET_ITEM(result, i) : PyTuple_GET_ITEM(result, i);
        PyObject *wrapped = Py_TYPE(item) == NpArray ? host_array(item, args, host, n) : NULL;
        if (wrapped == NULL)
            Py_CLEAR(items);
        else if (list)
            PyList_SET_ITEM(items, i, wrapped);
        else
            PyTuple_SET_ITEM(items, i, wrapped);
    }
    return items;
}

/* f(*args, **kw) of a dispatched function with no `out=`, `device=` or `like=`, nothing
 * pending or watched, and either no GPU usable (_functions.make_function's call of _dispatch.cpu_call) or, with
 * one usable, autodev arrays among the arguments, all on the host and below the family's
 * bound (host_work_below; the call _dispatch.call sends to cpu_call after
 * _decide.all_on_host): func (the CPU backend's callable) on the host arguments
 * (keywords' values too), in the host pool's scope where a positional one is large;
 * NumPy's new array as a new host array; anything else through `other(result, args,
 * host arguments)` (_dispatch.cpu_result). An argument host_argument() does not take
 * leaves the call to the fallback; an error while taking them (an allocation's) is
 * raised. Either way NumPy has not run. */
static int names_a_place(PyObject *kwnames);

static PyObject *
function(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nkw = keywords_taken(kwnames);
    if (!(Fast || HostFast) || Pending || Watching || nkw < 0 || n < 1 || n > self->nin
            || n + nkw > MAX_ARGUMENTS || names_a_place(kwnames))
        return delegate(self, args, nargsf, kwnames);
    PyObject *host[MAX_ARGUMENTS];
    for (Py_ssize_t i = 0; i < n + nkw; i++) {
        host[i] = host_argument(args[i], ARGUMENT_DEPTH);
        /* (a function the CPU backend may split, where: an argument from its floor) */
        if (host[i] == NULL || (self->threads != Py_None && i < n
                                && may_split(self->threads, host[i], NULL))) {
            for (Py_ssize_t k = 0; k <= i && k < n + nkw; k++)
                Py_XDECREF(host[k]);
            if (PyErr_Occurred())
                return NULL;
            return delegate(self, args, nargsf, kwnames);
        }
    }
    if (!Fast) {  /* with a GPU usable: its arrays all on the host, below the bound */
        PyObject *arrays[MAX_COLLECTED];
        Py_ssize_t found = 0;
        int here = 0, counted = 1;
        for (Py_ssize_t i = 0; counted && i < n + nkw; i++)
            counted = collect_arrays(args[i], ARGUMENT_DEPTH, arrays, &found) == 0;
        if (!counted
                || (here = host_work_below(self->family, self->bound, arrays, found)) <= 0) {
            for (Py_ssize_t k = 0; k < n + nkw; k++)
                Py_DECREF(host[k]);
            return here < 0 ? NULL : delegate(self, args, nargsf, kwnames);
        }
    }
    Calls++;
    int retry;
    PyObject *result = host_call_with(self->func, host, (size_t)n, kwnames, &retry);
    PyObject *out = NULL;
    if (retry) {
        Calls--;
        out = delegate(self, args, nargsf, kwnames);
    } else if (result != NULL && in_types(&ScalarTypes, Py_TYPE(result))) {
        out = result;  /* NumPy's scalars and Python's values, as cpu_result returns them */
        result = NULL;
    } else if (result != NULL) {
        out = Py_TYPE(result) == NpArray ? host_array(result, args, host, n)
                                         : host_results(result, args, host, n);
        if (out == NULL && !PyErr_Occurred()) {  /* a scalar, another view: Python's rule */
            PyObject *given = tuple_of(args, n);
            PyObject *taken = given == NULL ? NULL : tuple_of(host, n);
            if (taken != NULL)
                out = PyObject_CallFunctionObjArgs(self->other, result, given, taken, NULL);
            Py_XDECREF(given);
            Py_XDECREF(taken);
        }
    }
    Py_XDECREF(result);
    for (Py_ssize_t k = 0; k < n + nkw; k++)
        Py_DECREF(host[k]);
    return out;
}

/* a.name(*args, **kw) of a dispatched array method with no GPU usable, or of a primary
 * one on host data with a GPU usable and nothing watching or pinned (_operators._method's
 * fast path), or of any other on host data below its family's bound with one usable
 * (host_work_below: what _dispatch.call runs at once after _decide.alone_on_host), its arguments and keywords' values of ArgumentTypes alone, no `out=`,
 * nothing pending or watched, an array below the size from which a sum over every axis may be split (the
 * fallback sends a large a.sum() there) and, for a method naming a family (`threads`: a.sum(axis=1)),
 * below the size from which that family's calls may be split: NumPy's method on the host data. Its result as
 * _method makes it: the array itself where NumPy returns its data; a new array sharing
 * the array's storage (made on first need) where NumPy's is a view of its data, owning
 * none otherwise; a tuple's arrays as new arrays; anything else as it is. */
static PyObject *
array_method(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nkw = keywords_taken(kwnames);
    if (!(Fast || HostFast) || Pending || Watching || nkw < 0
            || n < 1 || n + nkw > MAX_ARGUMENTS || !host_source(args[0])
            || elements(SLOT(args[0], S_DATA)) >= TotalFrom
            || (self->threads != Py_None && may_split(self->threads, SLOT(args[0], S_DATA), NULL)))
        return delegate(self, args, nargsf, kwnames);
    for (Py_ssize_t i = 1; i < n + nkw; i++)
        if (!in_types(&ArgumentTypes, Py_TYPE(args[i])))
            return delegate(self, args, nargsf, kwnames);
    if (!Fast && !self->primary) {  /* with a GPU usable, below the family's bound */
        int here = host_work_below(self->family, self->bound, args, 1);
        if (here <= 0)
            return here < 0 ? NULL : delegate(self, args, nargsf, kwnames);
    }
    PyObject *a = args[0], *data = SLOT(a, S_DATA);
    PyObject *operands[MAX_ARGUMENTS];
    operands[0] = data;
    for (Py_ssize_t i = 1; i < n + nkw; i++)
        operands[i] = args[i];
    Calls++;
    Py_INCREF(data);  /* held: NumPy's method may run Python code (an argument's __index__) */
    PyObject *result = PyObject_Vectorcall(self->func, operands, n, kwnames);
    PyObject *out = NULL;
    if (result != NULL && result == data) {
        Py_INCREF(a);
        out = a;  /* the array itself (conj of a real array), as NumPy's */
    } else if (result != NULL && Py_TYPE(result) == NpArray) {
        PyObject *base = ((ArrayHead *)result)->base, *storage = Py_None;
        if (base != NULL && (base == data || base == (PyObject *)((ArrayHead *)data)->base))
            storage = shared_storage(a);  /* a view of the array's data */
        if (storage != NULL) {
            out = new_host(result, storage, Py_None);
            result = NULL;  /* (stolen) */
        }
    } else if (result != NULL && PyTuple_CheckExact(result)) {
        out = host_arrays_of(result);
    } else {
        out = result;  /* NumPy's scalars and Python's values */
        result = NULL;
    }
    Py_XDECREF(result);
    Py_DECREF(data);
    return out;
}

/* 1 if `kwnames` (NULL: none) names `device` or `like`: the Python paths place the call. */
static int
names_a_place(PyObject *kwnames)
{
    for (Py_ssize_t i = 0; kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(name, "device") == 0
                || PyUnicode_CompareWithASCIIString(name, "like") == 0)
            return 1;
    }
    return 0;
}

/* f(*args, **kw) of a creation function (`arange(n)`, `linspace(0, 1, n)`, `eye(n)`,
 * `full(n, x)`: _creation.make_creation's `plain` and `general`) given no autodev array
 * (the fallback reads one's host data), no `device=` or `like=`, with no GPU usable or,
 * with one, where MADE_ON_HOST says so: NumPy's call, its new array as a new host array,
 * anything else through `other(result)` (_creation._created: `linspace(...,
 * retstep=True)`'s pair). */
static PyObject *
made(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastCall *self = (FastCall *)op;
    if (names_a_place(kwnames))
        return delegate(self, args, nargsf, kwnames);
    Py_ssize_t count = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    for (Py_ssize_t i = 0; i < count; i++)
        if (PyObject_TypeCheck(args[i], Array))
            return delegate(self, args, nargsf, kwnames);
    int here = made_on_host();
    if (here <= 0)
        return here < 0 ? NULL : delegate(self, args, nargsf, kwnames);
    PyObject *result = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
    if (result == NULL || Py_TYPE(result) != NpArray) {
        if (result == NULL)
            return NULL;
        PyObject *out = PyObject_CallOneArg(self->other, result);
        Py_DECREF(result);
        return out;
    }
    return new_host(result, Py_None, Py_None);
}

/* Each kind's vectorcall, in the order of enum Kind (set once, when the callable is made:
 * no dispatch on the kind per call). */
static const vectorcallfunc KindCalls[] = {binary, binary, getitem, setitem, ufunc, reduce,
                                          create, method, unary, sequence, function,
                                          array_method, made};

static const char *KindNames[] = {"binary", "reflected", "getitem", "setitem", "ufunc",
                                  "reduce", "create", "method", "unary", "sequence",
                                  "function", "array_method", "made"};
_Static_assert(sizeof KindNames / sizeof *KindNames == sizeof KindCalls / sizeof *KindCalls,
               "a name and a vectorcall for each kind");

static PyObject *
fastcall_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"kind", "func", "fallback", "other", "can_elide", "family",
                               "bound", "threads", "positional", "primary", NULL};
    const char *kind_name;
    PyObject *func, *fallback, *other = Py_None, *family = Py_None, *threads = Py_None;
    int can_elide = 0, bound = BOUND_LARGEST, positional = MAX_ARGUMENTS, primary = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOO|OpOiOip:FastCall", keywords, &kind_name,
                                     &func, &fallback, &other, &can_elide, &family, &bound,
                                     &threads, &positional, &primary))
        return NULL;
    int kind = -1;
    for (int i = 0; i < (int)(sizeof KindNames / sizeof *KindNames); i++)
        if (strcmp(kind_name, KindNames[i]) == 0)
            kind = i;
    if ((family != Py_None && !PyUnicode_Check(family))
            || (threads != Py_None && !PyUnicode_Check(threads))) {
        PyErr_SetString(PyExc_TypeError, "FastCall: family and threads must be a str or None");
        return NULL;
    }
    if (kind < 0) {
        PyErr_Format(PyExc_ValueError, "unknown FastCall kind '%s'", kind_name);
        return NULL;
    }
    if ((kind == K_FUNCTION || kind == K_MADE)
            && (!PyCallable_Check(func) || !PyCallable_Check(other))) {
        PyErr_SetString(PyExc_TypeError,
                        "FastCall: a function's or creation's func and other must be callable");
        return NULL;
    }
    if ((func != Py_None && !PyCallable_Check(func)) || !PyCallable_Check(fallback)
            || (other != Py_None && !PyCallable_Check(other))) {
        PyErr_SetString(PyExc_TypeError, "FastCall: fallback must be callable, and func and other callable or None");
        return NULL;
    }
    FastCall *self = (FastCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = KindCalls[kind];
    self->kind = kind;
    self->can_elide = can_elide;
    self->bound = bound;
    self->primary = primary;
    Py_INCREF(func);
    self->func = func;
    Py_INCREF(fallback);
    self->fallback = fallback;
    Py_INCREF(other);
    self->other = other;
    Py_INCREF(family);
    self->family = family;
    Py_INCREF(threads);
    self->threads = threads;
    if (kind == K_FUNCTION || kind == K_UNARY)
        self->nin = positional;
    if (kind == K_UFUNC) {
        PyObject *nin = PyObject_GetAttrString(func, "nin");
        self->nin = nin == NULL ? -1 : (int)PyLong_AsLong(nin);
        Py_XDECREF(nin);
        if (self->nin < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "FastCall: a ufunc's nin must be >= 0");
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

static int
fastcall_traverse(FastCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->func);
    Py_VISIT(self->fallback);
    Py_VISIT(self->other);
    Py_VISIT(self->family);
    Py_VISIT(self->threads);
    return 0;
}

static int
fastcall_clear(FastCall *self)
{
    Py_CLEAR(self->func);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->other);
    Py_CLEAR(self->family);
    Py_CLEAR(self->threads);
    return 0;
}

static void
fastcall_dealloc(FastCall *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weaklist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    fastcall_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* As a class attribute (the operators, __getitem__, __setitem__) it binds as a Python
 * function does; CPython's operator slots call it unbound (Py_TPFLAGS_METHOD_DESCRIPTOR). */
static PyObject *
fastcall_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);  /* as a Python function binds (Py_TPFLAGS_METHOD_DESCRIPTOR) */
}

/* Everything else (__name__, __doc__, __wrapped__, ...) is the fallback's. */
static PyObject *
fastcall_getattro(PyObject *self, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(((FastCall *)self)->fallback, name);
}

static PyObject *
fastcall_repr(FastCall *self)
{
    return PyUnicode_FromFormat("<autodev compiled %s path of %R>", KindNames[self->kind],
                                self->fallback);
}

/* Setting an attribute sets it on the fallback, where reading it finds it. */
static int
fastcall_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    int r = PyObject_GenericSetAttr(self, name, value);
    if (r == 0 || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_SetAttr(((FastCall *)self)->fallback, name, value);
}

/* Pickled and copied as its fallback function is: by reference, module and qualified name. */
static PyObject *
fastcall_reduce(PyObject *self, PyObject *unused)
{
    return PyObject_GetAttrString(((FastCall *)self)->fallback, "__qualname__");
}

static PyMethodDef fastcall_methods[] = {
    {"__reduce__", fastcall_reduce, METH_NOARGS, NULL},
    {NULL},
};

/* A function's own attributes that the type would otherwise answer for itself. */
static PyObject *
fastcall_doc(FastCall *self, void *closure)
{
    return PyObject_GetAttrString(self->fallback, "__doc__");
}

static PyObject *
fastcall_module(FastCall *self, void *closure)
{
    return PyObject_GetAttrString(self->fallback, "__module__");
}

static PyGetSetDef fastcall_getset[] = {
    {"__doc__", (getter)fastcall_doc, NULL, NULL, NULL},
    {"__module__", (getter)fastcall_module, NULL, NULL, NULL},
    {NULL},
};

static PyMemberDef fastcall_members[] = {
    {"fallback", OBJECT_SLOT, offsetof(FastCall, fallback), MEMBER_READONLY,
     "the pure-Python function this stands in front of"},
    {"func", OBJECT_SLOT, offsetof(FastCall, func), MEMBER_READONLY, "NumPy's callable"},
    {NULL},
};

static PyTypeObject FastCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autodev._speedups.FastCall",
    .tp_doc = "FastCall(kind, func, fallback, other=None, can_elide=False, family=None)\n--\n\n"
              "A compiled fast path standing in front of the pure-Python `fallback`.",
    .tp_basicsize = sizeof(FastCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(FastCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = fastcall_new,
    .tp_dealloc = (destructor)fastcall_dealloc,
    .tp_traverse = (traverseproc)fastcall_traverse,
    .tp_clear = (inquiry)fastcall_clear,
    .tp_descr_get = fastcall_get,
    .tp_getattro = fastcall_getattro,
    .tp_setattro = fastcall_setattro,
    .tp_methods = fastcall_methods,
    .tp_weaklistoffset = offsetof(FastCall, weaklist),
    .tp_repr = (reprfunc)fastcall_repr,
    .tp_members = fastcall_members,
    .tp_getset = fastcall_getset,
};

/* A FastCall that a class holding it does not bind, as NumPy's builtins (`zeros`,
   `empty`) are not bound: no method-descriptor flag, and __get__ gives itself. */
static PyObject *
fastfunction_get(PyObject *self, PyObject *obj, PyObject *type)
{
    Py_INCREF(self);
    return self;
}

static PyTypeObject FastFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autodev._speedups.FastFunction",
    .tp_doc = "FastFunction(kind, func, fallback, other=None, can_elide=False, family=None)\n--\n\n"
              "A FastCall that never becomes a method of a class holding it.",
    .tp_basicsize = sizeof(FastCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_base = &FastCallType,
    .tp_vectorcall_offset = offsetof(FastCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = fastcall_new,
    .tp_dealloc = (destructor)fastcall_dealloc,
    .tp_traverse = (traverseproc)fastcall_traverse,
    .tp_clear = (inquiry)fastcall_clear,
    .tp_descr_get = fastfunction_get,
    .tp_getset = fastcall_getset,  /* __doc__ and __module__ are the fallback's, as FastCall's */
};

/* The base of autodev.ndarray on Python < 3.12, where a Python class's __buffer__
   (PEP 688) is not read: its buffer slot asks the instance's __buffer__ for a
   memoryview and exports the memory it views, asked of that memory's exporter with the
   consumer's flags. The exported buffer's owner is the instance, as NumPy's
   (memoryview(x).obj is x); the exporter is held in the view's internal field until the
   consumer releases it. No state and no rule of its own: which
   memory is shared is __buffer__'s answer. */
static int
exporter_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    PyObject *mv = PyObject_CallMethod(self, "__buffer__", "i", flags);
    if (mv == NULL)
        return -1;
    /* the memory's own exporter (the NumPy array the memoryview was taken from) answers
       the consumer's flags: NumPy's errors and formats, as for a NumPy array */
    PyObject *exporter = mv;
    if (PyMemoryView_Check(mv) && PyMemoryView_GET_BASE(mv) != NULL)
        exporter = PyMemoryView_GET_BASE(mv);
    Py_INCREF(exporter);
    Py_DECREF(mv);
    int r = PyObject_GetBuffer(exporter, view, flags);
    if (r < 0) {
        Py_DECREF(exporter);
        return r;
    }
    Py_SETREF(view->obj, Py_NewRef(self));  /* drops the view's reference to exporter */
    view->internal = exporter;               /* our reference to it, released below */
    return 0;
}

static void
exporter_releasebuffer(PyObject *self, Py_buffer *view)
{
    PyObject *exporter = (PyObject *)view->internal;
    Py_buffer inner = *view;
    inner.obj = exporter;  /* the export taken from it, and our reference to it, end here */
    inner.internal = NULL;
    PyBuffer_Release(&inner);
    view->internal = NULL;
}

static PyBufferProcs exporter_as_buffer = {
    .bf_getbuffer = exporter_getbuffer,
    .bf_releasebuffer = exporter_releasebuffer,
};

static PyTypeObject BufferExporterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autodev._speedups.BufferExporter",
    .tp_doc = "A base class whose buffer protocol is its instances' __buffer__ (PEP 688 "
              "before Python 3.12).",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_as_buffer = &exporter_as_buffer,
};

/* ------------------------------------------------------------------ data attributes */

/* DataAttribute(name, doc, setter=None): a data descriptor giving `a.name` as the array's
 * data's own attribute (`a.size` is `a._native.size`), as
 * property(operator.attrgetter("_native." + name), setter) gives it: the data read from
 * the slot (an empty one, a pending array's, through Python, which evaluates it); a write
 * calls setter(a, value), and without one raises AttributeError, as does a delete. */
typedef struct {
    PyObject_HEAD
    PyObject *name;
    PyObject *doc;
    PyObject *setter;
} DataAttribute;

static PyObject *NativeName = NULL;  /* "_native" */

static PyObject *
data_attribute_get(PyObject *self, PyObject *obj, PyObject *type)
{
    DataAttribute *d = (DataAttribute *)self;
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);  /* read on the class: the descriptor, as a property */
    PyObject *data;
    if (Array != NULL && PyObject_TypeCheck(obj, Array) && SLOT(obj, S_DATA) != NULL)
        data = Py_NewRef(SLOT(obj, S_DATA));
    else if ((data = PyObject_GetAttr(obj, NativeName)) == NULL)
        return NULL;
    PyObject *value = PyObject_GetAttr(data, d->name);
    Py_DECREF(data);
    return value;
}

static int
data_attribute_set(PyObject *self, PyObject *obj, PyObject *value)
{
    DataAttribute *d = (DataAttribute *)self;
    if (value == NULL || d->setter == Py_None) {
        PyErr_Format(PyExc_AttributeError, "property '%U' of '%s' object has no %s", d->name,
                     Py_TYPE(obj)->tp_name, value == NULL ? "deleter" : "setter");
        return -1;
    }
    PyObject *done = PyObject_CallFunctionObjArgs(d->setter, obj, value, NULL);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

static PyObject *
data_attribute_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"name", "doc", "setter", NULL};
    PyObject *name, *doc = Py_None, *setter = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|OO:DataAttribute", keywords, &name,
                                     &doc, &setter))
        return NULL;
    if (setter != Py_None && !PyCallable_Check(setter)) {
        PyErr_SetString(PyExc_TypeError, "DataAttribute: setter must be callable or None");
        return NULL;
    }
    DataAttribute *self = (DataAttribute *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->name = Py_NewRef(name);
    self->doc = Py_NewRef(doc);
    self->setter = Py_NewRef(setter);
    return (PyObject *)self;
}

static int
data_attribute_traverse(PyObject *self, visitproc visit, void *arg)
{
    DataAttribute *d = (DataAttribute *)self;
    Py_VISIT(d->name);
    Py_VISIT(d->doc);
    Py_VISIT(d->setter);
    return 0;
}

static int
data_attribute_clear(PyObject *self)
{
    DataAttribute *d = (DataAttribute *)self;
    Py_CLEAR(d->name);
    Py_CLEAR(d->doc);
    Py_CLEAR(d->setter);
    return 0;
}

static void
data_attribute_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    data_attribute_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef data_attribute_members[] = {
    {"__doc__", OBJECT_SLOT, offsetof(DataAttribute, doc), MEMBER_READONLY, NULL},
    {"name", OBJECT_SLOT, offsetof(DataAttribute, name), MEMBER_READONLY,
     "The attribute of the array's data it reads."},
    {NULL},
};

static PyTypeObject DataAttributeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autodev._speedups.DataAttribute",
    .tp_doc = "DataAttribute(name, doc=None, setter=None)\n--\n\n"
              "The array's data's own attribute `name`, read from its slot.",
    .tp_basicsize = sizeof(DataAttribute),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = data_attribute_new,
    .tp_dealloc = data_attribute_dealloc,
    .tp_traverse = data_attribute_traverse,
    .tp_clear = data_attribute_clear,
    .tp_descr_get = data_attribute_get,
    .tp_descr_set = data_attribute_set,
    .tp_members = data_attribute_members,
};

/* ------------------------------------------------------------------ module functions */

static int
slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset)
{
    /* the type's own attribute: a member descriptor there is returned as it is */
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL && !PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
    PyErr_Clear();
    int member = descr != NULL && Py_TYPE(descr) == &PyMemberDescr_Type
                 && ((PyDescrObject *)descr)->d_type == type;
    if (!member) {
        Py_XDECREF(descr);
        PyErr_Format(PyExc_TypeError, "%s.%s is not a __slots__ member of the class itself",
                     type->tp_name, name);
        return -1;
    }
    PyMemberDef *def = ((PyMemberDescrObject *)descr)->d_member;
    int object_slot = def->type == OBJECT_SLOT;
    *offset = def->offset;
    Py_DECREF(descr);  /* (the class holds it) */
    if (!object_slot) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    return 0;
}

/* `list` made of the members of the frozenset `set` (which holds them): 0, or -1 with
 * TypeError (a member not a type, or more than MAX_TYPES). */
static int
fill_types(TypeList *list, PyObject *set)
{
    list->n = 0;
    PyObject *member, *members = PyObject_GetIter(set);
    if (members == NULL)
        return -1;
    while ((member = PyIter_Next(members)) != NULL) {
        int fits = PyType_Check(member) && list->n < MAX_TYPES;
        if (fits)
            list->types[list->n++] = (PyTypeObject *)member;
        Py_DECREF(member);
        if (!fits) {
            Py_DECREF(members);
            PyErr_SetString(PyExc_TypeError, "configure: a set of at most 32 types expected");
            return -1;
        }
    }
    Py_DECREF(members);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *
configure(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"array", "numpy_array", "cpu", "plain_operands",
                               "plain_scalars", "storage", "temporary_refs", "host_now",
                               "made_on_host", "policy", "plain_values", "basic_keys", NULL};
    PyObject *array, *np_array, *cpu, *plain, *scalars, *storage, *host_now, *made, *policy,
             *values, *keys;
    Py_ssize_t temporary_refs;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!OO!O!OnO!O!O!O!O!:configure", keywords,
                                     &PyType_Type, &array, &PyType_Type, &np_array, &cpu,
                                     &PyFrozenSet_Type, &plain, &PyFrozenSet_Type, &scalars,
                                     &storage, &temporary_refs, &PyDict_Type,
                                     &host_now, &PyDict_Type, &made, &PyContextVar_Type, &policy,
                                     &PyFrozenSet_Type, &values, &PyFrozenSet_Type, &keys))
        return NULL;
    Py_ssize_t offsets[N_SLOTS], version_offset;
    for (int i = 0; i < N_SLOTS; i++)
        if (slot_offset((PyTypeObject *)array, SlotNames[i], &offsets[i]) < 0)
            return NULL;
    if (!PyType_Check(storage)) {
        PyErr_SetString(PyExc_TypeError, "configure: storage must be a class");
        return NULL;
    }
    Py_ssize_t mirrored_offset, shared_offset;
    if (slot_offset((PyTypeObject *)storage, "version", &version_offset) < 0
            || slot_offset((PyTypeObject *)storage, "mirrored", &mirrored_offset) < 0
            || slot_offset((PyTypeObject *)storage, "shared", &shared_offset) < 0)
        return NULL;
    memcpy(Offsets, offsets, sizeof offsets);
    VersionOffset = version_offset;
    MirroredOffset = mirrored_offset;
    SharedOffset = shared_offset;
    Py_INCREF(array);
    Py_XSETREF(Array, (PyTypeObject *)array);
    Py_INCREF(np_array);
    Py_XSETREF(NpArray, (PyTypeObject *)np_array);
    Py_INCREF(cpu);
    Py_XSETREF(Cpu, cpu);
    Py_INCREF(plain);
    Py_XSETREF(PlainOperands, plain);
    TypeList scalar_types, key_types;
    if (fill_types(&scalar_types, scalars) < 0 || fill_types(&key_types, keys) < 0)
        return NULL;
    Py_INCREF(scalars);
    Py_XSETREF(PlainScalars, scalars);
    ScalarTypes = scalar_types;
    Py_INCREF(keys);
    Py_XSETREF(BasicKeys, keys);
    KeyTypes = key_types;
    Py_INCREF(values);
    Py_XSETREF(PlainValues, values);
    Py_INCREF(storage);
    Py_XSETREF(StorageType, storage);
    Py_INCREF(host_now);
    Py_XSETREF(HostNow, host_now);
    Py_INCREF(made);
    Py_XSETREF(MadeOnHost, made);
    Py_INCREF(policy);
    Py_XSETREF(Policy, policy);
    TemporaryRefs = temporary_refs;
    Py_RETURN_NONE;
}

/* set_sequence(depth, keywords): how deep array()'s compiled path looks into nested
 * lists, and the keywords it gives NumPy's array as they are (_creation). */
static PyObject *
set_sequence(PyObject *module, PyObject *args)
{
    int depth;
    PyObject *keywords;
    if (!PyArg_ParseTuple(args, "iO!:set_sequence", &depth, &PyTuple_Type, &keywords))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keywords); i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(keywords, i))) {
            PyErr_SetString(PyExc_TypeError, "set_sequence: keywords must be a tuple of str");
            return NULL;
        }
    Py_INCREF(keywords);
    Py_XSETREF(ArrayKeywords, keywords);
    SequenceDepth = depth < 0 ? 0 : depth;
    Py_RETURN_NONE;
}

static PyObject *
set_fast(PyObject *module, PyObject *args)
{
    int fast, host_fast, host_made;
    if (!PyArg_ParseTuple(args, "ppp:set_fast", &fast, &host_fast, &host_made))
        return NULL;
    if ((fast || host_fast || host_made) && Array == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "autodev._speedups: configure() first");
        return NULL;
    }
    Fast = fast;
    HostFast = host_fast;
    HostMade = host_made;
    Py_RETURN_NONE;
}

/* `*flag = bool(arg)`: None, or NULL with the error of arg's __bool__. */
static PyObject *
store_truth(int *flag, PyObject *arg)
{
    int truth = PyObject_IsTrue(arg);
    if (truth < 0)
        return NULL;
    *flag = truth;
    Py_RETURN_NONE;
}

static PyObject *
set_pending(PyObject *module, PyObject *arg)
{
    return store_truth(&Pending, arg);
}

/* The two sizes `args[0]` and `args[1]`, through `*first` and `*second`: 0, or -1 with
 * Python's error (not an int, or out of range). */
static int
two_sizes(PyObject *const *args, Py_ssize_t *first, Py_ssize_t *second)
{
    *first = PyLong_AsSsize_t(args[0]);
    if (*first == -1 && PyErr_Occurred())
        return -1;
    *second = PyLong_AsSsize_t(args[1]);
    return *second == -1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *
set_split_from(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "set_split_from(n, total, floors) takes two ints and a dict");
        return NULL;
    }
    Py_ssize_t n, total;
    if (two_sizes(args, &n, &total) < 0)
        return NULL;
    SplitFrom = n;
    TotalFrom = total;
    Py_INCREF(args[2]);
    Py_XSETREF(SplitFloors, args[2]);
    Py_RETURN_NONE;
}

static PyObject *
set_pool(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "set_pool(swap, handler, elements, nbytes) takes four arguments");
        return NULL;
    }
    Py_ssize_t from, bytes;
    if (two_sizes(args + 2, &from, &bytes) < 0)
        return NULL;
    int on = args[0] != Py_None;
    if (on && !PyCallable_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "set_pool(): swap must be callable or None");
        return NULL;
    }
    Py_XSETREF(PoolSwap, on ? Py_NewRef(args[0]) : NULL);
    Py_XSETREF(PoolHandler, on ? Py_NewRef(args[1]) : NULL);
    PooledFrom = on ? from : PY_SSIZE_T_MAX;
    PooledBytes = on ? bytes : PY_SSIZE_T_MAX;
    Py_RETURN_NONE;
}

static PyObject *
set_arguments(PyObject *module, PyObject *arg)
{
    TypeList types;
    if (!PyFrozenSet_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "set_arguments: a frozenset of types expected");
        return NULL;
    }
    if (fill_types(&types, arg) < 0)
        return NULL;
    Py_INCREF(arg);
    Py_XSETREF(PlainArguments, arg);
    ArgumentTypes = types;
    Py_RETURN_NONE;
}

static PyObject *
set_watching(PyObject *module, PyObject *arg)
{
    return store_truth(&Watching, arg);
}

/* Give `cls`, a Python subclass of a vectorcall type that keeps its base's call (no
 * __call__ of its own) and the instance field the base's vectorcall is stored at, the
 * base's vectorcall protocol: CPython does so itself from 3.12; before, such a subclass
 * (autodev's ufunc, a functools.partial) is called through tp_call, which packs the
 * arguments into a tuple first. True if done, False where `cls` is not such a type. */
static PyObject *
inherit_vectorcall(PyObject *module, PyObject *cls)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "inherit_vectorcall() takes a class");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls, *base = type->tp_base;
    if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) || base == NULL
            || !(base->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL) || type->tp_call != base->tp_call
            || type->tp_vectorcall_offset != base->tp_vectorcall_offset
            || type->tp_vectorcall_offset <= 0)
        Py_RETURN_FALSE;
    type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    PyType_Modified(type);
    Py_RETURN_TRUE;
}

static PyObject *
calls(PyObject *module, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(Calls);
}

static PyObject *
refcount_seen(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "refcount_seen() takes at least one argument");
        return NULL;
    }
    return PyLong_FromSsize_t(Py_REFCNT(args[0]));
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "configure(array, numpy_array, cpu, plain_operands, plain_scalars, storage,\n"
     "          temporary_refs, host_now, made_on_host, policy, plain_values,\n"
     "          basic_keys)\n--\n\n"
     "Bind the fast paths to autodev's array class and what its fast paths use."},
    {"set_sequence", set_sequence, METH_VARARGS,
     "set_sequence(depth, keywords)\n--\n\nHow deep array()'s compiled path looks into nested "
     "lists of numbers, and the keywords it gives NumPy's array as they are "
     "(autodev._creation: SEQUENCE_DEPTH, ARRAY_KEYWORDS)."},
    {"set_fast", set_fast, METH_VARARGS,
     "set_fast(fast, host_fast, host_made)\n--\n\nThe dispatcher's flags: no GPU usable and "
     "nothing watching (STATE.fast); a GPU usable, nothing watching, nothing pinned "
     "(STATE.host_fast); that, or no GPU probed yet (STATE.host_made: creation the policy "
     "makes on the host needs no probe)."},
    {"set_pending", set_pending, METH_O,
     "set_pending(pending)\n--\n\nWhile a deferred chain is pending (autodev._fusion), operator "
     "and ufunc calls go to the fallback, as the Python paths' _ACTIVE sends theirs to the "
     "general path."},
    {"set_split_from", (PyCFunction)(void (*)(void))set_split_from, METH_FASTCALL,
     "set_split_from(n, total, floors)\n--\n\nWith no GPU usable, calls with a NumPy operand of n "
     "or more elements go to the fallback, which may split them over threads "
     "(autodev._parallel) or defer them; a call whose FastCall names a family (threads=), "
     "from floors[family] elements; a reduction over every axis, of total or more elements."},
    {"set_pool", (PyCFunction)(void (*)(void))set_pool, METH_FASTCALL,
     "set_pool(swap, handler, elements, nbytes)\n--\n\nWith no GPU usable, a call the fast "
     "path runs with a NumPy operand of nbytes or more (elements or more elements) runs in the "
     "host pool's scope: swap(handler) before NumPy's call, the handler it gave back after "
     "(autodev._host_buffers); swap None: no pool."},
    {"set_arguments", set_arguments, METH_O,
     "set_arguments(types)\n--\n\nThe exact types of a dispatched method's arguments that NumPy "
     "is given as they are (autodev._operators._PLAIN_ARGUMENTS); any other goes to the "
     "fallback."},
    {"set_watching", set_watching, METH_O,
     "set_watching(flag)\n--\n\nWhile true, every setitem goes to the fallback (a deferred "
     "chain reads memory through views: autodev._fusion.WATCHED)."},
    {"inherit_vectorcall", inherit_vectorcall, METH_O,
     "inherit_vectorcall(cls)\n--\n\nGive a subclass that keeps its base's call the base's "
     "vectorcall protocol, as CPython 3.12+ does itself; True if done."},
    {"calls", calls, METH_NOARGS,
     "calls()\n--\n\nHow many calls the compiled hot path ran (autodev._trace.fast_calls)."},
    {NULL},
};

/* A binary operator's probe: the reference count it sees on its left operand, called as
 * the operator slots call a FastCall (to tell a temporary from a named value). */
static PyObject *
probe_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return refcount_seen(NULL, args, PyVectorcall_NARGS(nargsf));
}

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
} Probe;

static PyObject *
probe_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyTypeObject ProbeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autodev._speedups.RefcountProbe",
    .tp_doc = "As an __add__, returns the reference count the compiled operators see on "
              "their left operand.",
    .tp_basicsize = sizeof(Probe),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(Probe, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = probe_get,
};

/* Module state is process-wide (the statics above: the one array class the fast paths are
 * bound to, and their flags), so the module is loaded once per process: not in a
 * subinterpreter of its own. It needs the GIL: its fast paths read the array's slots as
 * borrowed references and count calls in a plain integer, which another thread running at
 * the same time could free or race; on a free-threaded CPython (3.13t and later) loading
 * it therefore keeps the GIL on, as this declaration says. */
static int
module_exec(PyObject *m)
{
    /* object's own tp_new, so that object.__new__(subclass) stays allowed */
    BufferExporterType.tp_new = PyBaseObject_Type.tp_new;
    if (PyType_Ready(&FastCallType) < 0 || PyType_Ready(&FastFunctionType) < 0
            || PyType_Ready(&ProbeType) < 0 || PyType_Ready(&BufferExporterType) < 0
            || PyType_Ready(&DataAttributeType) < 0)
        return -1;
    if (VersionName == NULL) {  /* (a second load in the process keeps the first's) */
        VersionName = PyUnicode_InternFromString("version");
        NbytesName = PyUnicode_InternFromString("nbytes");
        One = PyLong_FromLong(1);
        MirroredName = PyUnicode_InternFromString("mirrored");
        SharedName = PyUnicode_InternFromString("shared");
        NativeName = PyUnicode_InternFromString("_native");
        if (VersionName == NULL || NbytesName == NULL || One == NULL
                || MirroredName == NULL || SharedName == NULL || NativeName == NULL)
            return -1;
    }
    PyObject *slots = PyTuple_New(N_SLOTS);
    if (slots == NULL)
        return -1;
    for (int i = 0; i < N_SLOTS; i++) {
        PyObject *name = PyUnicode_FromString(SlotNames[i]);
        if (name == NULL) {
            Py_DECREF(slots);
            return -1;
        }
        PyTuple_SET_ITEM(slots, i, name);
    }
    PyObject *bounds = Py_BuildValue("{sisisi}", "largest", BOUND_LARGEST,
                                     "product", BOUND_PRODUCT, "broadcast", BOUND_BROADCAST);
    int failed = bounds == NULL || PyModule_AddObjectRef(m, "SLOTS", slots) < 0
        || PyModule_AddObjectRef(m, "BOUNDS", bounds) < 0
        || PyModule_AddIntConstant(m, "ELIDE_BYTES", ELIDE_BYTES) < 0;
    Py_XDECREF(bounds);
    Py_DECREF(slots);
    if (failed)
        return -1;
    Probe *probe = PyObject_New(Probe, &ProbeType);
    if (probe == NULL)
        return -1;
    probe->vectorcall = probe_vectorcall;
    failed = PyModule_AddObjectRef(m, "refcount_probe", (PyObject *)probe) < 0;
    Py_DECREF(probe);
    if (failed
            || PyModule_AddObjectRef(m, "BufferExporter", (PyObject *)&BufferExporterType) < 0
            || PyModule_AddObjectRef(m, "FastCall", (PyObject *)&FastCallType) < 0
            || PyModule_AddObjectRef(m, "FastFunction", (PyObject *)&FastFunctionType) < 0
            || PyModule_AddObjectRef(m, "DataAttribute", (PyObject *)&DataAttributeType) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "autodev._speedups",
    .m_doc = "autodev's compiled hot path: fast paths standing in front of pure-Python ones.",
    .m_size = 0,
    .m_methods = module_methods,
    .m_slots = module_slots,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModuleDef_Init(&module_def);  /* multi-phase initialisation (PEP 489) */
}

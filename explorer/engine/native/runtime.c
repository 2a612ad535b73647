/* The native engine's value runtime and breadth-first search (see docs/engine.md).
   Generated per spec: codegen.py writes the spec's actions and predicates after this file. */
#define _GNU_SOURCE  /* mremap: the fingerprint table grows in place */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdio.h>
#include <unistd.h>

typedef uint64_t V;  /* an integer (low bits x1, 63 bits), a small set (low bits 10) or a pointer to an Obj (00) */

enum { K_BOOL = 0, K_INT = 1, K_STR = 2, K_SEQ = 3, K_SET = 4, K_MAP = 6, K_INF = 7 };

typedef struct Obj {
    uint16_t kind;
    uint16_t interned;  /* a string of the spec's: its slot + 1 in STR_TABLE (equal strings, equal slots) */
    uint32_t len;   /* elements (a map: pairs; a string: bytes) */
    uint64_t hash;  /* a frozen value's content hash (see freeze); 0: a value in a state's arena */
    uint64_t hash2; /* a frozen value's second, independent content hash (the fingerprints' other 64 bits) */
    V it[];         /* SEQ, SET: elements; MAP: key, value, key, value...; STR: the bytes */
} Obj;

#define IS_INT(v) ((v) & 1)
#define IVAL(v) ((int64_t)(v) >> 1)
#define OBJ(v) ((Obj *)(uintptr_t)(v))
/* A set whose elements are all integers in 0..SB_MAX is always one word, never an Obj: bit 2 + i
   holds i (a static layout for the sets of ordinals specs are made of). The layout is canonical,
   so two sets are equal exactly when their words are, and every function that makes a set ends in
   set_fin (or builds the word directly). The empty set is SB_EMPTY. */
#define SB_MAX 61
#define IS_SB(v) (((v) & 3) == 2)
#define IS_OBJ(v) (!((v) & 3))
#define SB_EMPTY ((V)2)
#define SB_SMALL(x) (((x) & 1) && (x) <= (V)(2 * SB_MAX + 1))  /* an integer in 0..SB_MAX, as a tagged word */
#define SB_BIT(x) ((V)1 << (2 + ((x) >> 1)))                    /* its bit (x tagged, SB_SMALL) */
#define KIND(v) (IS_INT(v) ? K_INT : IS_SB(v) ? K_SET : OBJ(v)->kind)
#define LEN(v) (OBJ(v)->len)
#define IT(v, i) (OBJ(v)->it[i])
#define INT_MIN63 (-(INT64_C(1) << 62))
#define INT_MAX63 ((INT64_C(1) << 62) - 1)

typedef struct Block { struct Block *next; size_t size; char data[]; } Block;

/* One searcher's scratch: an arena reset after each state, the state it evaluates, the memo of
   its state-dependent definitions, and where an evaluation error jumps to. */
typedef struct Ctx {
    Block *first, *cur;
    char *top, *end;
    jmp_buf fail;
    V *s;                /* the state evaluated: one frozen value per variable */
    V *t;                /* an action property's predicate (`always [P]`): the step's next state, x' */
    uint64_t gen;
    uint64_t *memo_gen;
    V *memo;
    int depth;
    /* successors of the state being expanded */
    V *succ; int *succ_act; size_t nsucc, cap_succ;
    uint64_t *succ_fair;  /* recording: per successor, the bits of its action's fairness on parameter values */
    V fv[8];              /* the values of those parameters (`fair(p)`) for the successor being emitted */
    V pin[8]; int npin;   /* `enabled A(e1, ...)`: only successors whose first npin parameters are these */
    volatile int *stop;  /* Python asked the search to stop: leave even a state's expansion */
    uint32_t ticks;      /* loop iterations and calls since the last look at *stop (TICK) */
    struct Store *store; /* where this searcher freezes the values of the states it finds */
} Ctx;

static Obj TRUE_OBJ = {K_BOOL, 0, 1, 0x5851F42D4C957F2Dull, 0x8C5D1F0A3B7E2964ull};
static Obj FALSE_OBJ = {K_BOOL, 0, 0, 0x14057B7EF767814Full, 0x3F84D5B5B5470917ull};
static Obj NAT_OBJ = {K_INF, 0, 0, 0x2545F4914F6CDD1Dull, 0xA54FF53A5F1D36F1ull};
static Obj INT_OBJ = {K_INF, 0, 1, 0x9FB21C651E98DF25ull, 0x510E527FADE682D1ull};
#define VTRUE ((V)(uintptr_t)&TRUE_OBJ)
#define VFALSE ((V)(uintptr_t)&FALSE_OBJ)
#define VNAT ((V)(uintptr_t)&NAT_OBJ)
#define VINT ((V)(uintptr_t)&INT_OBJ)
static Obj FAIL_OBJ = {99, 0, 0, 0x3C6EF372FE94F82Bull, 0x9B05688C2B3E6C1Full};  /* a state-free expression that failed to evaluate (codegen.FAILED) */
#define VFAIL ((V)(uintptr_t)&FAIL_OBJ)
#define BOOLV(b) ((b) ? VTRUE : VFALSE)
#define MAX_RANGE 1000000
#define MAX_RECURSION 400

/* ---- errors: any evaluation error hands the run back to the Python engine ---- */
__attribute__((noreturn)) static void fail(Ctx *c) { longjmp(c->fail, 1); }
/* Every loop the generated code runs (quantifiers, comprehensions, the initial states' domains) and
   every call of a definition with parameters ticks: each 1024th tick looks at Python's stop flag,
   so a limit, Ctrl-C or SIGTERM is taken inside one expensive state too (`forall k in 0..10^15`)
   within microseconds of being asked, as the search (code 2: stopped) and never as an error. */
#define TICK(c) do { if (!(++(c)->ticks & 1023) && *(c)->stop) longjmp((c)->fail, 2); } while (0)

static V *KT;  /* the constants table: state-free values, computed by the Python engine */
__attribute__((noreturn)) static V failv(Ctx *c) { fail(c); }
#define K(i) (KT[i] != VFAIL ? KT[i] : failv(c))

static inline V mk_int(Ctx *c, int64_t i) {
    if (i < INT_MIN63 || i > INT_MAX63) fail(c);
    return ((uint64_t)i << 1) | 1;
}
#define MK_INT(i) ((((uint64_t)(int64_t)(i)) << 1) | 1)

/* ---- the arena ---- */
static void *arena(Ctx *c, size_t n) {
    n = (n + 7) & ~(size_t)7;  /* words: every object is a header and words */
    if ((size_t)(c->end - c->top) < n) {
        Block *b = c->cur->next;
        if (!b || b->size < n) {
            size_t size = n > (1u << 20) ? n : (1u << 20);
            Block *nb = malloc(sizeof(Block) + size);
            if (!nb) fail(c);
            nb->size = size; nb->next = c->cur->next; c->cur->next = nb; b = nb;
        }
        c->cur = b; c->top = b->data; c->end = b->data + b->size;
    }
    void *p = c->top; c->top += n; return p;
}
/* a point in the arena to come back to: what was taken after it is free again */
typedef struct { Block *cur; char *top; } Mark;
static inline Mark arena_mark(Ctx *c) { Mark m = {c->cur, c->top}; return m; }
static inline void arena_release(Ctx *c, Mark m) { c->cur = m.cur; c->top = m.top; c->end = m.cur->data + m.cur->size; }
static void arena_reset(Ctx *c) { c->cur = c->first; c->top = c->first->data; c->end = c->first->data + c->first->size; }
static Obj *obj(Ctx *c, uint32_t kind, uint32_t len, size_t words) {
    Obj *o = arena(c, sizeof(Obj) + words * sizeof(V));
    o->kind = (uint16_t)kind; o->interned = 0; o->len = len; o->hash = 0; return o;
}
#define V_OF(o) ((V)(uintptr_t)(o))

/* ---- the canonical order (values.sort_key): kind, then length, then elements ---- */
static int rank(V v) { return IS_INT(v) ? 1 : IS_SB(v) ? K_SET : (OBJ(v)->kind == K_MAP ? 6 : (int)OBJ(v)->kind); }
static inline uint32_t sb_unpack(V s, V *out) {  /* a small set's elements, in order */
    uint32_t n = 0;
    for (uint64_t b = s >> 2; b; b &= b - 1) out[n++] = MK_INT(__builtin_ctzll(b));
    return n;
}
/* a set's elements in the canonical order: an Obj's own array, or a small set's unpacked into buf */
static inline const V *elems(V s, V *buf, uint32_t *n) {
    if (IS_SB(s)) { *n = sb_unpack(s, buf); return buf; }
    *n = OBJ(s)->len; return OBJ(s)->it;
}
static inline uint32_t card(V s) { return IS_SB(s) ? (uint32_t)__builtin_popcountll(s >> 2) : OBJ(s)->len; }
static int cmp(V a, V b);
static int cmp_sets(V a, V b) {  /* two sets, at least one small: length, then elements */
    uint32_t na = card(a), nb = card(b);
    if (na != nb) return na < nb ? -1 : 1;
    if (IS_SB(a) && IS_SB(b)) {  /* the first element they differ in is the lowest bit of a ^ b */
        V d = (a ^ b) >> 2; d &= -d;
        return (a >> 2) & d ? -1 : 1;
    }
    V xa[SB_MAX + 1], xb[SB_MAX + 1]; const V *pa = elems(a, xa, &na), *pb = elems(b, xb, &nb);
    for (uint32_t i = 0; i < na; i++) { int r = cmp(pa[i], pb[i]); if (r) return r; }
    return 0;
}
static int cmp(V a, V b) {
    if (a == b) return 0;
    if (a & b & 1) return (int64_t)a < (int64_t)b ? -1 : 1;  /* two integers: tagged words order as their values */
    int ra = rank(a), rb = rank(b);
    if (ra != rb) return ra < rb ? -1 : 1;
    if (ra == 1) { int64_t x = IVAL(a), y = IVAL(b); return x < y ? -1 : 1; }
    if ((a | b) & 2) return cmp_sets(a, b);
    Obj *x = OBJ(a), *y = OBJ(b);
    if (ra == K_BOOL || ra == K_INF) return x->len < y->len ? -1 : (x->len > y->len);
    if (ra == K_STR) {
        uint32_t n = x->len < y->len ? x->len : y->len;
        int r = memcmp(x->it, y->it, n);
        if (r) return r < 0 ? -1 : 1;
        return x->len < y->len ? -1 : (x->len > y->len);
    }
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    uint32_t n = ra == K_MAP ? 2 * x->len : x->len;
    for (uint32_t i = 0; i < n; i++) { int r = cmp(x->it[i], y->it[i]); if (r) return r; }
    return 0;
}
/* the order of y and x (cmp), without a call when both are integers (most sets and keys here) */
static inline int cmp_fast(V y, V x) { return (y & x & 1) ? ((int64_t)y < (int64_t)x ? -1 : (y != x)) : cmp(y, x); }
static inline int eq(V a, V b) {
    if (a == b) return 1;
    if ((a | b) & 3) return 0;  /* an integer or a small set equals only its own word */
    if (OBJ(a)->interned && OBJ(b)->interned) return OBJ(a)->interned == OBJ(b)->interned;
    if (OBJ(a)->hash && OBJ(b)->hash && OBJ(a)->hash != OBJ(b)->hash) return 0;  /* two frozen values */
    return cmp(a, b) == 0;
}

static void sort_values(V *a, size_t n) {  /* insertion sort for small n, merge sort beyond */
    if (n < 24) {
        for (size_t i = 1; i < n; i++) { V x = a[i]; size_t j = i; while (j && cmp_fast(a[j - 1], x) > 0) { a[j] = a[j - 1]; j--; } a[j] = x; }
        return;
    }
    size_t h = n / 2; sort_values(a, h); sort_values(a + h, n - h);
    V *t = malloc(n * sizeof(V)); size_t i = 0, j = h, k = 0;
    while (i < h && j < n) t[k++] = cmp_fast(a[i], a[j]) <= 0 ? a[i++] : a[j++];
    while (i < h) t[k++] = a[i++]; while (j < n) t[k++] = a[j++];
    memcpy(a, t, n * sizeof(V)); free(t);
}
/* pairs (key, value) by key, then value */
static void sort_pairs(V *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        V k = a[2 * i], v = a[2 * i + 1]; size_t j = i;
        while (j) { int r = cmp_fast(a[2 * j - 2], k); if (r < 0 || (r == 0 && cmp_fast(a[2 * j - 1], v) <= 0)) break;
            a[2 * j] = a[2 * j - 2]; a[2 * j + 1] = a[2 * j - 1]; j--; }
        a[2 * j] = k; a[2 * j + 1] = v;
    }
}

/* ---- constructors ---- */
/* a set made as an Obj (its elements sorted, each once), as the canonical layout wants it: a small set
   when every element is an integer in 0..SB_MAX (sorted, so the first and the last tell) */
static V set_fin(Obj *o) {
    uint32_t n = o->len;
    if (!n) return SB_EMPTY;
    if (!SB_SMALL(o->it[0]) || !SB_SMALL(o->it[n - 1])) return V_OF(o);
    V bits = SB_EMPTY;
    for (uint32_t i = 0; i < n; i++) bits |= SB_BIT(o->it[i]);
    return bits;
}
static inline V sb_of(const V *items, size_t n, int *ok) {  /* the small set of items, if each is small */
    V bits = SB_EMPTY;
    for (size_t i = 0; i < n; i++) { if (!SB_SMALL(items[i])) { *ok = 0; return 0; } bits |= SB_BIT(items[i]); }
    *ok = 1; return bits;
}
static V set_of(Ctx *c, V *items, size_t n) {  /* items: scratch, reordered */
    int ok; V bits = sb_of(items, n, &ok); if (ok) return bits;
    sort_values(items, n);
    Obj *o = obj(c, K_SET, 0, n); size_t m = 0;
    for (size_t i = 0; i < n; i++) if (!m || !eq(o->it[m - 1], items[i])) o->it[m++] = items[i];
    o->len = (uint32_t)m; return V_OF(o);
}
/* elements (pairs) already in the canonical order, each once: a domain's own elements, filtered */
static V set_sorted(Ctx *c, const V *items, size_t n) {
    int ok; V bits = sb_of(items, n, &ok); if (ok) return bits;
    Obj *o = obj(c, K_SET, (uint32_t)n, n); memcpy(o->it, items, n * sizeof(V)); return V_OF(o);
}
static V map_sorted(Ctx *c, const V *pairs, size_t n) {
    Obj *o = obj(c, K_MAP, (uint32_t)n, 2 * n); if (n) memcpy(o->it, pairs, 2 * n * sizeof(V)); return V_OF(o);
}
static V seq_of(Ctx *c, const V *items, size_t n) {
    Obj *o = obj(c, K_SEQ, (uint32_t)n, n); memcpy(o->it, items, n * sizeof(V)); return V_OF(o);
}
static V map_of(Ctx *c, V *pairs, size_t n) {  /* a key given two values is an error */
    sort_pairs(pairs, n);
    Obj *o = obj(c, K_MAP, 0, 2 * n); size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && eq(o->it[2 * m - 2], pairs[2 * i])) { if (!eq(o->it[2 * m - 1], pairs[2 * i + 1])) fail(c); continue; }
        o->it[2 * m] = pairs[2 * i]; o->it[2 * m + 1] = pairs[2 * i + 1]; m++;
    }
    o->len = (uint32_t)m; return V_OF(o);
}
static V str_of(Ctx *c, const char *b, size_t n) {
    Obj *o = obj(c, K_STR, (uint32_t)n, (n + 7) / 8); memcpy(o->it, b, n); return V_OF(o);
}

/* a growable list of values in the arena (comprehensions) */
typedef struct { V *a; size_t n, cap; } Buf;
static void push(Ctx *c, Buf *b, V x) {
    if (b->n == b->cap) { size_t cap = b->cap ? 2 * b->cap : 16; V *a = arena(c, cap * sizeof(V)); if (b->n) memcpy(a, b->a, b->n * sizeof(V)); b->a = a; b->cap = cap; }
    b->a[b->n++] = x;
}

/* ---- predicates on kinds ---- */
static inline int is(V v, uint32_t k) { return IS_SB(v) ? k == K_SET : IS_OBJ(v) && OBJ(v)->kind == k; }
static inline int truth(Ctx *c, V v) { if (v == VTRUE) return 1; if (v == VFALSE) return 0; fail(c); }
static inline int64_t ival(Ctx *c, V v) { if (!IS_INT(v)) fail(c); return IVAL(v); }
static inline V dom(Ctx *c, V v) { if (!is(v, K_SET)) fail(c); return v; }

/* ---- lookup ---- */
static long find_set(V s, V x) {
    long lo = 0, hi = (long)LEN(s) - 1;
    while (lo <= hi) { long m = (lo + hi) / 2; int r = cmp_fast(IT(s, m), x); if (!r) return m; if (r < 0) lo = m + 1; else hi = m - 1; }
    return -1;
}
static long find_key(V m, V k) {
    long lo = 0, hi = (long)LEN(m) - 1;
    while (lo <= hi) { long i = (lo + hi) / 2; int r = cmp_fast(IT(m, 2 * i), k); if (!r) return i; if (r < 0) lo = i + 1; else hi = i - 1; }
    return -1;
}
static int member_obj(Ctx *c, V x, V s) {
    if (IS_INT(s)) fail(c);
    switch (OBJ(s)->kind) {
    case K_SET: return find_set(s, x) >= 0;
    case K_MAP: return find_key(s, x) >= 0;
    case K_SEQ: for (uint32_t i = 0; i < LEN(s); i++) if (eq(IT(s, i), x)) return 1; return 0;
    case K_INF: return IS_INT(x) && (OBJ(s)->len == 1 || IVAL(x) >= 0);
    }
    fail(c);
}
/* x in s: a small set's bit without a call (the collector's invariant asks it millions of times) */
static inline int member(Ctx *c, V x, V s) { return IS_SB(s) ? SB_SMALL(x) && (s & SB_BIT(x)) : member_obj(c, x, s); }
static int in_range(Ctx *c, V x, V a, V b) {
    int64_t lo = ival(c, a), hi = ival(c, b);
    return IS_INT(x) && IVAL(x) >= lo && IVAL(x) <= hi;
}
static int in_fnset(Ctx *c, V f, V s, V t) {
    if (!(is(s, K_SET) || is(s, K_INF)) || !(is(t, K_SET) || is(t, K_INF))) fail(c);
    if (is(s, K_INF) || !is(f, K_MAP) || LEN(f) != card(s)) return 0;
    for (uint32_t i = 0; i < LEN(f); i++) if (!member(c, IT(f, 2 * i), s) || !member(c, IT(f, 2 * i + 1), t)) return 0;
    return 1;
}
static int in_seqset(Ctx *c, V x, V s) {  /* x in seq(S): a sequence whose elements are all in S */
    if (!(is(s, K_SET) || is(s, K_INF))) fail(c);
    if (!is(x, K_SEQ)) return 0;
    for (uint32_t i = 0; i < LEN(x); i++) if (!member(c, IT(x, i), s)) return 0;
    return 1;
}
static V get(Ctx *c, V b, V k) {
    if (is(b, K_SEQ)) { if (!IS_INT(k) || IVAL(k) < 0 || IVAL(k) >= LEN(b)) fail(c); return IT(b, IVAL(k)); }
    if (is(b, K_MAP)) { long i = find_key(b, k); if (i < 0) fail(c); return IT(b, 2 * i + 1); }
    fail(c);
}
static V field(Ctx *c, V b, V name) {  /* name: a string of the spec's, so interned: a record's keys are found by their slot */
    if (!is(b, K_MAP)) fail(c);
    uint16_t slot = OBJ(name)->interned;
    if (slot && LEN(b) <= 16)
        for (uint32_t i = 0; i < LEN(b); i++) { V k = IT(b, 2 * i); if (IS_OBJ(k) && OBJ(k)->interned == slot) return IT(b, 2 * i + 1); }
    long i = find_key(b, name); if (i < 0) fail(c); return IT(b, 2 * i + 1);
}

/* ---- arithmetic (Python's meaning: floor division, the modulo takes the divisor's sign) ---- */
static V add(Ctx *c, V a, V b) {
    if (IS_INT(a) && IS_INT(b)) return mk_int(c, IVAL(a) + IVAL(b));
    if (is(a, K_SEQ) && is(b, K_SEQ)) {
        Obj *o = obj(c, K_SEQ, LEN(a) + LEN(b), LEN(a) + LEN(b));
        memcpy(o->it, OBJ(a)->it, LEN(a) * sizeof(V)); memcpy(o->it + LEN(a), OBJ(b)->it, LEN(b) * sizeof(V)); return V_OF(o);
    }
    if (is(a, K_STR) && is(b, K_STR)) {
        size_t n = LEN(a) + LEN(b); char *t = arena(c, n + 1);
        memcpy(t, OBJ(a)->it, LEN(a)); memcpy(t + LEN(a), OBJ(b)->it, LEN(b)); return str_of(c, t, n);
    }
    fail(c);
}
static V set_diff(Ctx *c, V a, V b);
static V sub(Ctx *c, V a, V b) {
    if (IS_INT(a) && IS_INT(b)) return mk_int(c, IVAL(a) - IVAL(b));
    if (is(a, K_SET) && is(b, K_SET)) return set_diff(c, a, b);
    fail(c);
}
static V mul(Ctx *c, V a, V b) {
    int64_t r;
    if (!IS_INT(a) || !IS_INT(b) || __builtin_mul_overflow(IVAL(a), IVAL(b), &r)) fail(c);
    return mk_int(c, r);
}
static V neg(Ctx *c, V a) { return mk_int(c, -ival(c, a)); }
static V divi(Ctx *c, V a, V b) {
    int64_t x = ival(c, a), y = ival(c, b); if (!y) fail(c);
    int64_t q = x / y; if ((x % y) && ((x < 0) != (y < 0))) q--; return mk_int(c, q);
}
static V modi(Ctx *c, V a, V b) {
    int64_t x = ival(c, a), y = ival(c, b); if (!y) fail(c);
    int64_t m = x % y; if (m && ((m < 0) != (y < 0))) m += y; return mk_int(c, m);
}
static V powi(Ctx *c, V a, V b) {
    int64_t x = ival(c, a), y = ival(c, b), r = 1; if (y < 0) fail(c);
    /* the bases whose powers never grow: 0, 1 and -1 (whose sign alternates), for any exponent */
    if (x == 0) return MK_INT(y == 0);
    if (x == 1) return MK_INT(1);
    if (x == -1) return MK_INT(y & 1 ? -1 : 1);
    while (y--) if (__builtin_mul_overflow(r, x, &r)) fail(c);  /* |x| >= 2: at most 63 rounds */
    return mk_int(c, r);
}

/* ---- sets ---- */
/* a and b are sets: two small sets are one bitwise operation; otherwise a merge of the elements
   (a small one unpacked), whose result set_fin lays out */
#define SET_ARGS V xa[SB_MAX + 1], xb[SB_MAX + 1]; uint32_t na, nb; const V *pa = elems(a, xa, &na), *pb = elems(b, xb, &nb)
static V set_union(Ctx *c, V a, V b) {
    if (IS_SB(a) && IS_SB(b)) return a | b;
    SET_ARGS;
    Obj *o = obj(c, K_SET, 0, na + nb); uint32_t i = 0, j = 0, m = 0;
    while (i < na && j < nb) { int r = cmp_fast(pa[i], pb[j]); if (r < 0) o->it[m++] = pa[i++]; else if (r > 0) o->it[m++] = pb[j++]; else { o->it[m++] = pa[i++]; j++; } }
    while (i < na) o->it[m++] = pa[i++]; while (j < nb) o->it[m++] = pb[j++];
    o->len = m; return set_fin(o);
}
static V set_inter(Ctx *c, V a, V b) {
    if (IS_SB(a) && IS_SB(b)) return a & b;
    SET_ARGS;
    Obj *o = obj(c, K_SET, 0, na < nb ? na : nb); uint32_t i = 0, j = 0, m = 0;
    while (i < na && j < nb) { int r = cmp_fast(pa[i], pb[j]); if (r < 0) i++; else if (r > 0) j++; else { o->it[m++] = pa[i++]; j++; } }
    o->len = m; return set_fin(o);
}
static V set_diff(Ctx *c, V a, V b) {
    if (IS_SB(a) && IS_SB(b)) return (a & ~b) | SB_EMPTY;
    SET_ARGS;
    Obj *o = obj(c, K_SET, 0, na); uint32_t i = 0, j = 0, m = 0;
    while (i < na && j < nb) { int r = cmp_fast(pa[i], pb[j]); if (r < 0) o->it[m++] = pa[i++]; else if (r > 0) j++; else { i++; j++; } }
    while (i < na) o->it[m++] = pa[i++];
    o->len = m; return set_fin(o);
}
static int set_le(V a, V b) {  /* a is a subset of b */
    if (IS_SB(a) && IS_SB(b)) return !(a & ~b);  /* the tag bits: a's 10 under b's 10 */
    SET_ARGS;
    uint32_t i = 0, j = 0;
    while (i < na) { if (j == nb) return 0; int r = cmp_fast(pa[i], pb[j]); if (r < 0) return 0; if (r == 0) i++; j++; }
    return 1;
}
static V map_union(Ctx *c, V a, V b) {  /* b's values win */
    Obj *o = obj(c, K_MAP, 0, 2 * (LEN(a) + LEN(b))); uint32_t i = 0, j = 0, m = 0;
    while (i < LEN(a) || j < LEN(b)) {
        int r = i == LEN(a) ? 1 : j == LEN(b) ? -1 : cmp_fast(IT(a, 2 * i), IT(b, 2 * j));
        if (r < 0) { o->it[2 * m] = IT(a, 2 * i); o->it[2 * m + 1] = IT(a, 2 * i + 1); i++; }
        else { o->it[2 * m] = IT(b, 2 * j); o->it[2 * m + 1] = IT(b, 2 * j + 1); j++; if (!r) i++; }
        m++;
    }
    o->len = m; return V_OF(o);
}
static V union2(Ctx *c, V a, V b) {
    if (is(a, K_SET) && is(b, K_SET)) return set_union(c, a, b);
    if (is(a, K_MAP) && is(b, K_MAP)) return map_union(c, a, b);
    fail(c);
}
static V inter2(Ctx *c, V a, V b) { if (is(a, K_SET) && is(b, K_SET)) return set_inter(c, a, b); fail(c); }
static int compare(Ctx *c, V a, V b, int op) {  /* op: 0 <, 1 <=, 2 >, 3 >= */
    if (IS_INT(a) && IS_INT(b)) { int64_t x = IVAL(a), y = IVAL(b); return op == 0 ? x < y : op == 1 ? x <= y : op == 2 ? x > y : x >= y; }
    if (is(a, K_SET) && is(b, K_SET)) {
        if (op >= 2) { V t = a; a = b; b = t; op -= 2; }
        return set_le(a, b) && (op == 1 || card(a) < card(b));
    }
    fail(c);
}
static int subset(Ctx *c, V a, V b) { if (is(a, K_SET) && is(b, K_SET)) return set_le(a, b); fail(c); }
static V range(Ctx *c, V a, V b) {
    int64_t lo = ival(c, a), hi = ival(c, b);
    if (hi < lo) return SB_EMPTY;
    if (lo >= 0 && hi <= SB_MAX) return SB_EMPTY | ((((V)2 << (hi - lo)) - 1) << (2 + lo));
    if (hi - lo >= MAX_RANGE) fail(c);  /* hi - lo fits in 64 bits for 63-bit ends; hi - lo + 1 may not */
    Obj *o = obj(c, K_SET, (uint32_t)(hi - lo + 1), hi - lo + 1);
    for (int64_t i = lo; i <= hi; i++) o->it[i - lo] = MK_INT(i);
    return V_OF(o);
}
static int64_t range_count(Ctx *c, V a, V b, int build) {  /* a..b as a domain */
    int64_t lo = ival(c, a), hi = ival(c, b);
    if (build && hi >= lo && hi - lo >= MAX_RANGE) fail(c);
    return hi < lo ? 0 : hi - lo == INT64_MAX ? INT64_MAX : hi - lo + 1;  /* -2^62..2^62-1 has 2^63 */
}
/* [S -> T] one map at a time, in the canonical order (the last key's value changes fastest) */
typedef struct { const V *s, *t; uint32_t n, k; uint32_t *digit; int state; V map; } FnIter;  /* state: 0 fresh, 1 going, 2 done */
static const V *elems_kept(Ctx *c, V s, uint32_t *n) {  /* elems, a small set's unpacked into the arena */
    if (!IS_SB(s)) { *n = OBJ(s)->len; return OBJ(s)->it; }
    V *buf = arena(c, (SB_MAX + 1) * sizeof(V)); *n = sb_unpack(s, buf); return buf;
}
static void fn_iter_start(Ctx *c, FnIter *f, V s, V t) {
    if (!is(s, K_SET) || !is(t, K_SET)) fail(c);
    f->s = elems_kept(c, s, &f->n); f->t = elems_kept(c, t, &f->k); f->state = f->n && !f->k ? 2 : 0;
    f->digit = arena(c, (f->n + 1) * sizeof(uint32_t)); memset(f->digit, 0, (f->n + 1) * sizeof(uint32_t));
}
static int fn_iter_next(Ctx *c, FnIter *f) {
    if (f->state == 2) return 0;
    if (f->state == 1) {
        long i = (long)f->n - 1;
        for (; i >= 0; i--) { if (++f->digit[i] < f->k) break; f->digit[i] = 0; }
        if (i < 0) { f->state = 2; return 0; }
    }
    f->state = 1;
    Obj *m = obj(c, K_MAP, f->n, 2 * f->n);
    for (uint32_t i = 0; i < f->n; i++) { m->it[2 * i] = f->s[i]; m->it[2 * i + 1] = f->t[f->digit[i]]; }
    f->map = V_OF(m); return 1;
}

static V fn_set(Ctx *c, V s, V t) {  /* [S -> T]: every map, in the canonical order */
    if (!is(s, K_SET) || !is(t, K_SET)) fail(c);
    double count = 1; for (uint32_t i = 0; i < card(s); i++) count *= card(t);
    if (count > MAX_RANGE) fail(c);
    Obj *o = obj(c, K_SET, (uint32_t)count, (size_t)count);
    FnIter f; fn_iter_start(c, &f, s, t);
    for (size_t m = 0; fn_iter_next(c, &f); m++) o->it[m] = f.map;
    return set_fin(o);  /* no map at all (S non-empty, T empty) is the canonical empty set */
}

/* ---- built-ins ---- */
static V extreme(Ctx *c, const V *xs, size_t n, int want_max) {
    if (!n) fail(c);
    uint32_t k = KIND(xs[0]); if (k != K_INT && k != K_STR) fail(c);
    V best = xs[0];
    for (size_t i = 1; i < n; i++) { if (KIND(xs[i]) != k) fail(c); int r = cmp(xs[i], best); if (want_max ? r > 0 : r < 0) best = xs[i]; }
    return best;
}
static V minmax(Ctx *c, int want_max, int nargs, V *args) {
    if (nargs == 1) {
        V x = args[0], buf[SB_MAX + 1]; uint32_t n;
        if (!is(x, K_SET) && !is(x, K_SEQ)) fail(c);
        const V *xs = elems(x, buf, &n); return extreme(c, xs, n, want_max);
    }
    return extreme(c, args, nargs, want_max);
}
static V b_sum(Ctx *c, V x) {
    if (!is(x, K_SET) && !is(x, K_SEQ)) fail(c);
    V buf[SB_MAX + 1]; uint32_t n; const V *xs = elems(x, buf, &n);
    int64_t r = 0; for (uint32_t i = 0; i < n; i++) { if (!IS_INT(xs[i]) || __builtin_add_overflow(r, IVAL(xs[i]), &r)) fail(c); }
    return mk_int(c, r);
}
static V b_len(Ctx *c, V x) {
    if (IS_SB(x)) return MK_INT(card(x));
    if (IS_INT(x)) fail(c);
    uint32_t k = OBJ(x)->kind;
    if (k == K_SET || k == K_SEQ || k == K_MAP) return MK_INT(LEN(x));
    if (k == K_STR) { const unsigned char *p = (const unsigned char *)OBJ(x)->it; int64_t n = 0; for (uint32_t i = 0; i < LEN(x); i++) n += (p[i] & 0xC0) != 0x80; return MK_INT(n); }
    fail(c);
}
static V b_abs(Ctx *c, V x) { int64_t i = ival(c, x); return mk_int(c, i < 0 ? -i : i); }  /* abs(-2^62) is past 63 bits */
static V b_domain(Ctx *c, V x) {
    if (is(x, K_MAP)) { Obj *o = obj(c, K_SET, LEN(x), LEN(x)); for (uint32_t i = 0; i < LEN(x); i++) o->it[i] = IT(x, 2 * i); return set_fin(o); }
    if (is(x, K_SEQ)) return range(c, MK_INT(0), MK_INT((int64_t)LEN(x) - 1));
    fail(c);
}
static V b_values(Ctx *c, V x) {
    if (is(x, K_MAP)) { V *t = arena(c, (LEN(x) + 1) * sizeof(V)); for (uint32_t i = 0; i < LEN(x); i++) t[i] = IT(x, 2 * i + 1); return set_of(c, t, LEN(x)); }
    if (is(x, K_SEQ)) { V *t = arena(c, (LEN(x) + 1) * sizeof(V)); memcpy(t, OBJ(x)->it, LEN(x) * sizeof(V)); return set_of(c, t, LEN(x)); }
    fail(c);
}
static V b_append(Ctx *c, V s, V x) {
    if (!is(s, K_SEQ)) fail(c);
    Obj *o = obj(c, K_SEQ, LEN(s) + 1, LEN(s) + 1); memcpy(o->it, OBJ(s)->it, LEN(s) * sizeof(V)); o->it[LEN(s)] = x; return V_OF(o);
}
static V b_head(Ctx *c, V s) { if (!is(s, K_SEQ) || !LEN(s)) fail(c); return IT(s, 0); }
static V b_tail(Ctx *c, V s) { if (!is(s, K_SEQ) || !LEN(s)) fail(c); return seq_of(c, OBJ(s)->it + 1, LEN(s) - 1); }
static V b_sorted(Ctx *c, V s) { if (!is(s, K_SET)) fail(c); V buf[SB_MAX + 1]; uint32_t n; const V *xs = elems(s, buf, &n); return seq_of(c, xs, n); }
static V b_to_set(Ctx *c, V s) {
    if (!is(s, K_SEQ)) fail(c);
    V *t = arena(c, (LEN(s) + 1) * sizeof(V)); memcpy(t, OBJ(s)->it, LEN(s) * sizeof(V)); return set_of(c, t, LEN(s));
}
static V b_union(Ctx *c, V s) {
    if (!is(s, K_SET)) fail(c);
    V r = SB_EMPTY, buf[SB_MAX + 1]; uint32_t n; const V *xs = elems(s, buf, &n);
    for (uint32_t i = 0; i < n; i++) { if (!is(xs[i], K_SET)) fail(c); }
    for (uint32_t i = 0; i < n; i++) r = set_union(c, r, xs[i]);
    return r;
}
static V b_subsets(Ctx *c, V s) {
    if (!is(s, K_SET) || card(s) > 20) fail(c);
    V buf[SB_MAX + 1]; uint32_t n; const V *xs = elems(s, buf, &n);
    size_t total = (size_t)1 << n; V *t = arena(c, total * sizeof(V));
    for (size_t m = 0; m < total; m++) {
        Obj *o = obj(c, K_SET, 0, n); uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) if (m >> i & 1) o->it[k++] = xs[i];
        o->len = k; t[m] = set_fin(o);
    }
    return set_of(c, t, total);
}
static V slice(Ctx *c, V s, V lo, V hi, int has_lo, int has_hi) {
    if (!is(s, K_SEQ)) fail(c);
    int64_t a = has_lo ? ival(c, lo) : 0, b = has_hi ? ival(c, hi) : LEN(s);
    if (!(0 <= a && a <= b && b <= LEN(s))) fail(c);
    return seq_of(c, OBJ(s)->it + a, (size_t)(b - a));
}
static V put(Ctx *c, V m, V k, V v) {  /* m | {k: v} */
    if (!is(m, K_MAP)) fail(c);
    long i = find_key(m, k);
    if (i >= 0) { Obj *o = obj(c, K_MAP, LEN(m), 2 * LEN(m)); memcpy(o->it, OBJ(m)->it, 2 * LEN(m) * sizeof(V)); o->it[2 * i + 1] = v; return V_OF(o); }
    V pair[2] = {k, v}; Obj *one = obj(c, K_MAP, 1, 2); one->it[0] = k; one->it[1] = v; (void)pair;
    return map_union(c, m, V_OF(one));
}

/* the spec's strings (its literals and constants), so that a string read from a state is the
   same object as the literal it equals: then two strings are equal only if they are one object */
#define NSTR 1024
static V STR_TABLE[NSTR];
static uint64_t str_hash(const char *b, size_t n) { uint64_t h = 1469598103934665603ull; for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)b[i]) * 1099511628211ull; return h; }
static V str_lookup(const char *b, size_t n) {
    for (uint64_t j = str_hash(b, n) & (NSTR - 1), k = 0; k < NSTR; j = (j + 1) & (NSTR - 1), k++) {
        V v = STR_TABLE[j]; if (!v) return 0;
        if (LEN(v) == n && !memcmp(OBJ(v)->it, b, n)) return v;
    }
    return 0;
}
static void str_intern_all(Ctx *c, V v) {  /* every string inside a constant joins the table */
    if (!IS_OBJ(v)) return;
    Obj *o = OBJ(v);
    if (o->kind == K_STR) {
        if (o->interned || str_lookup((const char *)o->it, o->len)) return;
        for (uint64_t j = str_hash((const char *)o->it, o->len) & (NSTR - 1), k = 0; k < NSTR / 2; j = (j + 1) & (NSTR - 1), k++)
            if (!STR_TABLE[j]) { o->interned = (uint16_t)(j + 1); STR_TABLE[j] = v; return; }
        return;
    }
    if (o->kind == K_SEQ || o->kind == K_SET) for (uint32_t i = 0; i < o->len; i++) str_intern_all(c, o->it[i]);
    if (o->kind == K_MAP) for (uint32_t i = 0; i < 2 * o->len; i++) str_intern_all(c, o->it[i]);
}
/* ---- decoding the values Python hands over (codegen.encode): the constants, the initial states ---- */
static inline uint64_t get_u(const unsigned char **p) { uint64_t x = 0; int s = 0; while (**p & 0x80) { x |= (uint64_t)(**p & 0x7F) << s; s += 7; (*p)++; } x |= (uint64_t)**p << s; (*p)++; return x; }
static V decode(Ctx *c, const unsigned char **p) {
    unsigned char t = *(*p)++;
    switch (t) {
    case 0: return VFALSE;
    case 1: return VTRUE;
    case 2: { uint64_t z = get_u(p); return MK_INT((int64_t)(z >> 1) ^ -(int64_t)(z & 1)); }
    case 3: { uint64_t n = get_u(p); V s = str_lookup((const char *)*p, n); if (!s) s = str_of(c, (const char *)*p, n); *p += n; return s; }
    case 4: case 5: { uint64_t n = get_u(p); Obj *o = obj(c, t == 4 ? K_SEQ : K_SET, (uint32_t)n, n); for (uint64_t i = 0; i < n; i++) o->it[i] = decode(c, p); return t == 5 ? set_fin(o) : V_OF(o); }
    case 6: { uint64_t n = get_u(p); Obj *o = obj(c, K_MAP, (uint32_t)n, 2 * n); for (uint64_t i = 0; i < 2 * n; i++) o->it[i] = decode(c, p); return V_OF(o); }
    case 7: return *(*p)++ ? VINT : VNAT;
    case 8: return VFAIL;
    }
    abort();
}
/* ---- encoding a value as decode reads it (the operator tests read C's results back, value for
   value: tests/operators.py): sets in C's order, maps in C's key order, so an order that is not
   the Python runtime's shows as different bytes; a set not in its canonical layout is the byte 9 ---- */
typedef struct { unsigned char *p; size_t n, cap; } Out;  /* n may pass cap: then nothing more is written */
static inline void out_byte(Out *o, unsigned char b) { if (o->n < o->cap) o->p[o->n] = b; o->n++; }
static void out_u(Out *o, uint64_t x) { while (x >= 0x80) { out_byte(o, (unsigned char)(x | 0x80)); x >>= 7; } out_byte(o, (unsigned char)x); }
static void encode_value(Out *o, V v) {
    if (IS_INT(v)) { int64_t i = IVAL(v); out_byte(o, 2); out_u(o, ((uint64_t)i << 1) ^ (uint64_t)(i >> 63)); return; }
    if (IS_SB(v)) { V buf[SB_MAX + 1]; uint32_t n = sb_unpack(v, buf); out_byte(o, 5); out_u(o, n); for (uint32_t i = 0; i < n; i++) encode_value(o, buf[i]); return; }
    Obj *x = OBJ(v);
    switch (x->kind) {
    case K_BOOL: out_byte(o, x->len != 0); return;
    case K_STR: out_byte(o, 3); out_u(o, x->len); for (uint32_t i = 0; i < x->len; i++) out_byte(o, ((unsigned char *)x->it)[i]); return;
    case K_SET:  /* a set that should be one word is not canonical: equal sets would differ (eq compares words) */
        if (!x->len || (SB_SMALL(x->it[0]) && SB_SMALL(x->it[x->len - 1]))) { out_byte(o, 9); return; }
        /* fall through */
    case K_SEQ: out_byte(o, x->kind == K_SEQ ? 4 : 5); out_u(o, x->len); for (uint32_t i = 0; i < x->len; i++) encode_value(o, x->it[i]); return;
    case K_MAP: out_byte(o, 6); out_u(o, x->len); for (uint32_t i = 0; i < 2 * x->len; i++) encode_value(o, x->it[i]); return;
    case K_INF: out_byte(o, 7); out_byte(o, (unsigned char)x->len); return;
    }
    out_byte(o, 9);  /* no value of the language: the reader calls it a disagreement */
}
/* ---- frozen values: the states' values, hash-consed (LTSmin's chunk tables, SPIN's packed vector)

   A state is NV words, one per variable: an integer inline, or a pointer to a frozen value. A
   frozen value is immutable and lives until the search ends; it carries the hash of its content,
   and each searcher keeps one copy of each value it froze (its Store), so a successor shares
   every value it did not change with its parent and costs one lookup per value it did. Nothing
   is encoded or decoded: a parent is read in place, a state's fingerprint mixes its values'
   hashes. The hash depends on the content only (not on which searcher froze what first), so the
   fingerprints, and every result, are the same for any number of threads. */
static inline uint64_t mix(uint64_t x) {  /* MurmurHash3's finalizer */
    x ^= x >> 33; x *= 0xFF51AFD7ED558CCDull; x ^= x >> 33; x *= 0xC4CEB9FE1A85EC53ull; x ^= x >> 33; return x;
}
static inline uint64_t mix2(uint64_t x) {  /* another finalizer (Stafford's mix 13, SplitMix64's) for the second hash */
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27; x *= 0x94D049BB133111EBull; x ^= x >> 31; return x;
}
/* A value's two 64-bit content hashes, computed by two chains with their own constants and
   finalizers from the children's two hashes: the state fingerprint's two halves (docs/engine.md,
   "Fingerprints"), so two distinct values share a fingerprint term only if both hashes agree. */
typedef struct { uint64_t a, b; } H;
static H hv(V v);
static H hash_of(Obj *o) {  /* the content hashes of a value whose children are frozen or not */
    uint64_t head = ((uint64_t)o->kind << 40) ^ o->len;
    H h = {mix(head ^ 0x6A09E667F3BCC909ull), mix2(head ^ 0xBB67AE8584CAA73Bull)};
    if (o->kind == K_STR) {
        const unsigned char *b = (const unsigned char *)o->it;
        for (uint32_t i = 0; i < o->len; i++) { h.a = (h.a ^ b[i]) * 0x100000001B3ull; h.b = (h.b + b[i]) * 0xD1B54A32D192ED03ull; }
    } else {
        uint32_t n = o->kind == K_MAP ? 2 * o->len : (o->kind == K_SEQ || o->kind == K_SET) ? o->len : 0;
        for (uint32_t i = 0; i < n; i++) {
            H c = hv(o->it[i]);
            h.a = (h.a ^ c.a) * 0x9E3779B97F4A7C15ull + (h.a >> 29);
            h.b = (h.b + c.b) * 0xD6E8FEB86659FD93ull ^ (h.b >> 32);
        }
    }
    h.a = mix(h.a); h.b = mix2(h.b);
    if (!h.a) h.a = 1;  /* 0 marks a value not frozen */
    return h;
}
static inline H hv(V v) {
    if (IS_INT(v)) { H h = {mix(v * 0xD6E8FEB86659FD93ull), mix2(v * 0xE7037ED1A0B428DBull ^ 0x8EBC6AF09C88C6E3ull)}; return h; }
    if (IS_SB(v)) { H h = {mix(v * 0xA0761D6478BD642Full ^ 0xE7037ED1A0B428DBull), mix2(v * 0x9E3779B97F4A7C15ull ^ 0x589965CC75374CC3ull)}; return h; }
    Obj *o = OBJ(v);
    if (o->hash) { H h = {o->hash, o->hash2}; return h; }
    return hash_of(o);
}

typedef struct Store {
    Block *first;
    char *top, *end;
    uint64_t *hs; Obj **ps; size_t mask, used;  /* open addressing: hash, value */
    size_t bytes;
} Store;
static Store *store_new(void) {
    Store *st = calloc(1, sizeof(Store));
    st->mask = 1023; st->hs = calloc(st->mask + 1, 8); st->ps = calloc(st->mask + 1, sizeof(Obj *));
    if (!st->hs || !st->ps) abort();
    return st;
}
static void store_free(Store *st) {
    if (!st) return;
    Block *b = st->first; while (b) { Block *n = b->next; free(b); b = n; }
    free(st->hs); free(st->ps); free(st);
}
static Obj *store_alloc(Store *st, size_t n) {
    n = (n + 7) & ~(size_t)7;
    if ((size_t)(st->end - st->top) < n) {
        size_t size = n > (1u << 20) ? n : (1u << 20);
        Block *b = malloc(sizeof(Block) + size); if (!b) abort();
        b->size = size; b->next = st->first; st->first = b; st->top = b->data; st->end = b->data + size;
        st->bytes += size;
    }
    void *p = st->top; st->top += n; return p;
}
static void store_grow(Store *st) {
    size_t size = 2 * (st->mask + 1);
    uint64_t *hs = calloc(size, 8); Obj **ps = calloc(size, sizeof(Obj *)); if (!hs || !ps) abort();
    for (size_t i = 0; i <= st->mask; i++) if (st->ps[i]) {
        size_t j = st->hs[i] & (size - 1); while (ps[j]) j = (j + 1) & (size - 1);
        hs[j] = st->hs[i]; ps[j] = st->ps[i];
    }
    free(st->hs); free(st->ps); st->hs = hs; st->ps = ps; st->mask = size - 1;
}
static size_t obj_size(const Obj *o) {
    size_t words = o->kind == K_STR ? (o->len + 7) / 8 : o->kind == K_MAP ? 2 * (size_t)o->len
                 : (o->kind == K_SEQ || o->kind == K_SET) ? o->len : 0;
    return sizeof(Obj) + words * sizeof(V);
}
/* v as a frozen value: its children frozen first, then this searcher's copy of it (made now if
   it has none). An arena value's children are replaced by their frozen copies in place (equal
   values, so whatever else points at them is unchanged). */
static V freeze(Store *st, V v) {
    if (!IS_OBJ(v) || OBJ(v)->hash) return v;
    Obj *o = OBJ(v);
    if (o->kind != K_STR) {
        uint32_t n = o->kind == K_MAP ? 2 * o->len : o->len;
        for (uint32_t i = 0; i < n; i++) o->it[i] = freeze(st, o->it[i]);
    }
    H hh = hash_of(o);
    uint64_t h = hh.a;
    size_t size = obj_size(o);
    size_t j = h & st->mask;
    for (; st->ps[j]; j = (j + 1) & st->mask)
        if (st->hs[j] == h) {
            Obj *x = st->ps[j];
            if (x->kind == o->kind && x->len == o->len && !memcmp(x->it, o->it, o->kind == K_STR ? o->len : size - sizeof(Obj)))
                return V_OF(x);
        }
    Obj *x = store_alloc(st, size);
    memcpy(x, o, size); x->hash = h; x->hash2 = hh.b;
    if (o->kind == K_STR && !x->interned) { V same = str_lookup((const char *)x->it, x->len); if (same) x->interned = OBJ(same)->interned; }
    st->hs[j] = h; st->ps[j] = x; st->used++;
    if (2 * st->used > st->mask + 1) store_grow(st);
    return V_OF(x);
}
#define VAR(i) (c->s[i])

static void emit(Ctx *c, int act, const V *n);  /* search.c: record a successor */

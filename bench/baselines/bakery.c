/* spec/examples/bakery.spec with N = $N, MAX_NAT = $MAX_NAT: Lamport's Bakery algorithm, one
 * transition per action and binding of its parameters, as the spec and TLC count them. Process
 * ids are 0-based here (the spec's 1..N), which keeps `prec`'s order. Packed state, per process:
 * num and max_seen in $WN bits, flag in 1, pc in 4, unchecked as an N-bit set, nxt in $WP bits.
 * Written by bench/baselines.py: edit the template, not a copy. */
#include <stdint.h>

#define N $N
#define MAX_NAT $MAX_NAT
#define WN $WN                     /* bits of a number in 0..MAX_NAT */
#define WP $WP                     /* bits of a process id in 0..N-1 */
#define STATE_BITS (N * (2 * WN + 1 + 4 + N + WP))
#define ALL ((1u << N) - 1)        /* the set of every process */

enum { NCS, E1, E2, E3, E4, W1, W2, CS, EXIT };

typedef struct { unsigned num[N], flag[N], pc[N], unchecked[N], max_seen[N], nxt[N]; } vars_t;

static inline void emit(uint64_t t);  /* bfs.c */

static uint64_t pack(const vars_t *v) {
    uint64_t s = 0;
    int at = 0;
#define PUT(x, w) (s |= (uint64_t)(x) << at, at += (w))
    for (int i = 0; i < N; i++) {
        PUT(v->num[i], WN); PUT(v->flag[i], 1); PUT(v->pc[i], 4);
        PUT(v->unchecked[i], N); PUT(v->max_seen[i], WN); PUT(v->nxt[i], WP);
    }
#undef PUT
    return s;
}

static unsigned take(uint64_t *s, int w) {
    unsigned x = (unsigned)(*s & ((1u << w) - 1));
    *s >>= w;
    return x;
}

static void unpack(uint64_t s, vars_t *v) {
    for (int i = 0; i < N; i++) {
        v->num[i] = take(&s, WN); v->flag[i] = take(&s, 1); v->pc[i] = take(&s, 4);
        v->unchecked[i] = take(&s, N); v->max_seen[i] = take(&s, WN); v->nxt[i] = take(&s, WP);
    }
}

static void initial(void) {
    vars_t v;
    for (int i = 0; i < N; i++) {
        v.num[i] = 0; v.flag[i] = 0; v.pc[i] = NCS; v.unchecked[i] = 0; v.max_seen[i] = 0;
        v.nxt[i] = 0;  /* the spec's process 1 */
    }
    emit(pack(&v));
}

/* (num[a], a) before (num[b], b) in the lexicographic order */
static int prec(const vars_t *v, int a, int b) {
    return v->num[a] < v->num[b] || (v->num[a] == v->num[b] && a < b);
}

/* the spec's actions in its order, for each process `p` and each binding of a second parameter */
static void successors(uint64_t s) {
    vars_t v;
    unpack(s, &v);
    for (int p = 0; p < N; p++) {
        vars_t t = v;
        switch (v.pc[p]) {
        case NCS:
            t.pc[p] = E1; emit(pack(&t));
            break;
        case E1:
            t.flag[p] = !v.flag[p]; emit(pack(&t));                           /* e1_flip */
            t = v; t.flag[p] = 1; t.unchecked[p] = ALL & ~(1u << p);          /* e1_enter */
            t.max_seen[p] = 0; t.pc[p] = E2; emit(pack(&t));
            break;
        case E2:
            for (int i = 0; i < N; i++)                                       /* e2_read */
                if (v.unchecked[p] >> i & 1) {
                    t = v; t.unchecked[p] &= ~(1u << i);
                    if (v.num[i] > v.max_seen[p]) t.max_seen[p] = v.num[i];
                    emit(pack(&t));
                }
            if (v.unchecked[p] == 0) { t = v; t.pc[p] = E3; emit(pack(&t)); }  /* e2_done */
            break;
        case E3:
            for (unsigned k = 0; k <= MAX_NAT; k++) { t = v; t.num[p] = k; emit(pack(&t)); }  /* e3_flicker */
            for (unsigned i = v.max_seen[p] + 1; i <= MAX_NAT; i++) {        /* e3_choose */
                t = v; t.num[p] = i; t.pc[p] = E4; emit(pack(&t));
            }
            break;
        case E4:
            t.flag[p] = !v.flag[p]; emit(pack(&t));                           /* e4_flip */
            t = v; t.flag[p] = 0; t.unchecked[p] = ALL & ~(1u << p); t.pc[p] = W1;  /* e4_done */
            emit(pack(&t));
            break;
        case W1:
            for (int i = 0; i < N; i++)                                       /* w1_pick */
                if ((v.unchecked[p] >> i & 1) && !v.flag[i]) { t = v; t.nxt[p] = i; t.pc[p] = W2; emit(pack(&t)); }
            if (v.unchecked[p] == 0) { t = v; t.pc[p] = CS; emit(pack(&t)); }  /* w1_done */
            break;
        case W2: {
            int n = v.nxt[p];
            if (v.num[n] == 0 || prec(&v, p, n)) {
                t.unchecked[p] &= ~(1u << n); t.pc[p] = W1; emit(pack(&t));
            }
            break;
        }
        case CS:
            t.pc[p] = EXIT; emit(pack(&t));
            break;
        case EXIT:
            for (unsigned k = 0; k <= MAX_NAT; k++) { t = v; t.num[p] = k; emit(pack(&t)); }  /* exit_flicker */
            t = v; t.num[p] = 0; t.pc[p] = NCS; emit(pack(&t));               /* exit_done */
            break;
        }
    }
}

#define IN(set, i) ((set) >> (i) & 1)
#define PC_IN(v, i, pcs) ((pcs) >> (v)->pc[i] & 1)  /* pc[i] in the set pcs of B(...) bits */
#define B(x) (1u << (x))

/* the spec's `before(i, j)` */
static int before(const vars_t *v, int i, int j) {
    return v->num[i] > 0 && (
        PC_IN(v, j, B(NCS) | B(E1) | B(EXIT))
        || (v->pc[j] == E2 && (IN(v->unchecked[j], i) || v->max_seen[j] >= v->num[i]))
        || (v->pc[j] == E3 && v->max_seen[j] >= v->num[i])
        || (PC_IN(v, j, B(E4) | B(W1) | B(W2)) && prec(v, i, j)
            && (!PC_IN(v, j, B(W1) | B(W2)) || IN(v->unchecked[j], i))));
}

/* mutual_exclusion, type_ok and inv, as the spec states them */
static const char *violated(uint64_t s) {
    vars_t v;
    unpack(s, &v);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            if (i != j && v.pc[i] == CS && v.pc[j] == CS) return "mutual_exclusion";
    for (int i = 0; i < N; i++)
        if (v.num[i] > MAX_NAT || v.max_seen[i] > MAX_NAT || v.nxt[i] >= N || v.pc[i] > EXIT
            || (v.unchecked[i] & ~ALL)) return "type_ok";
    for (int i = 0; i < N; i++) {
        int w = PC_IN(&v, i, B(W1) | B(W2)), n = v.nxt[i];
        if (PC_IN(&v, i, B(E4) | B(W1) | B(W2) | B(CS)) && v.num[i] == 0) return "inv";
        if (PC_IN(&v, i, B(E2) | B(E3)) && !v.flag[i]) return "inv";
        if (v.pc[i] == W2 && n == i) return "inv";
        if (w && IN(v.unchecked[i], i)) return "inv";
        for (int j = 0; j < N; j++)
            if (w && j != i && !IN(v.unchecked[i], j) && !before(&v, i, j)) return "inv";
        if (v.pc[i] == W2 && ((v.pc[n] == E2 && !IN(v.unchecked[n], i)) || v.pc[n] == E3)
            && !(v.max_seen[n] >= v.num[i])) return "inv";
        for (int j = 0; j < N; j++)
            if (v.pc[i] == CS && j != i && !before(&v, i, j)) return "inv";
    }
    return 0;
}

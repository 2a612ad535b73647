/* bench/counters.spec with N = $N: three bounded counters and a toggle. Packed state: a, b and c
 * in $W bits each, then the flag. Written by bench/baselines.py: edit the template, not a copy. */
#include <stdint.h>

#define N $N
#define W $W                       /* bits of one counter: N fits */
#define STATE_BITS (3 * W + 1)
#define FIELD(s, i) (((s) >> ((i) * W)) & ((1u << W) - 1))

static inline void emit(uint64_t t);  /* bfs.c */

static uint64_t pack(uint64_t a, uint64_t b, uint64_t c, uint64_t flag) {
    return a | b << W | c << 2 * W | flag << 3 * W;
}

static void initial(void) { emit(pack(0, 0, 0, 0)); }

/* the spec's actions in its order, each as its `require` and its update */
static void successors(uint64_t s) {
    uint64_t a = FIELD(s, 0), b = FIELD(s, 1), c = FIELD(s, 2), flag = s >> 3 * W;
    if (a < N) emit(pack(a + 1, b, c, flag));            /* inc_a */
    if (b < N) emit(pack(a, b + 1, c, flag));            /* inc_b */
    if (c < N && flag) emit(pack(a, b, c + 1, flag));    /* inc_c */
    emit(pack(a, b, c, !flag));                          /* toggle */
    if (a == N) emit(pack(0, b, c, flag));               /* reset_a */
}

static const char *violated(uint64_t s) {
    if (!(FIELD(s, 0) <= N && FIELD(s, 1) <= N && FIELD(s, 2) <= N)) return "bounded";
    return 0;
}

/* A hand-written breadth-first search: the baseline the explorer's native engine is measured
 * against (bench/README.md). bench/baselines.py writes one C file per model and size: the model's
 * part (its packed state, initial states, successors and invariants, from MODEL.c with the
 * constants filled in) first, then this driver.
 *
 * A state is one uint64_t (the model packs its variables into at most 63 bits); the visited set
 * is an open-addressing table of them (linear probing, bit 63 marks a used slot, doubled at half
 * full); the FIFO queue is the array of distinct states in the order they were found, so a level
 * ends where the next one's first state was appended. The counts are TLC's and the explorer's:
 * distinct states; generated = the initial states plus every successor computed, duplicates
 * included; depth = the number of levels, the initial states' being 1. Invariants are checked on
 * each new state, and a state with no successor is a deadlock, as both tools check by default.
 *
 * The model provides: `static void initial(void)`, `static void successors(uint64_t s)` (both
 * call `emit(t)` once per state computed), `static const char *violated(uint64_t s)` (the name of
 * an invariant `s` breaks, or NULL) and `STATE_BITS`. Output: one JSON line on stdout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USED ((uint64_t)1 << 63)
_Static_assert(STATE_BITS <= 63, "the packed state must leave bit 63 free");

static uint64_t *table;        /* slots: 0 when empty, else the state with USED set */
static uint64_t mask;          /* slots - 1 (a power of two) */
static uint64_t *queue;        /* every distinct state, in the order found */
static uint64_t found, queue_cap;
static uint64_t generated;
static uint64_t emitted;       /* successors of the state being expanded (0: a deadlock) */
static const char *verdict = "holds", *property = "";

static void *xalloc(uint64_t bytes) {
    void *p = calloc(1, bytes);
    if (!p) { fprintf(stderr, "out of memory (%llu bytes)\n", (unsigned long long)bytes); exit(2); }
    return p;
}

static inline uint64_t mix(uint64_t x) {  /* splitmix64's finaliser: every bit of x moves the slot */
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void grow(void) {
    uint64_t old_mask = mask, *old = table;
    mask = mask * 2 + 1;
    table = xalloc((mask + 1) * sizeof *table);
    for (uint64_t i = 0; i <= old_mask; i++)
        if (old[i]) {
            uint64_t j = mix(old[i]) & mask;
            while (table[j]) j = (j + 1) & mask;
            table[j] = old[i];
        }
    free(old);
}

/* `t` seen for the first time: into the table and the queue; true when new */
static inline int insert(uint64_t t) {
    uint64_t key = t | USED, i = mix(key) & mask;
    while (table[i]) {
        if (table[i] == key) return 0;
        i = (i + 1) & mask;
    }
    table[i] = key;
    if (found == queue_cap) {
        queue_cap *= 2;
        queue = realloc(queue, queue_cap * sizeof *queue);
        if (!queue) { fprintf(stderr, "out of memory (queue)\n"); exit(2); }
    }
    queue[found++] = t;
    if (2 * found > mask) grow();
    return 1;
}

static inline void emit(uint64_t t) {
    generated++;
    emitted++;
    if (insert(t) && *property == '\0') {
        const char *bad = violated(t);
        if (bad) { verdict = "violated"; property = bad; }
    }
}

int main(void) {
    mask = (1 << 16) - 1;
    table = xalloc((mask + 1) * sizeof *table);
    queue_cap = 1 << 16;
    queue = xalloc(queue_cap * sizeof *queue);
    initial();
    uint64_t head = 0, level_end = found, depth = found ? 1 : 0;
    while (head < found && *property == '\0') {
        if (head == level_end) { level_end = found; depth++; }
        emitted = 0;
        successors(queue[head++]);
        if (emitted == 0) { verdict = "deadlock"; property = "deadlock"; }
    }
    printf("{\"distinct\": %llu, \"generated\": %llu, \"depth\": %llu, \"verdict\": \"%s\", \"property\": \"%s\"}\n",
           (unsigned long long)found, (unsigned long long)generated, (unsigned long long)depth, verdict, property);
    return *property ? 1 : 0;
}

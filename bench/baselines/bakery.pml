/* spec/examples/bakery.spec with N = $N, MAX_NAT = $MAX_NAT, for SPIN's breadth-first verifier:
 * one process whose loop has one d_step per action and binding of its parameters (the list at
 * the end, written for these constants), so that one step of the spec is one transition and SPIN
 * stores exactly the spec's states. Process ids are 0-based (the spec's 1..N), which keeps
 * `prec`'s order. Written by bench/baselines.py: edit the template, not a copy. */
#define N $N
#define MAX_NAT $MAX_NAT
#define ALL $ALL                                   /* the set of every process, as bits */
#define NCS 0
#define E1 1
#define E2 2
#define E3 3
#define E4 4
#define W1 5
#define W2 6
#define CS 7
#define EXIT 8

byte num[N];
bool flag[N];
byte pc[N];                                        /* every process at NCS */
byte unchecked[N];                                 /* a set of processes, as bits */
byte max_seen[N];
byte nxt[N];                                       /* every process's is the spec's process 1 */

#define IN(set, i) ((set) >> (i) & 1)
#define PREC(a, b) (num[a] < num[b] || (num[a] == num[b] && a < b))
#define BEFORE(i, j) (num[i] > 0 && (pc[j] == NCS || pc[j] == E1 || pc[j] == EXIT \
    || (pc[j] == E2 && (IN(unchecked[j], i) || max_seen[j] >= num[i])) \
    || (pc[j] == E3 && max_seen[j] >= num[i]) \
    || ((pc[j] == E4 || pc[j] == W1 || pc[j] == W2) && PREC(i, j) \
        && (!(pc[j] == W1 || pc[j] == W2) || IN(unchecked[j], i)))))

/* mutual_exclusion, type_ok and inv: the parts on one process i, and on a pair i != j */
#define ONE(i) (num[i] <= MAX_NAT && max_seen[i] <= MAX_NAT && nxt[i] < N && pc[i] <= EXIT \
    && (unchecked[i] & ~ALL) == 0 \
    && (!(pc[i] == E4 || pc[i] == W1 || pc[i] == W2 || pc[i] == CS) || num[i] != 0) \
    && (!(pc[i] == E2 || pc[i] == E3) || flag[i]) \
    && (pc[i] != W2 || nxt[i] != i) \
    && (!(pc[i] == W1 || pc[i] == W2) || !IN(unchecked[i], i)) \
    && (!(pc[i] == W2 && ((pc[nxt[i]] == E2 && !IN(unchecked[nxt[i]], i)) || pc[nxt[i]] == E3)) \
        || max_seen[nxt[i]] >= num[i]))
#define PAIR(i, j) (!(pc[i] == CS && pc[j] == CS) \
    && (!(pc[i] == W1 || pc[i] == W2) || IN(unchecked[i], j) || BEFORE(i, j)) \
    && (pc[i] != CS || BEFORE(i, j)))

/* checked in every state a step reaches */
inline check() { assert($INVARIANT) }

/* the actions, as the spec writes them, for process p (and a second parameter i or k) */
#define NCS_STEP(p) :: d_step { pc[p] == NCS -> pc[p] = E1; check() }
#define E1_FLIP(p) :: d_step { pc[p] == E1 -> flag[p] = !flag[p]; check() }
#define E1_ENTER(p) :: d_step { pc[p] == E1 -> flag[p] = true; unchecked[p] = ALL & ~(1 << p); \
    max_seen[p] = 0; pc[p] = E2; check() }
#define E2_READ(p, i) :: d_step { pc[p] == E2 && IN(unchecked[p], i) -> unchecked[p] = unchecked[p] & ~(1 << i); \
    if :: num[i] > max_seen[p] -> max_seen[p] = num[i] :: else -> skip fi; check() }
#define E2_DONE(p) :: d_step { pc[p] == E2 && unchecked[p] == 0 -> pc[p] = E3; check() }
#define E3_FLICKER(p, k) :: d_step { pc[p] == E3 -> num[p] = k; check() }
#define E3_CHOOSE(p, i) :: d_step { pc[p] == E3 && i > max_seen[p] -> num[p] = i; pc[p] = E4; check() }
#define E4_FLIP(p) :: d_step { pc[p] == E4 -> flag[p] = !flag[p]; check() }
#define E4_DONE(p) :: d_step { pc[p] == E4 -> flag[p] = false; unchecked[p] = ALL & ~(1 << p); pc[p] = W1; \
    check() }
#define W1_PICK(p, i) :: d_step { pc[p] == W1 && IN(unchecked[p], i) && !flag[i] -> nxt[p] = i; pc[p] = W2; \
    check() }
#define W1_DONE(p) :: d_step { pc[p] == W1 && unchecked[p] == 0 -> pc[p] = CS; check() }
#define W2_STEP(p) :: d_step { pc[p] == W2 && (num[nxt[p]] == 0 || PREC(p, nxt[p])) -> \
    unchecked[p] = unchecked[p] & ~(1 << nxt[p]); pc[p] = W1; check() }
#define CS_STEP(p) :: d_step { pc[p] == CS -> pc[p] = EXIT; check() }
#define EXIT_FLICKER(p, k) :: d_step { pc[p] == EXIT -> num[p] = k; check() }
#define EXIT_DONE(p) :: d_step { pc[p] == EXIT -> num[p] = 0; pc[p] = NCS; check() }

active proctype bakery() {
    do
$STEPS
    od
}

/* bench/counters.spec with N = $N, for SPIN's breadth-first verifier: one process whose loop has
 * one d_step per action, so that one step of the spec is one transition and SPIN stores exactly
 * the spec's states (the process never leaves the loop's head between steps).
 * Written by bench/baselines.py: edit the template, not a copy. */
#define N $N

$INT a, b, c;
bool flag;

/* the invariant `bounded`, checked in every state a step reaches */
inline check() { assert(a <= N && b <= N && c <= N) }

active proctype counters() {
    do
    :: d_step { a < N -> a++; check() }                /* inc_a */
    :: d_step { b < N -> b++; check() }                /* inc_b */
    :: d_step { c < N && flag -> c++; check() }        /* inc_c */
    :: d_step { flag = !flag; check() }                /* toggle */
    :: d_step { a == N -> a = 0; check() }             /* reset_a */
    od
}


/* ---- the breadth-first search (appended after the spec's generated code) ----

   Level by level. Each level's states are cut into chunks; N threads expand chunks (phase A:
   successors, their encodings and fingerprints, dropping those seen at earlier levels, and the
   constraint and invariants of the rest); then one thread walks the chunks in order (phase B),
   adding the new states to the fingerprint table and the next level. Phase B visits successors in
   exactly the order of a one-thread search (parents in order, each parent's successors in order),
   so the first occurrence of a state wins, and every verdict, count and trace is the same for
   every number of threads. */
typedef struct Run {
    int deadlock;
    uint64_t max_states;
    int64_t max_depth;
    volatile int stop;           /* set by Python: a limit, Ctrl-C or SIGTERM */
    volatile uint64_t distinct, generated, level, queue;  /* progress */
    uint64_t pruned, depth, bytes;
    int verdict;                 /* 0 holds, 1 violated, 2 deadlock, 3 incomplete, 4 evaluation error */
    int stopped;                 /* incomplete: 1 max-states, 2 max-depth, 3 stopped by Python */
    int prop;                    /* the violated invariant */
    int64_t index;               /* the state the verdict names */
    int uncounted;               /* that state failed a constraint: not among the states found */
    int threads;
    void *priv;
} Run;

#define CHUNK 256  /* parents a thread takes at once */
#define WINDOW 128
#define RECORDS 65536  /* trace records kept in memory before they go to the file */  /* chunks expanded before their new states are added */

typedef struct { Bytes data; size_t *off; size_t n, cap; } Level;

/* what phase A found for the parents of one chunk, in order */
typedef struct {
    size_t first, n;             /* parents: positions [first, first + n) of the level */
    Bytes data;                  /* the candidates' encodings */
    size_t ncand, cap;
    uint64_t *fp; uint32_t *start, *end, *parent, *ord; int16_t *act, *inv; uint8_t *pruned;
    uint32_t *cnt;               /* successors per parent and action: n * NA */
    uint8_t *dead;               /* per parent: no successor and no terminal condition holds */
    int error;                   /* an evaluation error (the Python engine will report it) */
    int stopped;                 /* Python asked to stop while this chunk was expanded */
} Chunk;

typedef struct Priv {
    Run *r;
    uint64_t *table; size_t mask, used;
    uint32_t (*buf)[2]; size_t nbuf; FILE *file; size_t n;  /* trace records (see record) */
    Level cur, next;
    Chunk *chunks; size_t nchunks, cap_chunks;
    volatile size_t next_chunk;  /* the next chunk to take (atomic) */
    Ctx *ctx;                    /* one per thread */
    int nthreads;
    pthread_barrier_t start, done;
    volatile int quit;
} Priv;

static void level_push(Level *l, const unsigned char *b, size_t n) {
    if (l->n + 1 >= l->cap) { l->cap = l->cap ? 2 * l->cap : 1024; l->off = realloc(l->off, l->cap * sizeof(size_t)); if (!l->off) abort(); if (l->n == 0) l->off[0] = 0; }
    grow(&l->data, n); memcpy(l->data.b + l->data.n, b, n); l->data.n += n; l->off[++l->n] = l->data.n;
}
static void level_clear(Level *l) { l->data.n = 0; l->n = 0; if (l->cap) l->off[0] = 0; }

/* the table's memory: zeroed pages, in huge pages where the kernel gives them (a lookup is a
   random access: with 4 KiB pages most of them also miss the TLB) */
static uint64_t *table_alloc(size_t slots) {
    size_t bytes = slots * 8;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) abort();
#ifdef MADV_HUGEPAGE
    if (bytes >= (2u << 20)) madvise(m, bytes, MADV_HUGEPAGE);
#endif
    return m;
}
static void table_free(uint64_t *t, size_t slots) { munmap(t, slots * 8); }

/* open addressing on 64-bit fingerprints (0 = empty), at most 3/4 full */
static void table_add(Priv *p, uint64_t fp) {
    if (4 * (p->used + 1) > 3 * (p->mask + 1)) {
        size_t size = 2 * (p->mask + 1); uint64_t *t = table_alloc(size);
        for (size_t i = 0; i <= p->mask; i++) if (p->table[i]) { size_t j = p->table[i] & (size - 1); while (t[j]) j = (j + 1) & (size - 1); t[j] = p->table[i]; }
        table_free(p->table, p->mask + 1); p->table = t; p->mask = size - 1;
    }
    if (!fp) return;
    size_t j = fp & p->mask;
    while (p->table[j]) { if (p->table[j] == fp) return; j = (j + 1) & p->mask; }
    p->table[j] = fp; p->used++;
}
/* adds fp unless it is there: whether it was new (one probe sequence for both) */
static int table_insert(Priv *p, uint64_t fp) {
    if (4 * (p->used + 1) > 3 * (p->mask + 1)) table_add(p, 0);  /* grows the table (0 is never added) */
    size_t j = fp & p->mask;
    while (p->table[j]) { if (p->table[j] == fp) return 0; j = (j + 1) & p->mask; }
    p->table[j] = fp; p->used++; return 1;
}
static inline int table_has(const Priv *p, uint64_t fp) {
    size_t j = fp & p->mask;
    while (p->table[j]) { if (p->table[j] == fp) return 1; j = (j + 1) & p->mask; }
    return 0;
}
/* each state's (parent, ordinal), in state order: appended to a temporary file a block at a
   time (TLC keeps its trace on disk too), read back only to rebuild a trace */
static void record(Priv *p, uint32_t parent, uint32_t ord) {
    if (p->nbuf == RECORDS) {
        if (!p->file && !(p->file = tmpfile())) abort();
        if (fwrite(p->buf, sizeof(uint32_t[2]), RECORDS, p->file) != RECORDS) abort();
        p->nbuf = 0;
    }
    p->buf[p->nbuf][0] = parent; p->buf[p->nbuf][1] = ord; p->nbuf++; p->n++;
}
static void record_at(Priv *p, uint64_t i, uint32_t out[2]) {
    uint64_t flushed = p->n - p->nbuf;
    if (i >= flushed) { out[0] = p->buf[i - flushed][0]; out[1] = p->buf[i - flushed][1]; return; }
    fflush(p->file);
    if (pread(fileno(p->file), out, 8, (off_t)(i * 8)) != 8) abort();
}
static void emit(Ctx *c, int act, const V *n) {
    if (*c->stop) longjmp(c->fail, 2);
    if (c->nsucc == c->cap_succ) {
        c->cap_succ = c->cap_succ ? 2 * c->cap_succ : 64;
        c->succ = realloc(c->succ, c->cap_succ * NV_ALLOC * sizeof(V)); c->succ_act = realloc(c->succ_act, c->cap_succ * sizeof(int));
        if (!c->succ || !c->succ_act) longjmp(c->fail, 2);
    }
    memcpy(c->succ + c->nsucc * NV_ALLOC, n, NV * sizeof(V)); c->succ_act[c->nsucc++] = act;
}

static void ctx_init(Ctx *c, volatile int *stop) {
    memset(c, 0, sizeof *c);
    c->first = malloc(sizeof(Block) + (1u << 20)); c->first->size = 1u << 20; c->first->next = NULL;
    c->cur = c->first; arena_reset(c);
    c->memo_gen = calloc(NMEMO + 1, 8); c->memo = calloc(NMEMO + 1, sizeof(V));
    c->stop = stop;
}
static void ctx_free(Ctx *c) {
    Block *b = c->first; while (b) { Block *n = b->next; free(b); b = n; }
    free(c->memo_gen); free(c->memo); free(c->succ); free(c->succ_act); free(c->fps); free(c->starts);
}
static inline void enter(Ctx *c, V *s) { c->s = s; c->gen++; c->depth = 0; }

static void cand_push(Chunk *k, uint64_t fp, size_t start, uint32_t parent, uint32_t ord, int act, int inv, int pruned) {
    if (k->ncand == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 1024;
        k->fp = realloc(k->fp, k->cap * 8); k->end = realloc(k->end, k->cap * 4); k->start = realloc(k->start, k->cap * 4); k->parent = realloc(k->parent, k->cap * 4);
        k->ord = realloc(k->ord, k->cap * 4); k->act = realloc(k->act, k->cap * 2); k->inv = realloc(k->inv, k->cap * 2);
        k->pruned = realloc(k->pruned, k->cap);
        if (!k->fp || !k->end || !k->start || !k->parent || !k->ord || !k->act || !k->inv || !k->pruned) abort();
    }
    size_t i = k->ncand++;
    k->fp[i] = fp; k->start[i] = (uint32_t)start; k->parent[i] = parent; k->ord[i] = ord; k->act[i] = (int16_t)act;
    k->inv[i] = (int16_t)inv; k->pruned[i] = (uint8_t)pruned;
}

/* phase A for one chunk: expand its parents */
static void expand_chunk(Priv *p, Ctx *c, Chunk *k) {
    Run *r = p->r;
    uint32_t voff[NV_ALLOC + 1];
    k->ncand = 0; k->data.n = 0; k->error = 0; k->stopped = 0;
    for (size_t q = 0; q < k->n; q++) {
        size_t pos = k->first + q;
        if (r->stop) { k->stopped = 1; return; }
        arena_reset(c);
        V *s = arena(c, NV_ALLOC * sizeof(V));
        const unsigned char *base = p->cur.data.b + p->cur.off[pos], *b = base;
        for (int i = 0; i < NV; i++) { voff[i] = (uint32_t)(b - base); s[i] = 0; skip(&b); }  /* decoded when read */
        voff[NV] = (uint32_t)(b - base);
        c->par = s; c->pbase = base; c->pvoff = voff;
        int code = setjmp(c->fail);
        if (code) { if (code == 2) k->stopped = 1; else k->error = 1; return; }
        enter(c, s); c->nsucc = 0;
        uint32_t *cnt = k->cnt + q * NA_ALLOC;
        for (int a = 0; a < NA; a++) { size_t before = c->nsucc; ACTIONS[a](c, s); cnt[a] = (uint32_t)(c->nsucc - before); }
        /* encode every successor and prefetch its slot in the table, then look them up */
        if (c->nsucc > c->cap_fp) {
            c->cap_fp = 2 * c->nsucc; c->fps = realloc(c->fps, c->cap_fp * 8); c->starts = realloc(c->starts, c->cap_fp * sizeof(size_t));
            if (!c->fps || !c->starts) abort();
        }
        for (size_t i = 0; i < c->nsucc; i++) {
            V *t = c->succ + i * NV_ALLOC;
            size_t start = k->data.n;
            /* the variables the action left as they were are copied from the parent's encoding, a
               run of them at a time, not encoded again */
            int from = 0;
            for (int v = 0; v <= NV; v++) {
                if (v < NV && (!t[v] || t[v] == s[v])) continue;
                if (from < v) { size_t n = voff[v] - voff[from]; grow(&k->data, n); memcpy(k->data.b + k->data.n, base + voff[from], n); k->data.n += n; }
                if (v < NV) encode_var(&k->data, t[v]);
                from = v + 1;
            }
            c->starts[i] = start;
            c->fps[i] = fingerprint(k->data.b + start, k->data.n - start);
            __builtin_prefetch(&p->table[c->fps[i] & p->mask]);
        }
        for (size_t i = 0; i < c->nsucc; i++) {
            if (table_has(p, c->fps[i])) continue;
            V *t = c->succ + i * NV_ALLOC;
            int pruned = 0;
            if (NC) { enter(c, t); pruned = !constraints_ok(c, t); }
            enter(c, t);
            int inv = invariant_first(c, t);
            cand_push(k, c->fps[i], c->starts[i], (uint32_t)q, (uint32_t)i, c->succ_act[i], inv, pruned);
            k->end[k->ncand - 1] = (uint32_t)(i + 1 < c->nsucc ? c->starts[i + 1] : k->data.n);
        }
        k->dead[q] = 0;
        if (c->nsucc == 0 && r->deadlock) { enter(c, s); k->dead[q] = !terminal_any(c, s); }
    }
}

static void phase_a(Priv *p, Ctx *c) {
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next_chunk, 1, __ATOMIC_RELAXED);
        if (i >= p->nchunks) return;
        expand_chunk(p, c, &p->chunks[i]);
    }
}

typedef struct { Priv *p; Ctx *c; } Worker;
static void *worker(void *arg) {
    Priv *p = ((Worker *)arg)->p; Ctx *c = ((Worker *)arg)->c;
    for (;;) {
        pthread_barrier_wait(&p->start);
        if (p->quit) return NULL;
        phase_a(p, c);
        pthread_barrier_wait(&p->done);
    }
}

static Ctx KCTX;  /* the constants' arena, rebuilt by each search */
static int consts_ready;
static volatile int NEVER;

int search(Run *r, const unsigned char *consts, size_t nconsts, const unsigned char *init, size_t ninit,
           uint64_t *gen_by, uint64_t *new_by) {
    if (!consts_ready) { ctx_init(&KCTX, &NEVER); consts_ready = 1; }
    arena_reset(&KCTX);
    free(KT); KT = malloc((nconsts + 1) * sizeof(V));
    memset(STR_TABLE, 0, sizeof STR_TABLE);
    for (size_t i = 0; i < nconsts; i++) { KT[i] = decode(&KCTX, &consts); str_intern_all(&KCTX, KT[i]); }
    Priv *p = calloc(1, sizeof(Priv)); r->priv = p; p->r = r;
    p->buf = malloc(RECORDS * sizeof *p->buf);
    p->mask = (1u << 16) - 1; p->table = table_alloc(p->mask + 1);
    p->nthreads = r->threads > 0 ? r->threads : 1;
    p->ctx = calloc(p->nthreads, sizeof(Ctx));
    for (int i = 0; i < p->nthreads; i++) ctx_init(&p->ctx[i], &r->stop);
    Ctx *c = &p->ctx[0];
    pthread_t *tids = calloc(p->nthreads, sizeof(pthread_t));
    Worker *args = calloc(p->nthreads, sizeof(Worker));
    pthread_barrier_init(&p->start, NULL, p->nthreads); pthread_barrier_init(&p->done, NULL, p->nthreads);
    for (int i = 1; i < p->nthreads; i++) {
        args[i].p = p; args[i].c = &p->ctx[i];
        if (pthread_create(&tids[i], NULL, worker, &args[i])) abort();
    }
    /* the initial states: found, deduplicated, constrained and checked by the Python engine */
    uint64_t generated = r->generated, head = 0, nstates = 0;
    r->verdict = 0; r->index = -1; r->uncounted = 0; r->level = 1;
    const unsigned char *q = init;
    Bytes canon = {0};  /* the C encoding (a spec string by its slot), as successors are encoded */
    for (size_t k = 0; k < ninit; k++) {
        arena_reset(c); canon.n = 0;
        for (int i = 0; i < NV; i++) encode_var(&canon, decode(c, &q));
        table_add(p, fingerprint(canon.b, canon.n)); record(p, UINT32_MAX, (uint32_t)k); level_push(&p->cur, canon.b, canon.n); nstates++;
    }
    free(canon.b);
    r->distinct = nstates; r->depth = 1;
    for (uint64_t level = 1; p->cur.n; level++) {
        if (level > 1) { r->level = level; if (r->max_depth && (int64_t)level > r->max_depth) { r->verdict = 3; r->stopped = 2; goto out; } }
        /* the level in windows of WINDOW chunks: phase A on every thread, then phase B (the
           candidates of one window at a time are in memory, not a whole level's) */
        size_t total = (p->cur.n + CHUNK - 1) / CHUNK;
        if (p->cap_chunks < WINDOW) {
            p->chunks = calloc(WINDOW, sizeof(Chunk));
            for (size_t i = 0; i < WINDOW; i++) { p->chunks[i].cnt = malloc(CHUNK * NA_ALLOC * 4); p->chunks[i].dead = malloc(CHUNK); }
            p->cap_chunks = WINDOW;
        }
        for (size_t w = 0; w < total; w += WINDOW) {
            p->nchunks = total - w < WINDOW ? total - w : WINDOW;
            for (size_t i = 0; i < p->nchunks; i++) {
                p->chunks[i].first = (w + i) * CHUNK;
                p->chunks[i].n = w + i + 1 < total ? CHUNK : p->cur.n - (w + i) * CHUNK;
            }
            p->next_chunk = 0;
            if (p->nthreads > 1) pthread_barrier_wait(&p->start);
            phase_a(p, c);
            if (p->nthreads > 1) pthread_barrier_wait(&p->done);
            /* phase B: the chunks in order, as a one-thread search visits them */
            for (size_t ci = 0; ci < p->nchunks; ci++) {
                Chunk *k = &p->chunks[ci];
                size_t j = 0;  /* the next candidate */
                for (size_t qq = 0; qq < k->n; qq++, head++) {
                    if (r->max_states && nstates >= r->max_states) { r->verdict = 3; r->stopped = 1; goto out; }
                    if (k->stopped || k->error) {  /* the chunk's expansion stopped at or before this parent */
                        r->verdict = k->error ? 4 : 3; if (!k->error) r->stopped = 3; goto out;
                    }
                    if ((head & 255) == 0) { r->distinct = nstates; r->queue = nstates - head; r->generated = generated; }
                    const uint32_t *cnt = k->cnt + qq * NA_ALLOC;
                    uint32_t first_of_act = 0;
                    for (int a = 0; a < NA; a++) {
                        gen_by[a] += cnt[a]; generated += cnt[a];
                        for (; j < k->ncand && k->parent[j] == qq && k->act[j] == a; j++) {
                            uint64_t fp = k->fp[j];
                            /* a pruned state is never added: it is pruned (and counted) each time it is reached */
                            if (k->pruned[j] ? table_has(p, fp) : !table_insert(p, fp)) continue;  /* an earlier parent reached it */
                            uint32_t after = first_of_act + cnt[a] - k->ord[j] - 1;  /* its action's successors after it */
                            if (k->pruned[j]) {
                                r->pruned++;
                                if (k->inv[j] >= 0) {
                                    record(p, (uint32_t)head, k->ord[j]); r->verdict = 1; r->prop = k->inv[j]; r->index = (int64_t)p->n - 1; r->uncounted = 1;
                                    r->queue = nstates - head - 1; gen_by[a] -= after; generated -= after; goto out;
                                }
                                continue;
                            }
                            record(p, (uint32_t)head, k->ord[j]);
                            level_push(&p->next, k->data.b + k->start[j], k->end[j] - k->start[j]);
                            new_by[a]++; nstates++; r->depth = level + 1;
                            if (k->inv[j] >= 0) {
                                r->verdict = 1; r->prop = k->inv[j]; r->index = (int64_t)nstates - 1; r->queue = nstates - head - 2;
                                gen_by[a] -= after; generated -= after; goto out;
                            }
                        }
                        first_of_act += cnt[a];
                    }
                    if (k->dead[qq]) { r->verdict = 2; r->index = (int64_t)head; r->queue = nstates - head - 1; goto out; }
                }
            }
        }
        Level t = p->cur; p->cur = p->next; p->next = t; level_clear(&p->next);
    }
out:
    if (r->verdict == 3) r->queue = nstates - head;
    if (r->verdict == 0) r->queue = 0;
    r->distinct = nstates; r->generated = generated;
    r->bytes = (p->mask + 1) * 8;
    p->quit = 1;
    if (p->nthreads > 1) {
        pthread_barrier_wait(&p->start);
        for (int i = 1; i < p->nthreads; i++) pthread_join(tids[i], NULL);
    }
    free(tids); free(args);
    return r->verdict;
}

/* the successor ordinals from an initial state to state `index` (the first is the initial state's) */
int64_t trace_path(Run *r, int64_t index, uint32_t *out, int64_t max) {
    Priv *p = r->priv; int64_t n = 0;
    uint32_t rec[2];
    for (int64_t i = index; ; i = rec[0]) { record_at(p, (uint64_t)i, rec); if (n < max) out[n] = rec[1]; n++; if (rec[0] == UINT32_MAX) break; }
    for (int64_t a = 0, b = (n < max ? n : max) - 1; a < b; a++, b--) { uint32_t t = out[a]; out[a] = out[b]; out[b] = t; }
    return n;
}
void release(Run *r) {
    Priv *p = r->priv; if (!p) return;
    table_free(p->table, p->mask + 1); free(p->buf); if (p->file) fclose(p->file);
    free(p->cur.data.b); free(p->cur.off); free(p->next.data.b); free(p->next.off);
    for (size_t i = 0; i < p->cap_chunks; i++) {
        Chunk *k = &p->chunks[i];
        free(k->data.b); free(k->fp); free(k->start); free(k->end); free(k->parent); free(k->ord); free(k->act); free(k->inv); free(k->pruned); free(k->cnt); free(k->dead);
    }
    free(p->chunks);
    for (int i = 0; i < p->nthreads; i++) ctx_free(&p->ctx[i]);
    free(p->ctx);
    pthread_barrier_destroy(&p->start); pthread_barrier_destroy(&p->done);
    free(p); r->priv = NULL;
}

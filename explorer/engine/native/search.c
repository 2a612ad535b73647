
/* ---- the breadth-first search (appended after the spec's generated code) ----

   Level by level. Each level's states are cut into chunks; N threads expand chunks (phase A:
   successors, their values frozen and their fingerprints, dropping those seen at earlier levels,
   and the constraint and invariants of the rest); then one thread walks the chunks in order (phase B),
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
    uint64_t frontier_bytes;     /* a level keeps this much in memory, the rest on disk */
    uint64_t spilled;            /* states written to disk */
    int verdict;                 /* 0 holds, 1 violated, 2 deadlock, 3 incomplete, 4 evaluation error,
                                    5 the Python engine reports this run (it stops among the initial states) */
    int stopped;                 /* incomplete: 1 max-states, 2 max-depth, 3 stopped by Python, 4 max-memory */
    int prop;                    /* the violated check: invariant_first's (< NINV), else action property prop - NINV */
    int64_t index;               /* the state the verdict names */
    int uncounted;               /* that state failed a constraint: not among the states found */
    int threads;
    int native_init;             /* the initial states are found here (init_states), not handed over */
    void *priv;
    /* the graph a liveness check needs (docs/engine.md, "Temporal properties"):
       with `record`, every state's edges and what the temporal layer reads of it */
    int record;
    const uint64_t *whole;       /* per action: the fairness and tracked bits its steps carry */
    int natoms;                  /* state predicates of the properties, one bit each per state */
    const int32_t *atom_fn;      /* per atom: its function in ATOM_FNS */
    const int32_t *atom_arg;     /* per atom: where its binding's values start in the constants */
    const int32_t *fair_first, *fair_count, *fair_vals;  /* fairness on parameter values: see fair_bits */
    const uint64_t *fair_bits;
    uint64_t nedges, graph_bytes;  /* the recorded graph: its edges, and the memory it took */
    uint64_t max_memory;         /* the memory budget in bytes (0: none): see table_room */
    const int32_t *fair_cond, *fair_carg;  /* per fair_bits entry: its sub-action's restriction (COND_FNS), its binding */
    uint64_t cond_bits;          /* the bits of the entries with a restriction (fair_conds) */
    uint64_t level_states, level_bytes;  /* the largest level: its states, and its packed blocks' bytes */
    uint64_t record_bytes;       /* the trace records, packed, on disk and in memory */
} Run;

#define CHUNK 256  /* parents a thread takes at once */
#define WINDOW 128
#define RECORDS 4096  /* trace records kept in memory before they go to the file, packed: a block */  /* chunks expanded before their new states are added */

/* a state's 128-bit fingerprint: two sums of its variables' hashes (the values' two independent
   hashes, hv), each mixed with its variable's number (Zobrist hashing), so a successor's is its
   parent's with the terms of the variables it changed replaced, without reading the values it
   left alone. `a` picks the table slot, and both words are compared. */
typedef struct { uint64_t a, b; } FP;
static inline FP fp_term(int i, V v) {
    H h = hv(v); uint64_t k = (uint64_t)(i + 1);
    FP t = {mix(h.a ^ k * 0x9E3779B97F4A7C15ull), mix2(h.b ^ k * 0xC2B2AE3D27D4EB4Full)};
    return t;
}
static FP state_fp(const V *w) {
    FP h = {0, 0};
    for (int i = 0; i < NV; i++) { FP t = fp_term(i, w[i]); h.a += t.a; h.b += t.b; }
    return h;
}
static inline int fp_eq(FP x, FP y) { return x.a == y.a && x.b == y.b; }
static inline FP FP_KEY(FP h) { if (!h.a) h.a = 1; return h; }  /* a == 0 marks an empty slot of the table */
/* A level's states, packed: cut into blocks of CHUNK states (the chunks phase A expands), each
   block its states' fingerprints (16 bytes each; computing them again from the words cost 10% of
   the collector's search) and then their words as a byte string, in which every word is XORed with
   the same word of the state before it, a run of equal words is one count and every other word a
   varint (LEB128). Siblings and neighbours share most of their values: the collector's 37 words a
   state (296 bytes) take 17 (bench's collector-19m: its largest level, 1,983,621 states, in 65 MB
   with the fingerprints, 619 MB unpacked). A block is kept in memory while the level's blocks there
   take at most `limit` bytes (Run.frontier_bytes), else appended to a temporary file. */
typedef struct { uint64_t off; uint32_t len, on_disk; } Blk;
typedef struct {
    unsigned char *mem; size_t bytes, cap;  /* the blocks kept in memory, one after another */
    Blk *blk; size_t nblk, capblk;
    V *fill; FP *ffill; size_t nfill;       /* the block being filled: its states' words and fingerprints */
    unsigned char *enc;                     /* room for one block encoded */
    size_t n, ndisk, limit;                 /* states; of them in blocks on disk; memory for blocks */
    FILE *file; uint64_t fbytes;
} Level;

/* what phase A found for the parents of one chunk, in order */
typedef struct {
    size_t first, n;             /* parents: positions [first, first + n) of the level */
    V *pw; FP *pfp;              /* the parents, read from the level */
    V *w;                        /* the candidates' words (NV_ALLOC each) */
    size_t ncand, cap;
    FP *fp; uint64_t *fair; uint32_t *parent, *ord; int16_t *act, *inv, *step; uint8_t *pruned;
    uint64_t *atoms;             /* with Run.record: per parent, its atoms */
    uint32_t *cnt;               /* successors per parent and action: n * NA */
    uint8_t *dead;               /* per parent: no successor and no terminal condition holds */
    int error;                   /* an evaluation error (the Python engine will report it) */
    int stopped;                 /* Python asked to stop while this chunk was expanded */
} Chunk;

typedef struct Priv {
    Run *r;
    FP *table; size_t mask, used;  /* the seen set: 16-byte slots, a == 0 empty */
    uint32_t (*buf)[2]; size_t nbuf; FILE *file; size_t n;  /* trace records (see record) */
    uint64_t *roff; size_t nroff, caproff;  /* per block of records on disk: its offset, and the end */
    uint32_t (*rcache)[2]; int64_t rblock;  /* the block record_at decoded last */
    Level cur, next;
    Chunk *chunks; size_t cap_chunks;  /* two windows' chunks: one expanded while the other is added */
    Chunk *active; size_t nchunks;     /* the window phase A expands */
    volatile size_t next_chunk;  /* the next chunk to take (atomic) */
    Ctx *ctx;                    /* one per thread */
    int nthreads;
    pthread_barrier_t start, done;
    volatile int quit;
    /* with Run.record: per table slot its state's index; per state (CSR) its edges, each with the
       bits of its steps, the bits enabled there and its atoms; a scratch table merges one
       parent's steps to one successor into one edge, as liveness.GraphBuilder does */
    uint32_t *ids;
    uint64_t *indptr, *en, *atoms; size_t nst, capst;
    uint32_t *edst; uint64_t *emask; size_t ne, cape;
    uint32_t *skey, *spos; uint64_t *stamp; size_t smask, row; uint64_t sgen;
} Priv;

#define ENC_MAX ((size_t)CHUNK * (NV_ALLOC * 12 + sizeof(FP)))  /* a block at most: its fingerprints, a count and a varint per word */
static inline unsigned char *put_var(unsigned char *o, uint64_t x) {
    while (x >= 0x80) { *o++ = (unsigned char)(x | 0x80); x >>= 7; }
    *o++ = (unsigned char)x; return o;
}
static inline const unsigned char *get_var(const unsigned char *in, uint64_t *x) {
    uint64_t r = 0; int s = 0;
    while (*in & 0x80) { r |= (uint64_t)(*in++ & 0x7F) << s; s += 7; }
    *x = r | (uint64_t)*in++ << s; return in;
}
static size_t block_encode(const V *ws, size_t m, unsigned char *out) {
    unsigned char *o = out;
    static const V zero[NV_ALLOC];
    const V *prev = zero;
    for (size_t j = 0; j < m; j++, prev = ws, ws += NV_ALLOC)
        for (int pos = 0; pos < NV;) {
            int k = 0; while (pos + k < NV && ws[pos + k] == prev[pos + k]) k++;
            o = put_var(o, (uint64_t)k); pos += k;
            if (pos < NV) { o = put_var(o, ws[pos] ^ prev[pos]); pos++; }
        }
    return (size_t)(o - out);
}
static void block_decode(const unsigned char *in, size_t m, V *ws) {
    static const V zero[NV_ALLOC];
    const V *prev = zero;
    for (size_t j = 0; j < m; j++, prev = ws, ws += NV_ALLOC) {
        for (int pos = 0; pos < NV;) {
            uint64_t k; in = get_var(in, &k);
            for (; k; k--, pos++) ws[pos] = prev[pos];
            if (pos < NV) { uint64_t x; in = get_var(in, &x); ws[pos] = x ^ prev[pos]; pos++; }
        }
        for (int v = NV; v < NV_ALLOC; v++) ws[v] = 0;
    }
}
static void level_flush(Level *l) {  /* the block being filled, encoded, to memory or to the file */
    if (!l->nfill) return;
    if (!l->enc && !(l->enc = malloc(ENC_MAX))) abort();
    memcpy(l->enc, l->ffill, l->nfill * sizeof(FP));
    size_t len = l->nfill * sizeof(FP) + block_encode(l->fill, l->nfill, l->enc + l->nfill * sizeof(FP));
    if (l->nblk == l->capblk) {
        l->capblk = l->capblk ? 2 * l->capblk : 64;
        if (!(l->blk = realloc(l->blk, l->capblk * sizeof(Blk)))) abort();
    }
    Blk *k = &l->blk[l->nblk++];
    k->len = (uint32_t)len;
    if (l->bytes + len <= l->limit) {
        if (l->bytes + len > l->cap) {
            l->cap = 2 * (l->bytes + len); if (l->cap > l->limit) l->cap = l->limit;
            if (!(l->mem = realloc(l->mem, l->cap))) abort();
        }
        memcpy(l->mem + l->bytes, l->enc, len); k->off = l->bytes; k->on_disk = 0; l->bytes += len;
    } else {
        if (!l->file) { if (!(l->file = tmpfile())) abort(); setvbuf(l->file, NULL, _IOFBF, 1 << 20); }
        if (fwrite(l->enc, len, 1, l->file) != 1) abort();
        k->off = l->fbytes; k->on_disk = 1; l->fbytes += len; l->ndisk += l->nfill;
    }
    l->nfill = 0;
}
static void level_push(Level *l, const V *w, FP fp) {
    if (!l->fill && (!(l->fill = malloc(CHUNK * NV_ALLOC * sizeof(V))) || !(l->ffill = malloc(CHUNK * sizeof(FP))))) abort();
    memcpy(l->fill + l->nfill * NV_ALLOC, w, NV_ALLOC * sizeof(V)); l->ffill[l->nfill] = fp;
    l->n++;
    if (++l->nfill == CHUNK) level_flush(l);
}
static void level_clear(Level *l) {
    l->n = l->ndisk = l->bytes = l->nblk = l->nfill = 0; l->fbytes = 0;
    if (l->file) { fflush(l->file); if (ftruncate(fileno(l->file), 0)) abort(); rewind(l->file); }
}
static void level_free(Level *l) {
    free(l->mem); free(l->blk); free(l->fill); free(l->ffill); free(l->enc);
    if (l->file) fclose(l->file);
    size_t limit = l->limit; memset(l, 0, sizeof *l); l->limit = limit;
}
static void level_done(Level *l) { level_flush(l); if (l->file) fflush(l->file); }  /* written: now read by every thread */
/* block b of a level (states [b * CHUNK, b * CHUNK + m)), decoded into w, and their fingerprints
   into fp unless it is NULL; returns m. Called by every thread at once: reads only. */
static size_t level_get(const Level *l, size_t b, V *w, FP *fp) {
    size_t m = l->n - b * CHUNK < CHUNK ? l->n - b * CHUNK : CHUNK;
    const Blk *k = &l->blk[b];
    if (k->on_disk) {
        unsigned char *buf = malloc(k->len ? k->len : 1); if (!buf) abort();
        if (pread(fileno(l->file), buf, k->len, (off_t)k->off) != (ssize_t)k->len) abort();
        if (fp) memcpy(fp, buf, m * sizeof(FP));
        block_decode(buf + m * sizeof(FP), m, w); free(buf);
    } else {
        if (fp) memcpy(fp, l->mem + k->off, m * sizeof(FP));
        block_decode(l->mem + k->off + m * sizeof(FP), m, w);
    }
    return m;
}

static void *grow(void *a, size_t bytes) { void *b = realloc(a, bytes); if (!b) abort(); return b; }
/* the table's memory: zeroed pages, in huge pages where the kernel gives them (a lookup is a
   random access: with 4 KiB pages most of them also miss the TLB) */
static FP *table_alloc(size_t slots) {
    size_t bytes = slots * sizeof(FP);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) abort();
#ifdef MADV_HUGEPAGE
    if (bytes >= (2u << 20)) madvise(m, bytes, MADV_HUGEPAGE);
#endif
    return m;
}
static void table_free(FP *t, size_t slots) { munmap(t, slots * sizeof(FP)); }

/* open addressing on 128-bit fingerprints (a == 0: empty), at most 3/4 full, a fingerprint's home
   slot the low bits of its first word. The table doubles in place: its mapping is extended
   (mremap moves page tables, not pages) and the entries re-placed in it, so growing never holds
   two tables (a table of 2^31 slots is 34 GB; the old one beside it would be 17 GB more). */
static void place(FP *t, uint32_t *ids, size_t mask, FP fp, uint32_t id) {
    size_t j = fp.a & mask; while (t[j].a) j = (j + 1) & mask;
    t[j] = fp; if (ids) ids[j] = id;
}
static int table_grow(Priv *p) {  /* 0: stopped by Python part way (the table is then not read again) */
    size_t n = p->mask + 1, size = 2 * n, mask = size - 1;
    /* the cluster across the end of the table (slot n - 1 to slot 0) is taken out first; after that
       every cluster lies in [0, n - 1) and is visited from its first slot */
    size_t nwrap = 0, cap = 0; FP *wfp = NULL; uint32_t *wid = NULL;
    if (p->table[n - 1].a) {
        size_t a = n - 1; while (p->table[(a - 1) & p->mask].a) a = (a - 1) & p->mask;
        for (size_t j = a; p->table[j].a; j = (j + 1) & p->mask) {
            if (nwrap == cap) {
                cap = cap ? 2 * cap : 64;
                wfp = grow(wfp, cap * sizeof(FP)); wid = grow(wid, cap * 4);
            }
            wfp[nwrap] = p->table[j]; wid[nwrap] = p->ids ? p->ids[j] : 0; nwrap++; p->table[j].a = 0;
        }
    }
    FP *t = mremap(p->table, n * sizeof(FP), size * sizeof(FP), MREMAP_MAYMOVE);
    if (t == MAP_FAILED) abort();
#ifdef MADV_HUGEPAGE
    madvise(t, size * sizeof(FP), MADV_HUGEPAGE);
#endif
    uint32_t *ids = p->ids ? grow(p->ids, size * 4) : NULL;
    p->table = t; p->mask = mask; p->ids = ids;
    /* in slot order, each entry taken out and placed again in the doubled table: one whose new
       home is in the upper half goes there, one whose home stays lands at or before its old slot
       (it now shares its cluster with fewer entries), never on an entry not yet visited, and the
       slots between a placed entry's home and its slot are never emptied again */
    for (size_t i = 0; i < n; i++) {
        if ((i & 0xFFFFF) == 0 && p->r->stop) { free(wfp); free(wid); return 0; }  /* a stop within a second */
        FP fp = t[i]; if (!fp.a) continue;
        t[i].a = 0; place(t, ids, mask, fp, ids ? ids[i] : 0);
    }
    for (size_t k = 0; k < nwrap; k++) place(t, ids, mask, wfp[k], wid[k]);
    free(wfp); free(wid);
    return 1;
}
/* this process's resident memory in bytes (0 where it cannot be read) */
static uint64_t resident(void) {
    unsigned long long size = 0, pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%llu %llu", &size, &pages) != 2) pages = 0;
    fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}
/* room for n more fingerprints (grown before phase B adds a chunk's, or a window's while phase A
   reads the table: it must not move under them); 0 when the doubling it needs would take the
   process past its memory budget (the search then stops, incomplete, before the growth: a
   doubling takes all its memory in seconds, 8.6 GB more at 2^30 slots, faster than Python's
   polling of the resident size could stop it), -1 when Python asked to stop during a growth
   (re-placing 800 million fingerprints takes seconds too) */
static int table_room(Priv *p, size_t n) {
    while (4 * (p->used + n + 1) > 3 * (p->mask + 1)) {
        size_t more = (p->mask + 1) * (sizeof(FP) + (p->ids ? 4 : 0));  /* the upper half (and its indices) */
        if (p->r->max_memory && resident() + more > p->r->max_memory) return 0;
        if (!table_grow(p)) return -1;
    }
    return 1;
}
#define ROOM_STOP(room) (r->verdict = 3, r->stopped = (room) ? 3 : 4)  /* table_room said no */
/* adds fp unless it is there (table_room first): whether it was new (one probe sequence for
   both); `*slot`: where it is. The second word is written first and the first (which marks the
   slot taken) after it, so phase A, reading meanwhile, sees a slot empty or whole. */
static int table_insert(Priv *p, FP fp, size_t *slot) {
    size_t j = fp.a & p->mask;
    while (p->table[j].a) { if (fp_eq(p->table[j], fp)) { *slot = j; return 0; } j = (j + 1) & p->mask; }
    __atomic_store_n(&p->table[j].b, fp.b, __ATOMIC_RELAXED);
    __atomic_store_n(&p->table[j].a, fp.a, __ATOMIC_RELEASE); p->used++; *slot = j; return 1;
}
/* read by phase A while phase B adds (never while the table grows) */
static inline int table_has(const Priv *p, FP fp) {
    size_t j = fp.a & p->mask; uint64_t x;
    while ((x = __atomic_load_n(&p->table[j].a, __ATOMIC_ACQUIRE))) {
        if (x == fp.a && __atomic_load_n(&p->table[j].b, __ATOMIC_RELAXED) == fp.b) return 1;
        j = (j + 1) & p->mask;
    }
    return 0;
}
/* each state's (parent, ordinal), in state order: appended to a temporary file a block of RECORDS
   at a time (TLC keeps its trace on disk too), read back only to rebuild a trace or copy the graph.
   A block is packed: the search adds states parent by parent, so a record's parent (+1; 0 for an
   initial state) minus the one before it is small and never negative, and the ordinal is small:
   two varints, about 2 bytes a state instead of 8 */
static void record_flush(Priv *p) {
    unsigned char *out = malloc(RECORDS * 20), *o = out; if (!out) abort();
    uint64_t prev = 0;
    for (size_t i = 0; i < p->nbuf; i++) {
        uint64_t q = p->buf[i][0] == UINT32_MAX ? 0 : (uint64_t)p->buf[i][0] + 1;
        int64_t d = (int64_t)(q - prev); prev = q;
        o = put_var(o, (uint64_t)(d << 1) ^ (uint64_t)(d >> 63));  /* zigzag: a parent before the last is still read right */
        o = put_var(o, p->buf[i][1]);
    }
    if (!p->file && !(p->file = tmpfile())) abort();
    if (p->nroff + 2 > p->caproff) {
        p->caproff = p->caproff ? 2 * p->caproff : 1024;
        if (!(p->roff = realloc(p->roff, p->caproff * sizeof *p->roff))) abort();
    }
    if (!p->nroff) p->roff[p->nroff++] = 0;
    if (fwrite(out, (size_t)(o - out), 1, p->file) != 1 && o != out) abort();
    p->roff[p->nroff] = p->roff[p->nroff - 1] + (uint64_t)(o - out); p->nroff++;
    free(out);
    p->nbuf = 0;
}
static void record(Priv *p, uint32_t parent, uint32_t ord) {
    if (p->nbuf == RECORDS) record_flush(p);
    p->buf[p->nbuf][0] = parent; p->buf[p->nbuf][1] = ord; p->nbuf++; p->n++;
}
static void record_block(Priv *p, size_t b, uint32_t (*out)[2]) {  /* block b of the file, unpacked */
    size_t len = p->roff[b + 1] - p->roff[b];
    unsigned char *buf = malloc(len ? len : 1); if (!buf) abort();
    fflush(p->file);
    if (pread(fileno(p->file), buf, len, (off_t)p->roff[b]) != (ssize_t)len) abort();
    const unsigned char *in = buf; uint64_t prev = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        uint64_t z, ord; in = get_var(in, &z); in = get_var(in, &ord);
        prev += (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
        out[i][0] = prev ? (uint32_t)(prev - 1) : UINT32_MAX; out[i][1] = (uint32_t)ord;
    }
    free(buf);
}
static void record_at(Priv *p, uint64_t i, uint32_t out[2]) {
    uint64_t flushed = p->n - p->nbuf;
    if (i >= flushed) { out[0] = p->buf[i - flushed][0]; out[1] = p->buf[i - flushed][1]; return; }
    int64_t b = (int64_t)(i / RECORDS);
    if (!p->rcache && !(p->rcache = malloc(RECORDS * sizeof *p->rcache))) abort();
    if (p->rblock != b + 1) { record_block(p, (size_t)b, p->rcache); p->rblock = b + 1; }  /* rblock 0: none */
    out[0] = p->rcache[i % RECORDS][0]; out[1] = p->rcache[i % RECORDS][1];
}
/* ---- the graph for temporal properties (Run.record) ---- */
static void graph_scratch(Priv *p, size_t size) {  /* room for `size` / 2 edges of one state */
    free(p->skey); free(p->spos); free(p->stamp);
    p->skey = malloc(size * 4); p->spos = malloc(size * 4); p->stamp = calloc(size, 8);
    if (!p->skey || !p->spos || !p->stamp) abort();
    p->smask = size - 1; p->sgen = 1;
}
static void graph_insert(Priv *p, uint32_t dst, size_t pos) {
    size_t h = (dst * 0x9E3779B1u) & p->smask;
    while (p->stamp[h] == p->sgen) h = (h + 1) & p->smask;
    p->stamp[h] = p->sgen; p->skey[h] = dst; p->spos[h] = (uint32_t)pos;
}
/* a step of the state being expanded to state `dst`, with `bits`: one edge per successor */
static void graph_edge(Priv *p, uint32_t dst, uint64_t bits) {
    size_t h = (dst * 0x9E3779B1u) & p->smask;
    for (; p->stamp[h] == p->sgen; h = (h + 1) & p->smask)
        if (p->skey[h] == dst) { p->emask[p->row + p->spos[h]] |= bits; return; }
    if (p->ne == p->cape) {
        p->cape = p->cape ? 2 * p->cape : 4096;
        p->edst = grow(p->edst, p->cape * 4); p->emask = grow(p->emask, p->cape * 8);
    }
    size_t pos = p->ne - p->row;
    p->edst[p->ne] = dst; p->emask[p->ne] = bits; p->ne++;
    if (4 * (pos + 1) > p->smask + 1) {  /* rebuilt bigger: this state's edges so far */
        graph_scratch(p, 2 * (p->smask + 1));
        for (size_t i = p->row; i < p->ne; i++) graph_insert(p, p->edst[i], i - p->row);
    } else graph_insert(p, dst, pos);
}
/* the state just expanded: where its edges end, what is enabled there, its atoms */
static void graph_state(Priv *p, uint64_t en, uint64_t atoms) {
    if (p->nst == p->capst) {
        p->capst = p->capst ? 2 * p->capst : 4096;
        p->en = grow(p->en, p->capst * 8); p->atoms = grow(p->atoms, p->capst * 8); p->indptr = grow(p->indptr, (p->capst + 1) * 8);
    }
    p->en[p->nst] = en; p->atoms[p->nst] = atoms; p->nst++; p->indptr[p->nst] = p->ne;
    p->row = p->ne; p->sgen++;
}

/* the bits of steps on parameter values (`fair(p)`, a property's `A(e)`) and of sub-actions
   (`(A and P)`), when recording: per action its entries [FAIR_FIRST[a], FAIR_FIRST[a] + FAIR_COUNT[a]),
   entry e holding for the steps whose parameter i has the value KT[FAIR_VALS[8 * e + i]] (where
   that is not -1; the values are in c->fv, set by the action, codegen), with bits FAIR_BITS[e];
   an entry with a restriction (FAIR_COND[e] >= 0) is kept only where it holds (fair_conds) */
static const int32_t *FAIR_FIRST, *FAIR_COUNT, *FAIR_VALS, *FAIR_COND, *FAIR_CARG;
static const uint64_t *FAIR_BITS;
static uint64_t COND_BITS;
static uint64_t fair_bits(Ctx *c, int act) {
    if (!FAIR_BITS) return 0;
    uint64_t out = 0;
    for (int32_t e = FAIR_FIRST[act]; e < FAIR_FIRST[act] + FAIR_COUNT[act]; e++) {
        int i = 0;
        while (i < 8 && (FAIR_VALS[8 * e + i] < 0 || eq(c->fv[i], KT[FAIR_VALS[8 * e + i]]))) i++;
        if (i == 8) out |= FAIR_BITS[e];
    }
    return out;
}
static void emit(Ctx *c, int act, const V *n) {
    if (*c->stop) longjmp(c->fail, 2);
    if (c->nsucc == c->cap_succ) {
        c->cap_succ = c->cap_succ ? 2 * c->cap_succ : 64;
        c->succ = realloc(c->succ, c->cap_succ * NV_ALLOC * sizeof(V)); c->succ_act = realloc(c->succ_act, c->cap_succ * sizeof(int));
        c->succ_fair = realloc(c->succ_fair, c->cap_succ * 8);
        if (!c->succ || !c->succ_act || !c->succ_fair) longjmp(c->fail, 2);
    }
    c->succ_fair[c->nsucc] = fair_bits(c, act);
    memcpy(c->succ + c->nsucc * NV_ALLOC, n, NV_ALLOC * sizeof(V)); c->succ_act[c->nsucc++] = act;
}

static void ctx_init(Ctx *c, volatile int *stop) {
    memset(c, 0, sizeof *c);
    c->first = malloc(sizeof(Block) + (1u << 20)); c->first->size = 1u << 20; c->first->next = NULL;
    c->cur = c->first; arena_reset(c);
    c->memo_gen = calloc(NMEMO + 1, 8); c->memo = calloc(NMEMO + 1, sizeof(V));
    c->stop = stop;
    c->store = store_new();
}
static void ctx_free(Ctx *c) {
    Block *b = c->first; while (b) { Block *n = b->next; free(b); b = n; }
    free(c->memo_gen); free(c->memo); free(c->succ); free(c->succ_act); free(c->succ_fair); store_free(c->store);
}
static inline void enter(Ctx *c, V *s) { c->s = s; c->gen++; c->depth = 0; }

static void cand_push(Chunk *k, const V *w, FP fp, uint32_t parent, uint32_t ord, int act, uint64_t fair) {
    if (k->ncand == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 1024;
        k->w = realloc(k->w, k->cap * NV_ALLOC * sizeof(V)); k->fp = realloc(k->fp, k->cap * sizeof(FP)); k->parent = realloc(k->parent, k->cap * 4);
        k->ord = realloc(k->ord, k->cap * 4); k->act = realloc(k->act, k->cap * 2); k->inv = realloc(k->inv, k->cap * 2);
        k->pruned = realloc(k->pruned, k->cap); k->fair = realloc(k->fair, k->cap * 8); k->step = realloc(k->step, k->cap * 2);
        if (!k->w || !k->fp || !k->parent || !k->ord || !k->act || !k->inv || !k->pruned || !k->fair || !k->step) abort();
    }
    size_t i = k->ncand++;
    memcpy(k->w + i * NV_ALLOC, w, NV_ALLOC * sizeof(V));
    k->fp[i] = fp; k->parent[i] = parent; k->ord[i] = ord; k->act[i] = (int16_t)act; k->fair[i] = fair; k->step[i] = -1;
}
/* TLC's action properties (`always [A | B]`, `always [P]`: model.step_checks) on the steps of one
   parent, the chunk's candidates [from, k->ncand): a step fails check s unless its predicate holds,
   or one of its actions takes it (an action of the check's, or another of them reaching the same
   successor), or it changes nothing;
   k->step holds the first check it fails, or -1 */
static void step_checks(Ctx *c, Chunk *k, size_t from, V *from_state, FP pfp) {
    for (size_t i = from; i < k->ncand; i++)
        for (int s = 0; s < NSTEP && k->step[i] < 0; s++) {
            if (fp_eq(k->fp[i], pfp)) break;  /* a stutter passes every check */
            if (STEP_PRED[s]) {  /* `always [P]`: P on the state and the next (an evaluation error jumps out) */
                if (!STEP_PRED[s](c, from_state, k->w + i * NV_ALLOC)) k->step[i] = (int16_t)s;
                continue;
            }
            const unsigned char *ok = STEP_OK + s * NA_ALLOC;
            if (ok[k->act[i]]) continue;
            size_t j = from;
            while (j < k->ncand && !(ok[k->act[j]] && fp_eq(k->fp[j], k->fp[i]))) j++;
            if (j == k->ncand) k->step[i] = (int16_t)s;
        }
}

/* the sub-actions' restrictions (`(A and P)`) on the steps of one parent, the chunk's candidates
   [from, k->ncand): a step keeps an entry's bit only where P holds on it (an evaluation error jumps out) */
static void fair_conds(Ctx *c, Chunk *k, size_t from, V *from_state, FP pfp) {
    for (size_t i = from; i < k->ncand; i++) {
        if (!(k->fair[i] & COND_BITS) || fp_eq(k->fp[i], pfp)) continue;
        int a = k->act[i];
        for (int32_t e = FAIR_FIRST[a]; e < FAIR_FIRST[a] + FAIR_COUNT[a]; e++)
            if (FAIR_COND[e] >= 0 && (k->fair[i] & FAIR_BITS[e])
                && !COND_FNS[FAIR_COND[e]](c, from_state, k->w + i * NV_ALLOC, KT + FAIR_CARG[e]))
                k->fair[i] &= ~FAIR_BITS[e];
    }
}

/* phase A for one chunk: expand its parents (their successors' changed values frozen, each
   successor's slot in the table prefetched), then drop the successors seen at earlier levels and
   evaluate the constraints and invariants of the rest (by then the slots are in the cache) */
static void expand_chunk(Priv *p, Ctx *c, Chunk *k) {
    Run *r = p->r;
    k->ncand = 0; k->error = 0; k->stopped = 0;
    level_get(&p->cur, k->first / CHUNK, k->pw, k->pfp);
    for (size_t q = 0; q < k->n; q++) {
        if (r->stop) { k->stopped = 1; return; }
        V *s = k->pw + q * NV_ALLOC;
        FP pfp = k->pfp[q];
        arena_reset(c);
        int code = setjmp(c->fail);
        if (code) { if (code == 2) k->stopped = 1; else k->error = 1; return; }
        enter(c, s); c->nsucc = 0;
        if (r->record) {  /* every state is expanded once, in index order: its atoms are taken here */
            uint64_t atoms = 0;
            for (int a = 0; a < r->natoms; a++) if (ATOM_FNS[r->atom_fn[a]](c, s, KT + r->atom_arg[a])) atoms |= 1ull << a;
            k->atoms[q] = atoms; enter(c, s); c->nsucc = 0;
        }
        uint32_t *cnt = k->cnt + q * NA_ALLOC;
        for (int a = 0; a < NA; a++) { size_t before = c->nsucc; ACTIONS[a](c, s); cnt[a] = (uint32_t)(c->nsucc - before); }
        size_t from = k->ncand;
        for (size_t i = 0; i < c->nsucc; i++) {
            V *t = c->succ + i * NV_ALLOC;
            FP fp = pfp;
            for (int v = 0; v < NV; v++) if (t[v] != s[v]) {
                t[v] = freeze(c->store, t[v]);
                FP now = fp_term(v, t[v]), was = fp_term(v, s[v]); fp.a += now.a - was.a; fp.b += now.b - was.b;
            }
            __builtin_prefetch(&p->table[FP_KEY(fp).a & p->mask]);
            cand_push(k, t, fp, (uint32_t)q, (uint32_t)i, c->succ_act[i], c->succ_fair[i]);
        }
        if (NSTEP) step_checks(c, k, from, s, pfp);
        if (COND_BITS) fair_conds(c, k, from, s, pfp);
        k->dead[q] = 0;
        if (c->nsucc == 0 && r->deadlock) { enter(c, s); k->dead[q] = !terminal_any(c, s); }
    }
    size_t m = 0;
    int code = setjmp(c->fail);  /* a stop inside an invariant or a constraint is a stop, not an error */
    if (code) { if (code == 2) k->stopped = 1; else k->error = 1; return; }
    for (size_t i = 0; i < k->ncand; i++) {
        int inv = -1, pruned = 0;
        if (table_has(p, FP_KEY(k->fp[i]))) {
            /* recording: kept, for its edge (phase B looks up its index); a step failing an action property: kept, to stop there */
            if (!r->record && k->step[i] < 0) continue;
        } else {
            V *t = k->w + i * NV_ALLOC;
            arena_reset(c);
            if (NC) { enter(c, t); pruned = !constraints_ok(c, t); }
            enter(c, t);
            inv = invariant_first(c, t);
        }
        if (m != i) {
            memcpy(k->w + m * NV_ALLOC, k->w + i * NV_ALLOC, NV_ALLOC * sizeof(V));
            k->fp[m] = k->fp[i]; k->parent[m] = k->parent[i]; k->ord[m] = k->ord[i]; k->act[m] = k->act[i]; k->step[m] = k->step[i];
        }
        k->inv[m] = (int16_t)inv; k->pruned[m] = (uint8_t)pruned; m++;
    }
    k->ncand = m;
}

static void phase_a(Priv *p, Ctx *c) {
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next_chunk, 1, __ATOMIC_RELAXED);
        if (i >= p->nchunks) return;
        expand_chunk(p, c, &p->active[i]);
    }
}

/* window w of the level (chunks of `total`) as the one phase A expands next, in the other half
   of the chunks from the window before it */
static void window_set(Priv *p, size_t w, size_t total) {
    Chunk *set = p->chunks + (w % 2) * WINDOW;
    size_t first = w * WINDOW, n = total - first < WINDOW ? total - first : WINDOW;
    for (size_t i = 0; i < n; i++) {
        set[i].first = (first + i) * CHUNK;
        set[i].n = first + i + 1 < total ? CHUNK : p->cur.n - (first + i) * CHUNK;
    }
    p->active = set; p->nchunks = n; p->next_chunk = 0;
}

/* an initial state from init_states, taken as the Python engine takes one (native/search.py
   `_Initial`): counted, cut by the state limit, deduplicated, pruned by the constraints, checked by
   the invariants. A stop among them other than Python's is left to the Python engine (verdict 5),
   which reports it at the state where it stops. */
static Priv *INIT;  /* the search finding its initial states (on one thread) */
static void emit_init(Ctx *c, V *n) {
    Priv *p = INIT; Run *r = p->r;
    if (*c->stop) longjmp(c->fail, 2);
    r->generated++;
    if (r->max_states && p->n >= r->max_states) longjmp(c->fail, 3);
    V w[NV_ALLOC] = {0};
    for (int i = 0; i < NV; i++) w[i] = freeze(c->store, n[i]);
    FP fp = state_fp(w);
    if (table_has(p, FP_KEY(fp))) return;
    V *loop = c->s;
    int pruned = 0;
    if (NC) { enter(c, w); pruned = !constraints_ok(c, w); }
    if (pruned) r->pruned++;
    else { size_t slot; int room = table_room(p, 1); if (room <= 0) { r->stopped = room ? 3 : 4; longjmp(c->fail, 2); }
           table_insert(p, FP_KEY(fp), &slot); if (p->ids) p->ids[slot] = (uint32_t)p->n;
           record(p, UINT32_MAX, (uint32_t)p->n); level_push(&p->cur, w, fp); }
    enter(c, w);
    if (invariant_first(c, w) >= 0) longjmp(c->fail, 3);
    c->s = loop; c->gen++;
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

static void load_consts(const unsigned char *consts, size_t nconsts) {  /* KT: the constants, frozen, their strings interned */
    if (!consts_ready) { ctx_init(&KCTX, &NEVER); consts_ready = 1; }
    arena_reset(&KCTX);
    free(KT); KT = malloc((nconsts + 1) * sizeof(V));
    memset(STR_TABLE, 0, sizeof STR_TABLE);
    store_free(KCTX.store); KCTX.store = store_new();
    for (size_t i = 0; i < nconsts; i++) { KT[i] = freeze(KCTX.store, decode(&KCTX, &consts)); str_intern_all(&KCTX, KT[i]); }
}

int search(Run *r, const unsigned char *consts, size_t nconsts, const unsigned char *init, size_t ninit,
           uint64_t *gen_by, uint64_t *new_by) {
    load_consts(consts, nconsts);
    Priv *p = calloc(1, sizeof(Priv)); r->priv = p; p->r = r;
    FAIR_FIRST = r->fair_first; FAIR_COUNT = r->fair_count; FAIR_VALS = r->fair_vals; FAIR_BITS = r->record ? r->fair_bits : NULL;
    FAIR_COND = r->fair_cond; FAIR_CARG = r->fair_carg; COND_BITS = r->record ? r->cond_bits : 0;
    p->buf = malloc(RECORDS * sizeof *p->buf);
    p->mask = (1u << 16) - 1; p->table = table_alloc(p->mask + 1);
    if (r->record) {
        if (!(p->ids = malloc((p->mask + 1) * 4))) abort();
        graph_scratch(p, 64); p->indptr = calloc(1, 8); if (!p->indptr) abort();
    }
    p->nthreads = r->threads > 0 ? r->threads : 1;
    p->cur.limit = p->next.limit = r->frontier_bytes ? r->frontier_bytes : SIZE_MAX;
    r->spilled = 0; r->level_states = r->level_bytes = 0;
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
    /* the initial states: found here (init_states), or found by the Python engine and handed over */
    uint64_t generated, head = 0, nstates = 0;
    r->verdict = 0; r->index = -1; r->uncounted = 0; r->level = 1;
    if (r->native_init) {
        INIT = p; r->generated = r->pruned = 0;
        int code = setjmp(c->fail);
        if (code) {
            r->verdict = code == 3 ? 5 : code == 2 ? 3 : 4; if (code == 2 && !r->stopped) r->stopped = 3;
            nstates = p->n; generated = r->generated; r->depth = nstates ? 1 : 0; goto out;
        }
        arena_reset(c);
        init_states(c);
        nstates = p->n;
        if (!nstates) { generated = r->generated; r->verdict = 5; goto out; }
    } else {
        const unsigned char *q = init;
        V w[NV_ALLOC] = {0};
        int room = table_room(p, ninit);
        if (room <= 0) { ROOM_STOP(room); generated = r->generated; goto out; }
        for (size_t k = 0; k < ninit; k++) {
            arena_reset(c);
            for (int i = 0; i < NV; i++) w[i] = freeze(c->store, decode(c, &q));
            FP fp = state_fp(w);
            size_t slot; table_insert(p, FP_KEY(fp), &slot); if (p->ids) p->ids[slot] = (uint32_t)k;
            record(p, UINT32_MAX, (uint32_t)k); level_push(&p->cur, w, fp); nstates++;
        }
    }
    generated = r->generated;
    level_done(&p->cur);
    r->spilled += p->cur.ndisk;
    r->distinct = nstates; r->depth = 1;
    for (uint64_t level = 1; p->cur.n; level++) {
        if (level > 1) { r->level = level; if (r->max_depth && (int64_t)level > r->max_depth) { r->verdict = 3; r->stopped = 2; goto out; } }
        /* the level in windows of WINDOW chunks: phase A expands a window on every thread, phase B
           adds its candidates on this one (one window's candidates are in memory, not a whole
           level's). With several threads, phase B of a window runs while the other threads
           expand the next one, and this thread joins them when it is done. */
        size_t total = (p->cur.n + CHUNK - 1) / CHUNK, nwin = (total + WINDOW - 1) / WINDOW;
        if (p->cap_chunks < 2 * WINDOW) {
            p->chunks = calloc(2 * WINDOW, sizeof(Chunk));
            for (size_t i = 0; i < 2 * WINDOW; i++) {
                Chunk *k = &p->chunks[i];
                k->cnt = malloc(CHUNK * NA_ALLOC * 4); k->dead = malloc(CHUNK); k->atoms = malloc(CHUNK * 8);
                k->pw = malloc(CHUNK * NV_ALLOC * sizeof(V)); k->pfp = malloc(CHUNK * sizeof(FP));
                if (!k->cnt || !k->dead || !k->atoms || !k->pw || !k->pfp) abort();
            }
            p->cap_chunks = 2 * WINDOW;
        }
        int pipeline = p->nthreads > 1;
        window_set(p, 0, total);
        if (pipeline) pthread_barrier_wait(&p->start);
        phase_a(p, c);
        if (pipeline) pthread_barrier_wait(&p->done);
        for (size_t w = 0; w < nwin; w++) {
            Chunk *set = p->active; size_t nset = p->nchunks;
            int launched = 0;
            if (w + 1 < nwin && pipeline) {
                size_t ncand = 0; for (size_t ci = 0; ci < nset; ci++) ncand += set[ci].ncand;
                int room = table_room(p, ncand);
                if (room <= 0) { ROOM_STOP(room); goto end; }
                window_set(p, w + 1, total);
                pthread_barrier_wait(&p->start); launched = 1;
            }
            /* phase B: the chunks in order, as a one-thread search visits them */
            for (size_t ci = 0; ci < nset; ci++) {
                Chunk *k = &set[ci];
                size_t j = 0;  /* the next candidate */
                int room = table_room(p, k->ncand);
                if (room <= 0) { ROOM_STOP(room); goto end; }
                for (size_t qq = 0; qq < k->n; qq++, head++) {
                    if (r->max_states && nstates >= r->max_states) { r->verdict = 3; r->stopped = 1; goto end; }
                    if (k->stopped || k->error) {  /* the chunk's expansion stopped at or before this parent */
                        r->verdict = k->error ? 4 : 3; if (!k->error) r->stopped = 3; goto end;
                    }
                    if ((head & 255) == 0) { r->distinct = nstates; r->queue = nstates - head; r->generated = generated; }
                    const uint32_t *cnt = k->cnt + qq * NA_ALLOC;
                    uint32_t first_of_act = 0;
                    uint64_t en = 0;  /* recording: the bits of the actions with a step here (also into a pruned state) */
                    for (int a = 0; a < NA; a++) {
                        gen_by[a] += cnt[a]; generated += cnt[a];
                        for (; j < k->ncand && k->parent[j] == qq && k->act[j] == a; j++) {
                            if (j + 16 < k->ncand) __builtin_prefetch(&p->table[FP_KEY(k->fp[j + 16]).a & p->mask]);
                            FP fp = FP_KEY(k->fp[j]);
                            size_t slot;
                            if (r->record) {
                                if (fp_eq(k->fp[j], k->pfp[qq])) continue;  /* a stutter: no step, no edge */
                                en |= r->whole[a] | k->fair[j];
                            }
                            uint32_t after = first_of_act + cnt[a] - k->ord[j] - 1;  /* its action's successors after it */
                            /* a pruned state is never added: it is pruned (and counted) each time it is reached */
                            if (k->pruned[j] ? table_has(p, fp) : !table_insert(p, fp, &slot)) {  /* an earlier parent reached it */
                                if (r->record && !k->pruned[j]) graph_edge(p, p->ids[slot], r->whole[a] | k->fair[j]);
                                if (k->step[j] >= 0) goto step_uncounted;
                                continue;
                            }
                            if (k->pruned[j]) {
                                r->pruned++;
                                if (k->inv[j] >= 0) {
                                    record(p, (uint32_t)head, k->ord[j]); r->verdict = 1; r->prop = k->inv[j]; r->index = (int64_t)p->n - 1; r->uncounted = 1;
                                    r->queue = nstates - head - 1; gen_by[a] -= after; generated -= after; goto end;
                                }
                                if (k->step[j] >= 0) {
                                step_uncounted:  /* the step's end is in the trace (a record of its own), not among the states found */
                                    record(p, (uint32_t)head, k->ord[j]); r->verdict = 1; r->prop = NINV + k->step[j]; r->index = (int64_t)p->n - 1;
                                    r->uncounted = 1; r->queue = nstates - head - 1; gen_by[a] -= after; generated -= after; goto end;
                                }
                                continue;
                            }
                            if (r->record) { p->ids[slot] = (uint32_t)nstates; graph_edge(p, (uint32_t)nstates, r->whole[a] | k->fair[j]); }
                            record(p, (uint32_t)head, k->ord[j]);
                            level_push(&p->next, k->w + j * NV_ALLOC, k->fp[j]);
                            new_by[a]++; nstates++; r->depth = level + 1;
                            if (k->inv[j] >= 0 || k->step[j] >= 0) {  /* the invariants first, then the action properties (TLC's order) */
                                r->verdict = 1; r->prop = k->inv[j] >= 0 ? k->inv[j] : NINV + k->step[j];
                                r->index = (int64_t)nstates - 1; r->queue = nstates - head - 2;
                                gen_by[a] -= after; generated -= after; goto end;
                            }
                        }
                        first_of_act += cnt[a];
                    }
                    if (r->record) graph_state(p, en, k->atoms[qq]);
                    if (k->dead[qq]) { r->verdict = 2; r->index = (int64_t)head; r->queue = nstates - head - 1; goto end; }
                }
            }
            if (w + 1 < nwin) {
                if (!launched) window_set(p, w + 1, total);
                phase_a(p, c);
                if (launched) pthread_barrier_wait(&p->done);
            }
            continue;
        end:  /* a verdict: the next window's expansion, if under way, is let go first */
            if (launched) { __atomic_store_n(&p->next_chunk, p->nchunks, __ATOMIC_RELAXED); pthread_barrier_wait(&p->done); }
            goto out;
        }
        Level t = p->cur; p->cur = p->next; p->next = t; level_clear(&p->next); level_done(&p->cur);
        r->spilled += p->cur.ndisk;
        if (p->cur.n > r->level_states) { r->level_states = p->cur.n; r->level_bytes = p->cur.bytes + p->cur.fbytes; }
    }
out:
    if (r->verdict == 3) r->queue = nstates - head;
    if (r->verdict == 0) r->queue = 0;
    r->distinct = nstates; r->generated = generated;
    r->bytes = (p->mask + 1) * sizeof(FP);
    r->record_bytes = (p->nroff ? p->roff[p->nroff - 1] : 0) + p->nbuf * sizeof *p->buf;
    if (r->record) { r->graph_bytes = (p->mask + 1) * 4 + p->cape * 12 + p->capst * 24; r->nedges = p->ne; }
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
    for (int64_t i = index; ; i = rec[0]) {
        if (i < 0 || (uint64_t)i >= p->n || n > (int64_t)p->n) return -1;  /* no way back to an initial state: a defect, never a loop */
        record_at(p, (uint64_t)i, rec); if (n < max) out[n] = rec[1]; n++; if (rec[0] == UINT32_MAX) break;
    }
    for (int64_t a = 0, b = (n < max ? n : max) - 1; a < b; a++, b--) { uint32_t t = out[a]; out[a] = out[b]; out[b] = t; }
    return n;
}
void release(Run *r) {
    Priv *p = r->priv; if (!p) return;
    table_free(p->table, p->mask + 1); free(p->buf); free(p->roff); free(p->rcache); if (p->file) fclose(p->file);
    level_free(&p->cur); level_free(&p->next);
    for (size_t i = 0; i < p->cap_chunks; i++) {
        Chunk *k = &p->chunks[i];
        free(k->w); free(k->fp); free(k->fair); free(k->parent); free(k->ord); free(k->act); free(k->inv); free(k->step); free(k->pruned); free(k->cnt); free(k->dead); free(k->atoms); free(k->pw); free(k->pfp);
    }
    free(p->chunks);
    free(p->ids); free(p->indptr); free(p->en); free(p->atoms); free(p->edst); free(p->emask);
    free(p->skey); free(p->spos); free(p->stamp);
    for (int i = 0; i < p->nthreads; i++) ctx_free(&p->ctx[i]);
    free(p->ctx);
    pthread_barrier_destroy(&p->start); pthread_barrier_destroy(&p->done);
    free(p); r->priv = NULL;
}

/* the recorded graph (Run.record), copied out once the search has found every state: per state
   its parent and successor ordinal (as trace_path reads them), the CSR of its edges, the bits of
   each edge, the bits enabled there and its atoms */
void graph_copy(Run *r, uint32_t *records, uint64_t *indptr, uint32_t *dst, uint64_t *emask, uint64_t *en, uint64_t *atoms) {
    Priv *p = r->priv;
    uint64_t flushed = p->n - p->nbuf, n = p->nst < p->n ? p->nst : p->n;
    for (size_t b = 0; b < flushed / RECORDS; b++) record_block(p, b, (uint32_t (*)[2])(records + 2 * b * RECORDS));
    if (n > flushed) memcpy(records + 2 * flushed, p->buf, (n - flushed) * 8);
    memcpy(indptr, p->indptr, (p->nst + 1) * 8);
    if (p->ne) { memcpy(dst, p->edst, p->ne * 4); memcpy(emask, p->emask, p->ne * 8); }
    if (p->nst) { memcpy(en, p->en, p->nst * 8); memcpy(atoms, p->atoms, p->nst * 8); }
}

/* the table's own check (tests/test_native.py): n distinct pseudo-random 128-bit fingerprints,
   each with an id, inserted into a table that starts small and doubles in place on the way, then
   each one looked up; returns how many were not found with their id (0: every growth kept every
   entry). Fingerprints come four to a first word (they share a home slot and differ in the second
   word only), so a table that compared one word would merge them; and a fingerprint that differs
   from each one in its second word alone must not be found. With `stop` (Python's stop already
   asked for), the first doubling gives up at once instead: 0 when nothing was inserted past it. */
static FP check_fp(uint64_t seed, uint64_t i, uint64_t salt) {
    FP fp = {mix(seed + (i >> 2)), mix2(seed + i + salt)}; return FP_KEY(fp);
}
uint64_t table_check(uint64_t n, uint64_t seed, int stop) {
    Priv p = {0};
    Run r = {0}; r.stop = stop; p.r = &r;
    p.mask = (1u << 16) - 1; p.table = table_alloc(p.mask + 1);
    if (!(p.ids = malloc((p.mask + 1) * 4))) abort();
    uint64_t bad = 0, added = 0; size_t slot;
    for (uint64_t i = 0; i < n; i++, added++) {
        if (table_room(&p, 1) < 0) break;
        if (table_insert(&p, check_fp(seed, i, 0), &slot)) p.ids[slot] = (uint32_t)i; else bad++;
    }
    if (stop) bad += added != 3 * (1u << 16) / 4 - 1;
    else
        for (uint64_t i = 0; i < n; i++) {
            if (table_insert(&p, check_fp(seed, i, 0), &slot) || p.ids[slot] != (uint32_t)i) bad++;
            if (table_has(&p, check_fp(seed, i, n))) bad++;
        }
    if (p.used != added) bad++;
    table_free(p.table, p.mask + 1); free(p.ids);
    return bad;
}

/* The operator tests' entry (tests/operators.py): the spec's probes (codegen `generate(probes=...)`,
   parameterless definitions) evaluated on given states, as the search evaluates an expression on
   a state it found (each state's values decoded and frozen). `cases`: per case NV encoded values;
   case i evaluates PROBES[probe[i]]. Each result is encoded into `out` (the byte 8 where the
   evaluation failed, i.e. where a search would hand the run to the Python engine), ends[i] the
   offset after it. Returns the number of cases done: fewer than n when `out` is full (the rest
   are asked again). */
uint64_t eval_probes(const unsigned char *consts, size_t nconsts, const unsigned char *cases, uint64_t n,
                     const int32_t *probe, unsigned char *out, uint64_t cap, uint64_t *ends) {
    load_consts(consts, nconsts);
    Ctx ctx, *c = &ctx; ctx_init(c, &NEVER);
    Out o = {out, 0, cap};
    V w[NV_ALLOC] = {0};
    uint64_t i = 0;
    for (; i < n; i++) {
        arena_reset(c);
        for (int j = 0; j < NV; j++) w[j] = freeze(c->store, decode(c, &cases));
        enter(c, w);
        size_t before = o.n;
        if (setjmp(c->fail)) { o.n = before; out_byte(&o, 8); }
        else encode_value(&o, PROBES[probe[i]](c));
        if (o.n > o.cap) break;
        ends[i] = o.n;
    }
    ctx_free(c);
    return i;
}

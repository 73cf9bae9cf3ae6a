/* Reference solver for the benchmark: symmetry-reduced retrograde analysis of an R x C board,
 * k in a row, X first, single-threaded.
 *
 * Same algorithm as the project's exhaustive solver: forward, the canonical keys of every ply
 * (children made, canonicalised by byte tables, sorted by radix sort, deduplicated); backward,
 * each ply's scores from the next ply's (binary search). Prints the canonical and reachable
 * counts and the value of the empty board for X.
 *
 *     solve ROWS COLS K
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN 1024
static int R, C, K, N, S;
static uint64_t tables[8][8][256]; /* [symmetry][byte of key][byte value] -> image bits */
static uint64_t moves[64][8];      /* [key bit][symmetry] -> image of that bit alone */
static uint64_t lines[512];
static int nlines;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

static void setup(void) {
    int perms[8][64];
    S = R == C ? 8 : 4;
    for (int s = 0; s < S; s++)
        for (int cell = 0; cell < N; cell++) {
            int r = cell / C, c = cell % C, r2, c2;
            switch (s) {
            case 0: r2 = r; c2 = c; break;
            case 1: r2 = r; c2 = C - 1 - c; break;
            case 2: r2 = R - 1 - r; c2 = c; break;
            case 3: r2 = R - 1 - r; c2 = C - 1 - c; break;
            case 4: r2 = c; c2 = r; break;
            case 5: r2 = R - 1 - c; c2 = R - 1 - r; break;
            case 6: r2 = c; c2 = R - 1 - r; break;
            default: r2 = R - 1 - c; c2 = r; break;
            }
            perms[s][cell] = r2 * C + c2;
        }
    for (int s = 0; s < S; s++) {
        for (int bit = 0; bit < 2 * N; bit++) {
            int image = bit < N ? perms[s][bit] : N + perms[s][bit - N];
            moves[bit][s] = 1ULL << image;
        }
        for (int chunk = 0; chunk < 8; chunk++)
            for (int v = 0; v < 256; v++) {
                uint64_t image = 0;
                for (int b = 0; b < 8; b++)
                    if (v >> b & 1 && chunk * 8 + b < 2 * N) image |= moves[chunk * 8 + b][s];
                tables[s][chunk][v] = image;
            }
    }
    int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            for (int d = 0; d < 4; d++) {
                int er = r + dirs[d][0] * (K - 1), ec = c + dirs[d][1] * (K - 1);
                if (er < 0 || er >= R || ec < 0 || ec >= C) continue;
                uint64_t m = 0;
                for (int i = 0; i < K; i++) m |= 1ULL << ((r + dirs[d][0] * i) * C + c + dirs[d][1] * i);
                lines[nlines++] = m;
            }
}

static void images_of(uint64_t key, uint64_t *out) {
    for (int s = 0; s < S; s++) {
        uint64_t image = 0;
        for (int chunk = 0; chunk * 8 < 2 * N; chunk++) image |= tables[s][chunk][key >> (8 * chunk) & 255];
        out[s] = image;
    }
}

static uint64_t child_canonical(const uint64_t *images, int bit) {
    uint64_t best = images[0] | moves[bit][0];
    for (int s = 1; s < S; s++) {
        uint64_t image = images[s] | moves[bit][s];
        if (image < best) best = image;
    }
    return best;
}

static int orbit(uint64_t key) {
    uint64_t images[8];
    int distinct = 0;
    images_of(key, images);
    for (int s = 0; s < S; s++) {
        int seen = 0;
        for (int t = 0; t < s; t++) seen |= images[t] == images[s];
        distinct += !seen;
    }
    return distinct;
}

static int has_line(uint64_t stones) {
    for (int i = 0; i < nlines; i++)
        if ((stones & lines[i]) == lines[i]) return 1;
    return 0;
}

static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n, int bits) {
    for (int shift = 0; shift < bits; shift += 11) {
        size_t count[2049] = {0};
        for (size_t i = 0; i < n; i++) count[(a[i] >> shift & 2047) + 1]++;
        for (int b = 0; b < 2048; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[a[i] >> shift & 2047]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

static int64_t find(const uint64_t *keys, size_t n, uint64_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < n && keys[lo] == key ? (int64_t)lo : -1;
}

static int move_score(int child) { return -child + (child > 0) - (child < 0); }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: solve ROWS COLS K\n"); return 2; }
    R = atoi(argv[1]); C = atoi(argv[2]); K = atoi(argv[3]); N = R * C;
    if (N > 31 || R < 1 || C < 1 || K < 1) { fprintf(stderr, "board too large\n"); return 2; }
    setup();
    uint64_t *keys[33]; size_t count[33]; int plies = 0;
    keys[0] = xmalloc(sizeof(uint64_t)); keys[0][0] = 0; count[0] = 1;
    uint64_t full = (1ULL << N) - 1;
    unsigned long long canonical = 0, reachable = 0;
    for (int ply = 0;; ply++) {
        plies = ply + 1;
        for (size_t i = 0; i < count[ply]; i++) reachable += orbit(keys[ply][i]);
        canonical += count[ply];
        if (ply == N) break;
        int empties = N - ply, shift = ply % 2 ? N : 0, last = ply % 2 ? 0 : N; /* last mover */
        size_t n = 0;
        uint64_t *children = xmalloc(count[ply] * empties * sizeof(uint64_t));
        for (size_t i = 0; i < count[ply]; i++) {
            uint64_t key = keys[ply][i], images[8];
            if (ply && has_line(key >> last & full)) continue;
            uint64_t occupied = (key | key >> N) & full;
            images_of(key, images);
            for (int cell = 0; cell < N; cell++)
                if (!(occupied >> cell & 1)) children[n++] = child_canonical(images, cell + shift);
        }
        if (n == 0) { free(children); break; }
        uint64_t *tmp = xmalloc(n * sizeof(uint64_t));
        radix_sort(children, tmp, n, 2 * N);
        free(tmp);
        size_t distinct = 0;
        for (size_t i = 0; i < n; i++)
            if (i == 0 || children[i] != children[distinct - 1]) children[distinct++] = children[i];
        keys[ply + 1] = children; count[ply + 1] = distinct;
    }
    int16_t *next = NULL;
    int start = 0;
    for (int ply = plies - 1; ply >= 0; ply--) {
        int16_t *scores = xmalloc(count[ply] * sizeof(int16_t));
        int shift = ply % 2 ? N : 0, last = ply % 2 ? 0 : N;
        for (size_t i = 0; i < count[ply]; i++) {
            uint64_t key = keys[ply][i], images[8];
            if (ply && has_line(key >> last & full)) { scores[i] = -WIN; continue; }
            if (ply == N) { scores[i] = 0; continue; }
            uint64_t occupied = (key | key >> N) & full;
            int top = -2 * WIN;
            images_of(key, images);
            for (int cell = 0; cell < N; cell++) {
                if (occupied >> cell & 1) continue;
                int64_t where = find(keys[ply + 1], count[ply + 1], child_canonical(images, cell + shift));
                if (where < 0) { fprintf(stderr, "missing child\n"); return 1; }
                int score = move_score(next[where]);
                if (score > top) top = score;
            }
            scores[i] = (int16_t)top;
        }
        free(next);
        if (ply + 1 < plies) free(keys[ply + 1]);
        next = scores;
        if (ply == 0) start = scores[0];
    }
    printf("%dx%d k=%d canonical %llu reachable %llu value %s\n", R, C, K, canonical, reachable,
           start > 0 ? "win" : start < 0 ? "loss" : "draw");
    return 0;
}

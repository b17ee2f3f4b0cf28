/* graph.h — the call graph of a (filtered, aggregated) work profile, as
 * pprof's internal/graph builds it: one node per distinct NodeInfo (name,
 * file, line, address, object file), flat and cumulative values, weighted
 * caller→callee edges (residual when they jump over dropped nodes, inline
 * when the callee was inlined), and pprof's trimming (nodefraction,
 * edgefraction, nodecount) and sort orders.
 *
 * Layout: arrays, not pointer graphs. The set of possible nodes is fixed by
 * the work profile, so it is computed once (graph_new); each rebuild with a
 * different kept set (trimming rebuilds up to three times) only re-adds the
 * sample values. Strings are the profile's interned indexes. */
#ifndef CPROF_TOOL_GRAPH_H
#define CPROF_TOOL_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tool/work.h"

typedef struct {
    int64_t name, orig_name, file, objfile; /* string indexes */
    uint64_t address;
    int64_t start_line, lineno;
} ninfo_t;

typedef struct {
    ninfo_t info;
    int64_t flat, flat_div, cum, cum_div;
    char *pname; /* printable name, computed on first use */
    uint32_t stamp;
    uint32_t in_start, in_n, out_start, out_n; /* into graph_t in_refs/out_refs */
} gnode_t;

typedef struct {
    uint32_t src, dst;
    int64_t weight, weight_div;
    bool residual, inl, removed;
    uint32_t stamp;
} gedge_t;

typedef struct {
    int value_index;   /* sample value shown */
    int mean_index;    /* divisor for -mean, or -1 */
    bool obj_names;    /* keep object file names (list, raw) */
    bool drop_negative;
} graph_opts_t;

typedef struct {
    work_t *w;
    graph_opts_t o;
    gnode_t *nodes; /* every possible node */
    size_t n_nodes, cap_nodes;
    uint32_t *node_slots; /* hash of ninfo -> node index + 1 */
    size_t node_mask;
    uint32_t *loc_first; /* per location: first entry in loc_nodes; n_locs+1 entries */
    uint32_t *loc_nodes; /* node index per line (or one per line-less location) */

    /* the current graph */
    uint32_t *sel; /* g.Nodes: node indexes, in sort order once sorted */
    size_t n_sel;
    gedge_t *edges;
    size_t n_edges, cap_edges;
    uint32_t *edge_slots;
    size_t edge_mask;
    uint32_t *in_refs, *out_refs; /* edge indexes grouped by node */
    uint32_t stamp;
} graph_t;

int graph_new(work_t *w, const graph_opts_t *o, graph_t **out);
void graph_free(graph_t *g);

/* Rebuilds values and edges from the samples, keeping only nodes with
 * kept[i] set (kept NULL: all). 0 or -ENOMEM. */
int graph_build(graph_t *g, const bool *kept);
/* pprof's FlatNameOrder (cum false) or CumNameOrder (cum true). */
void graph_sort(graph_t *g, bool cum);
/* pprof's AddressOrder / NameOrder / FileOrder on an index array. */
void graph_sort_nodes(graph_t *g, uint32_t *idx, size_t n, int order);
enum { GORDER_FLAT, GORDER_CUM, GORDER_NAME, GORDER_FILE, GORDER_ADDRESS };
/* Removes in-edges lighter than cutoff from the selected nodes; returns the
 * number removed. */
int graph_trim_edges(graph_t *g, int64_t cutoff);

typedef struct {
    double node_fraction, edge_fraction;
    int node_count;
    bool cum_sort;
} trim_opts_t;

typedef struct {
    int orig_count, dropped_nodes, dropped_edges;
} trim_result_t;

/* pprof's newTrimmedGraph (not the call_tree variant). */
int graph_trimmed(graph_t *g, const trim_opts_t *t, trim_result_t *r);

/* Printable name ("%016x name file:line" parts). NULL on OOM. */
const char *graph_node_name(graph_t *g, uint32_t node);
/* The live (not removed) in- or out-edges of a node, sorted as pprof's
 * EdgeMap.Sort (weight desc, then source, then destination names). The
 * array is malloc'd; *n receives the count. */
uint32_t *graph_edges_sorted(graph_t *g, uint32_t node, bool in, size_t *n);

int64_t graph_flat_value(const gnode_t *n);
int64_t graph_cum_value(const gnode_t *n);

/* filepath.Clean of a path (Go semantics), into a malloc'd string. */
char *graph_clean_path(const char *path);

#endif

/* graph.h — the call graph of a (filtered, aggregated) work profile, as
 * pprof's internal/graph builds it: one node per distinct NodeInfo (name,
 * file, line, address, object file) — or, as a call tree, one per distinct
 * path from a root to such a NodeInfo —, flat and cumulative values, weighted
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

#include "tool/graph/work.h"

typedef struct {
    /* string indexes: a profile of at most 1 GiB has fewer than 2^30 */
    int32_t name, orig_name, file, objfile;
    uint64_t address;
    int64_t start_line, lineno;
} ninfo_t;

/* 96 bytes in an array that starts on a cache line (graph.c's
 * grow_nodes): the 32 that graph_build adds to for each node of each
 * sample come first, in one line for every node. */
typedef struct {
    int64_t cum, cum_div, flat;
    uint32_t stamp;
    uint32_t in_n; /* in_start, in_n, out_start, out_n: into graph_t in_refs/out_refs */
    int64_t flat_div;
    ninfo_t info;
    uint32_t in_start, out_start, out_n;
    uint32_t pad_;
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
    bool call_tree; /* pprof's CallTree: a node per calling context */
    /* Tags (pprof's LabelTags/NumericTags, the nodelets of call graphs):
     * computed by graph_build when set. Numeric tags come from the "bytes"
     * labels only, named with measure_scaled_label(v, bytes_unit, tag_unit). */
    bool tags;
    const char *bytes_unit; /* unit of the "bytes" numeric labels */
    const char *tag_unit;   /* the report's configured output unit */
} graph_opts_t;

/* A tag of a node: a label tag (the sample's sorted "key:value" labels
 * joined by a literal \n) or a numeric tag ("bytes" value) in the group of
 * samples with those labels (group 0: no labels). */
typedef struct {
    uint32_t node;
    uint32_t group; /* tag string id of the joined labels; 0 = none */
    uint32_t name;  /* tag string id of the name (label tags: == group) */
    bool numeric;
    bool removed; /* graph_trim_tags */
    int64_t value; /* numeric tags: the label's value */
    int64_t flat, flat_div, cum, cum_div;
} gtag_t;

typedef struct {
    work_t *w;
    graph_opts_t o;
    gnode_t *nodes; /* every possible node; in nodes_mem, 64-byte aligned */
    size_t n_nodes, cap_nodes;
    void *nodes_mem;
    char **pnames; /* per node: printable name, computed on first use */
    size_t n_pnames;
    uint64_t *node_slots; /* hash of ninfo -> node index + 1, beside the hash's low half */
    size_t node_mask;
    uint32_t *loc_first; /* per location: first entry in loc_nodes; n_locs+1 entries */
    uint32_t *loc_nodes; /* node index per line (or one per line-less location) */
    /* call tree (o.call_tree): each sample's path of tree nodes, root first,
     * and whether the edge into each is inline. The tree nodes follow the
     * NodeInfo nodes (which then stay without values) in nodes[]. */
    uint32_t *s_path_first; /* per sample: first entry in s_path; n_samples+1 */
    uint32_t *s_path;
    bool *s_path_inl;

    /* the current graph */
    uint32_t *sel; /* g.Nodes: node indexes, in sort order once sorted */
    size_t n_sel;
    gedge_t *edges;
    size_t n_edges, cap_edges;
    uint32_t *edge_slots;
    size_t edge_mask;
    uint32_t *in_refs, *out_refs; /* edge indexes grouped by node */
    uint32_t stamp;

    /* tags (o.tags): of the current graph, and their strings */
    gtag_t *tags;
    size_t n_tags, cap_tags;
    uint32_t *tag_slots;
    size_t tag_mask;
    uint32_t *tag_first; /* per node: first entry in tag_refs; n_nodes+1 */
    uint32_t *tag_refs;  /* tag indexes grouped by node (after graph_build) */
    char **tstr;         /* tag strings; 0 = "" */
    size_t n_tstr, cap_tstr;
    uint32_t *tstr_slots;
    size_t tstr_mask;
    uint32_t *s_group;     /* per sample: joined-labels string id */
    uint32_t *s_num_first; /* per sample: first entry in s_num; n_samples+1 */
    uint32_t *s_num;       /* numeric tag name ids, (name, value index) pairs */
    int64_t *s_numv;       /* the values of s_num */
    int64_t *score;        /* per node, for GORDER_ENTROPY */
    bool nodes_only;       /* graph_build computes node values only, no
                            * edges or tags (a build that only picks
                            * nodes) */
    size_t part_edges;     /* edges a pass of a large visual graph's
                            * entropy order holds (graph_trimmed);
                            * 0: the default, 2M (tests make it small) */
    int64_t edge_floor;    /* graph_build leaves out the edges it can tell
                            * weigh less than this (|weight|), which
                            * trimming would remove; 0: none */
} graph_t;

int graph_new(work_t *w, const graph_opts_t *o, graph_t **out);
void graph_free(graph_t *g);

/* Rebuilds values and edges from the samples, keeping only nodes with
 * kept[i] set (kept NULL: all; a call tree keeps all, graph_trimmed trims
 * it). 0 or -ENOMEM. */
int graph_build(graph_t *g, const bool *kept);
/* pprof's FlatNameOrder (cum false) or CumNameOrder (cum true). */
void graph_sort(graph_t *g, bool cum);
/* pprof's AddressOrder / NameOrder / FileOrder on an index array. */
void graph_sort_nodes(graph_t *g, uint32_t *idx, size_t n, int order);
enum { GORDER_FLAT, GORDER_CUM, GORDER_NAME, GORDER_FILE, GORDER_ADDRESS, GORDER_ENTROPY };
/* pprof's EntropyOrder of the selected nodes (the visual sort). */
int graph_sort_entropy(graph_t *g);
/* Removes in-edges lighter than cutoff from the selected nodes; returns the
 * number removed. */
int graph_trim_edges(graph_t *g, int64_t cutoff);

typedef struct {
    double node_fraction, edge_fraction;
    int node_count;
    bool cum_sort;
    bool visual; /* pprof's visualMode (dot): entropy order, tags count as
                  * nodes, redundant residual edges removed */
} trim_opts_t;

typedef struct {
    int orig_count, dropped_nodes, dropped_edges;
} trim_result_t;

/* pprof's newTrimmedGraph. A call tree is built once and then trimmed as
 * pprof's TrimTree does (a dropped node's children move up to its parent
 * through residual edges, or become roots) instead of being rebuilt. A
 * visual graph with more than part_edges edges, trimmed to node_count, has
 * its entropy order computed in passes that each hold part of the edges:
 * the same order, in bounded memory. */
int graph_trimmed(graph_t *g, const trim_opts_t *t, trim_result_t *r);

/* pprof's TrimLowFrequencyTags: marks tags below cutoff (flat and cum)
 * removed. */
void graph_trim_tags(graph_t *g, int64_t cutoff);
/* pprof's RemoveRedundantEdges over the selected nodes, in their order. */
void graph_remove_redundant_edges(graph_t *g);
/* Sorts edge indexes as pprof's EdgeMap.Sort. */
void graph_sort_edges(graph_t *g, uint32_t *idx, size_t n);
/* A tag string ("" for 0). */
static inline const char *graph_tag_str(const graph_t *g, uint32_t id)
{
    return id < g->n_tstr && g->tstr[id] ? g->tstr[id] : "";
}

/* Printable name ("%016x name file:line" parts). NULL on OOM. */
const char *graph_node_name(graph_t *g, uint32_t node);
/* The live (not removed) in- or out-edges of a node, sorted as pprof's
 * EdgeMap.Sort (weight desc, then source, then destination names). The
 * array is malloc'd; *n receives the count. */
uint32_t *graph_edges_sorted(graph_t *g, uint32_t node, bool in, size_t *n);

int64_t graph_flat_value(const gnode_t *n);
int64_t graph_cum_value(const gnode_t *n);



#endif

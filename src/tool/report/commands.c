/* commands.c — the table of report commands (see commands.h). */
#include "tool/report/commands.h"

#include <string.h>

#include "tool/report/callgrind.h"
#include "tool/report/disasm.h"
#include "tool/report/dot.h"
#include "tool/report/flame.h"
#include "tool/report/report.h"
#include "tool/report/weblist.h"

/* proto, raw, callgrind: every node, at address granularity, inlines kept. */
#define ALL_ADDRESSES {.notrim = true, .granularity = "addresses", .noinlines = -1}

#define TOPUSE(c)                                                                             \
    c " [n] [focus_regex]* [-ignore_regex]* [-cum] >f\n"                                      \
      "Include up to n samples\n"                                                             \
      "Include samples matching focus_regex, and exclude ignore_regex.\n"                     \
      "-cum sorts the output by cumulative weight\n"                                          \
      "Optionally save the report on the file f"
#define GRAPHUSE(c)                                                                           \
    c " [n] [focus_regex]* [-ignore_regex]*\n"                                                \
      "Include up to n samples\n"                                                             \
      "Include samples matching focus_regex, and exclude ignore_regex."
#define LISTUSE(c)                                                                            \
    c "<func_regex|address> [-focus_regex]* [-ignore_regex]*\n"                               \
      "Include functions matching func_regex, or including the address specified.\n"          \
      "Include samples matching focus_regex, and exclude ignore_regex."

/* One row per command, alphabetical; see commands.h for adding one. */
static const command_t cmds[] = {
    {.name = "callgrind",
     .format = FMT_CALLGRIND,
     .binary = true,
     .description = "Outputs a graph in callgrind format",
     .usage = GRAPHUSE("callgrind"),
     .defaults = ALL_ADDRESSES,
     .dot = {"callgraph.out", false, NULL},
     .render = report_callgrind},
    {.name = "comments",
     .format = FMT_COMMENTS,
     .description = "Output all profile comments",
     .render = report_comments},
    {.name = "disasm",
     .format = FMT_DIS,
     .has_param = true,
     .description = "Output assembly listings annotated with samples",
     .usage = LISTUSE("disasm"),
     .defaults = {.notrim = true, .granularity = "addresses", .noinlines = 1},
     .render = report_disasm},
    {.name = "dot",
     .format = FMT_DOT,
     .graph = true,
     .description = "Outputs a graph in DOT format",
     .usage = GRAPHUSE("dot"),
     .dot = {"dot", false, NULL},
     .render = report_graph},
    {.name = "eog",
     .format = FMT_DOT,
     .graph = true,
     .description = "Visualize graph through eog",
     .usage = GRAPHUSE("eog"),
     .dot = {"svg", false, "eog"},
     .render = report_graph},
    {.name = "evince",
     .format = FMT_DOT,
     .graph = true,
     .description = "Visualize graph through evince",
     .usage = GRAPHUSE("evince"),
     .dot = {"pdf", false, "evince"},
     .render = report_graph},
    {.name = "flame",
     .format = FMT_FLAME,
     .has_param = true, .param_is_file = true,
     .description = "Outputs an interactive flame graph page (HTML): -flame FILE",
     .usage = "flame [focus_regex]* [-ignore_regex]* [>f]\n"
      "Writes an interactive flame graph page and opens it in a web browser\n"
      "(or saves it in the file f). On the command line: -flame FILE.\n"
      "Include samples matching focus_regex, and exclude ignore_regex.",
     .render = flame_html},
    {.name = "folded",
     .format = FMT_FOLDED,
     .description = "Outputs folded stacks (one 'root;...;leaf value' line per stack)",
     .usage = "folded [focus_regex]* [-ignore_regex]* [>f]\n"
      "Brendan Gregg's folded stack format, for flamegraph.pl and friends.\n"
      "Include samples matching focus_regex, and exclude ignore_regex.",
     .render = flame_folded},
    {.name = "gif",
     .format = FMT_DOT,
     .binary = true, .graph = true,
     .description = "Outputs a graph image in GIF format",
     .usage = GRAPHUSE("gif"),
     .dot = {"gif", false, NULL},
     .render = report_graph},
    {.name = "gv",
     .format = FMT_DOT,
     .graph = true,
     .description = "Visualize graph through gv",
     .usage = GRAPHUSE("gv"),
     .dot = {"ps", false, "gv --noantialias"},
     .render = report_graph},
    {.name = "kcachegrind",
     .format = FMT_CALLGRIND,
     .description = "Visualize report in KCachegrind",
     .usage = GRAPHUSE("kcachegrind"),
     .defaults = ALL_ADDRESSES,
     .dot = {"grind", false, "kcachegrind"},
     .render = report_callgrind},
    {.name = "list",
     .format = FMT_LIST,
     .has_param = true, .graph = true,
     .description = "Output annotated source for functions matching regexp",
     .usage = LISTUSE("list"),
     .defaults = {.notrim = true, .granularity = "lines"},
     .render = report_list},
    {.name = "pdf",
     .format = FMT_DOT,
     .binary = true, .graph = true,
     .description = "Outputs a graph in PDF format",
     .usage = GRAPHUSE("pdf"),
     .dot = {"pdf", false, NULL},
     .render = report_graph},
    {.name = "peek",
     .format = FMT_TREE,
     .has_param = true, .graph = true,
     .description = "Output callers/callees of functions matching regexp",
     .usage = "peek func_regex\nDisplay callers and callees of functions matching func_regex.",
     .defaults = {.notrim = true},
     .render = report_tree},
    {.name = "png",
     .format = FMT_DOT,
     .binary = true, .graph = true,
     .description = "Outputs a graph image in PNG format",
     .usage = GRAPHUSE("png"),
     .dot = {"png", false, NULL},
     .render = report_graph},
    {.name = "proto",
     .format = FMT_PROTO,
     .binary = true,
     .description = "Outputs the profile in compressed protobuf format",
     .defaults = ALL_ADDRESSES,
     .render = report_proto},
    {.name = "ps",
     .format = FMT_DOT,
     .binary = true, .graph = true,
     .description = "Outputs a graph in PS format",
     .usage = GRAPHUSE("ps"),
     .dot = {"ps", false, NULL},
     .render = report_graph},
    {.name = "raw",
     .format = FMT_RAW,
     .description = "Outputs a text representation of the raw profile",
     .defaults = ALL_ADDRESSES,
     .render = report_raw},
    {.name = "svg",
     .format = FMT_DOT,
     .binary = true, .graph = true,
     .description = "Outputs a graph in SVG format",
     .usage = GRAPHUSE("svg"),
     .dot = {"svg", true, NULL},
     .render = report_graph},
    {.name = "tags",
     .format = FMT_TAGS,
     .description = "Outputs all tags in the profile",
     .usage = "tags [tag_regex]* [-ignore_regex]* [>file]\n"
      "List tags with key:value matching tag_regex and exclude ignore_regex.",
     .render = report_tags},
    {.name = "text",
     .format = FMT_TEXT,
     .graph = true,
     .description = "Outputs top entries in text form",
     .usage = TOPUSE("text"),
     .defaults = {.all_nodes = true},
     .render = report_text},
    {.name = "top",
     .format = FMT_TEXT,
     .graph = true,
     .description = "Outputs top entries in text form",
     .usage = TOPUSE("top"),
     .defaults = {.all_nodes = true},
     .render = report_text},
    {.name = "topproto",
     .format = FMT_TOPPROTO,
     .binary = true, .graph = true,
     .description = "Outputs top entries in compressed protobuf format",
     .defaults = {.all_nodes = true},
     .render = report_topproto},
    {.name = "traces",
     .format = FMT_TRACES,
     .description = "Outputs all profile samples in text form",
     .render = report_traces},
    {.name = "tree",
     .format = FMT_TREE,
     .graph = true,
     .description = "Outputs a text rendering of call graph",
     .usage = TOPUSE("tree"),
     .render = report_tree},
    {.name = "web",
     .format = FMT_DOT,
     .graph = true,
     .description = "Visualize graph through web browser",
     .usage = GRAPHUSE("web"),
     .dot = {"svg", true, "browser"},
     .render = report_graph},
    {.name = "weblist",
     .format = FMT_WEBLIST,
     .has_param = true,
     .description = "Display annotated source in a web browser",
     .usage = LISTUSE("weblist"),
     /* one node per address, as disasm: weblist.c puts each instruction
      * on its function's line itself */
     .defaults = {.notrim = true, .granularity = "addresses", .noinlines = 1},
     .dot = {"html", false, "browser"},
     .render = report_weblist},
};

const command_t *commands_all(int *n)
{
    *n = (int)(sizeof(cmds) / sizeof(cmds[0]));
    return cmds;
}

const command_t *command_find(const char *name)
{
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

void command_apply_defaults(const command_t *cmd, config_t *c)
{
    const command_defaults_t *d = &cmd->defaults;
    if (d->granularity)
        config_set_str(&c->granularity, d->granularity);
    if (d->noinlines)
        c->noinlines = d->noinlines > 0;
    if (d->notrim || !c->trim) {
        c->nodecount = 0;
        c->nodefraction = 0;
        c->edgefraction = 0;
    } else if (c->nodecount == -1) {
        c->nodecount = d->all_nodes ? 0 : 80;
    }
}

/* commands.c — the table of report commands. */
#include "tool/commands.h"

#include <string.h>

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

static const command_t cmds[] = {
    {"callgrind", FMT_CALLGRIND, false, true, true, "Outputs a graph in callgrind format",
     GRAPHUSE("callgrind")},
    {"comments", FMT_COMMENTS, false, true, false, "Output all profile comments", NULL},
    {"disasm", FMT_DIS, true, true, false, "Output assembly listings annotated with samples",
     LISTUSE("disasm")},
    {"dot", FMT_DOT, false, true, false, "Outputs a graph in DOT format", GRAPHUSE("dot")},
    {"eog", FMT_DOT, false, true, false, "Visualize graph through eog", GRAPHUSE("eog")},
    {"evince", FMT_DOT, false, true, false, "Visualize graph through evince",
     GRAPHUSE("evince")},
    {"flame", FMT_FLAME, true, true, false,
     "Outputs an interactive flame graph page (HTML): -flame FILE",
     "flame [focus_regex]* [-ignore_regex]* [>f]\n"
     "Writes an interactive flame graph page and opens it in a web browser\n"
     "(or saves it in the file f). On the command line: -flame FILE.\n"
     "Include samples matching focus_regex, and exclude ignore_regex."},
    {"folded", FMT_FOLDED, false, true, false,
     "Outputs folded stacks (one 'root;...;leaf value' line per stack)",
     "folded [focus_regex]* [-ignore_regex]* [>f]\n"
     "Brendan Gregg's folded stack format, for flamegraph.pl and friends.\n"
     "Include samples matching focus_regex, and exclude ignore_regex."},
    {"gif", FMT_DOT, false, true, true, "Outputs a graph image in GIF format",
     GRAPHUSE("gif")},
    {"gv", FMT_DOT, false, true, false, "Visualize graph through gv", GRAPHUSE("gv")},
    {"kcachegrind", FMT_CALLGRIND, false, true, false, "Visualize report in KCachegrind",
     GRAPHUSE("kcachegrind")},
    {"list", FMT_LIST, true, true, false, "Output annotated source for functions matching regexp",
     LISTUSE("list")},
    {"pdf", FMT_DOT, false, true, true, "Outputs a graph in PDF format", GRAPHUSE("pdf")},
    {"peek", FMT_TREE, true, true, false, "Output callers/callees of functions matching regexp",
     "peek func_regex\nDisplay callers and callees of functions matching func_regex."},
    {"png", FMT_DOT, false, true, true, "Outputs a graph image in PNG format",
     GRAPHUSE("png")},
    {"proto", FMT_PROTO, false, true, true, "Outputs the profile in compressed protobuf format",
     NULL},
    {"ps", FMT_DOT, false, true, true, "Outputs a graph in PS format", GRAPHUSE("ps")},
    {"raw", FMT_RAW, false, true, false, "Outputs a text representation of the raw profile",
     NULL},
    {"svg", FMT_DOT, false, true, true, "Outputs a graph in SVG format", GRAPHUSE("svg")},
    {"tags", FMT_TAGS, false, true, false, "Outputs all tags in the profile",
     "tags [tag_regex]* [-ignore_regex]* [>file]\n"
     "List tags with key:value matching tag_regex and exclude ignore_regex."},
    {"text", FMT_TEXT, false, true, false, "Outputs top entries in text form", TOPUSE("text")},
    {"top", FMT_TEXT, false, true, false, "Outputs top entries in text form", TOPUSE("top")},
    {"topproto", FMT_TOPPROTO, false, true, true,
     "Outputs top entries in compressed protobuf format", NULL},
    {"traces", FMT_TRACES, false, true, false, "Outputs all profile samples in text form", NULL},
    {"tree", FMT_TREE, false, true, false, "Outputs a text rendering of call graph",
     TOPUSE("tree")},
    {"web", FMT_DOT, false, true, false, "Visualize graph through web browser",
     GRAPHUSE("web")},
    {"weblist", FMT_WEBLIST, true, true, false, "Display annotated source in a web browser",
     LISTUSE("weblist")},
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

/* disasm.h — annotated assembly (pprof's -disasm, PrintAssembly): the
 * functions of the profile's object files that match the report's symbol
 * regexp, disassembled by binutils' objdump exactly as google/pprof runs it
 * (nm -n for symbols, objdump --disassemble --demangle --no-show-raw-insn
 * --line-numbers over [start, end)), with each instruction's flat and cum.
 *
 * Addresses: samples hold process addresses; each is turned into a file
 * address through its own mapping (elfobj_bias: the PT_LOAD segment that
 * holds the mapping's file offset), so PIE executables and shared
 * libraries work; a stripped object takes its symbols from its separate
 * debug file. Reports run in the driver's thread; objdump and nm are child
 * processes. */
#ifndef CPROF_TOOL_DISASM_H
#define CPROF_TOOL_DISASM_H

#include <stdint.h>

#include "tool/graph/graph.h"
#include "tool/report/report.h"

typedef struct {
    uint64_t addr; /* file address */
    char *text;    /* objdump's instruction text */
    char *function, *file; /* objdump's function and source file */
    int64_t line;
    int64_t flat, flat_div, cum, cum_div;
} disasm_inst_t;

typedef struct {
    char **names; /* names[0] is shown; others are aliases (AKA) */
    size_t n_names;
    uint64_t start, end; /* file addresses, pprof's [Start, End) */
    const char *path;    /* the object file (a string of the profile) */
    const profile_mapping_t *mapping; /* where the process had it */
    uint64_t bias;       /* process address = file address + bias */
    int64_t flat, cum;   /* sums over the symbol's nodes */
    disasm_inst_t *insts;
    size_t n_insts;
} disasm_sym_t;

/* The matching symbols with samples, in pprof's order, disassembled and
 * annotated with the nodes of the report's graph at address granularity.
 * 0 or a negative errno with a message in err ("no matches found for
 * regexp: X"). */
int disasm_symbols(report_t *r, disasm_sym_t **out, size_t *n, char *err, size_t errlen);
void disasm_free(disasm_sym_t *s, size_t n);

/* pprof's value of an instruction (its divisors applied). */
int64_t disasm_flat(const disasm_inst_t *i);
int64_t disasm_cum(const disasm_inst_t *i);

/* The -disasm report. */
int report_disasm(report_t *r, char *err, size_t errlen);

#endif

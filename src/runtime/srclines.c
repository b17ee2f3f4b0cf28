/* srclines.c — file and line of code addresses through libdw, loaded with
 * dlopen (see srclines.h). */
#include "srclines.h"

#include <stdio.h>
#include <stdlib.h>

/* The musl build has no elfutils headers: no lines there. */
#if __has_include(<elfutils/libdwfl.h>)
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

/* What we use of libdw, found with dlsym. */
static struct {
    bool tried, ok;
    Dwfl *(*begin)(const Dwfl_Callbacks *);
    int (*proc_report)(Dwfl *, pid_t);
    int (*report_end)(Dwfl *, int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *),
                      void *);
    Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr);
    Dwfl_Line *(*getsrc)(Dwfl_Module *, Dwarf_Addr);
    const char *(*lineinfo)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *, Dwarf_Word *);
    const char *(*comp_dir)(Dwfl_Line *);
    void (*end)(Dwfl *);
    int (*find_elf)(Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **);
} dw;

struct srclines {
    Dwfl *dwfl;
    char path[4096]; /* the last file found, made absolute */
};

/* Only the DWARF inside each object: no debug file is searched for (and
 * so no debuginfod server asked), from inside the program. */
static int no_debuginfo(Dwfl_Module *m, void **u, const char *name, Dwarf_Addr base,
                        const char *file, const char *debuglink, GElf_Word crc, char **path)
{
    (void)m, (void)u, (void)name, (void)base, (void)file, (void)debuglink, (void)crc;
    *path = NULL;
    return -1;
}

static bool load(void)
{
    if (dw.tried)
        return dw.ok;
    dw.tried = true;
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return false;
    *(void **)&dw.begin = dlsym(h, "dwfl_begin");
    *(void **)&dw.proc_report = dlsym(h, "dwfl_linux_proc_report");
    *(void **)&dw.report_end = dlsym(h, "dwfl_report_end");
    *(void **)&dw.addrmodule = dlsym(h, "dwfl_addrmodule");
    *(void **)&dw.getsrc = dlsym(h, "dwfl_module_getsrc");
    *(void **)&dw.lineinfo = dlsym(h, "dwfl_lineinfo");
    *(void **)&dw.end = dlsym(h, "dwfl_end");
    *(void **)&dw.comp_dir = dlsym(h, "dwfl_line_comp_dir");
    *(void **)&dw.find_elf = dlsym(h, "dwfl_linux_proc_find_elf");
    dw.ok = dw.begin && dw.proc_report && dw.report_end && dw.addrmodule && dw.getsrc &&
            dw.lineinfo && dw.end && dw.find_elf && dw.comp_dir;
    return dw.ok; /* the library stays loaded for the next trace */
}

srclines_t *srclines_open(void)
{
    if (!load())
        return NULL;
    static Dwfl_Callbacks cb; /* read by libdw while the Dwfl lives */
    cb.find_elf = dw.find_elf;
    cb.find_debuginfo = no_debuginfo;
    srclines_t *s = calloc(1, sizeof(*s));
    if (!s || !(s->dwfl = dw.begin(&cb))) {
        free(s);
        return NULL;
    }
    if (dw.proc_report(s->dwfl, getpid()) != 0 || dw.report_end(s->dwfl, NULL, NULL) != 0) {
        srclines_close(s);
        return NULL;
    }
    return s;
}

bool srclines_lookup(srclines_t *s, uintptr_t pc, const char **file, int *line)
{
    if (!s)
        return false;
    Dwfl_Module *m = dw.addrmodule(s->dwfl, pc);
    Dwfl_Line *l = m ? dw.getsrc(m, pc) : NULL;
    Dwarf_Addr addr;
    const char *f = l ? dw.lineinfo(l, &addr, line, NULL, NULL, NULL) : NULL;
    if (!f || *line <= 0)
        return false;
    /* A name relative to its compilation's directory (gcc -c dir/x.c):
     * absolute, so that the file opens from anywhere. */
    const char *dir = f[0] != '/' ? dw.comp_dir(l) : NULL;
    if (dir && dir[0] == '/' &&
        (size_t)snprintf(s->path, sizeof(s->path), "%s/%s", dir, f) < sizeof(s->path))
        f = s->path;
    *file = f;
    return true;
}

void srclines_close(srclines_t *s)
{
    if (!s)
        return;
    if (s->dwfl)
        dw.end(s->dwfl);
    free(s);
}

#else

srclines_t *srclines_open(void)
{
    return NULL;
}

bool srclines_lookup(srclines_t *s, uintptr_t pc, const char **file, int *line)
{
    (void)s, (void)pc, (void)file, (void)line;
    return false;
}

void srclines_close(srclines_t *s)
{
    (void)s;
}

#endif
